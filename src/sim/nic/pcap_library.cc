#include "sim/nic/pcap_library.h"

#include <dlfcn.h>

#include <string>

#ifndef UKAI_PCAP_SONAME
#error "UKAI_PCAP_SONAME (libpcap's soname) is set by src/sim/CMakeLists.txt"
#endif

namespace ukai::sim {

Result<std::unique_ptr<PcapLibrary>> PcapLibrary::Load(const char* key) {
  Result<std::unique_ptr<SharedLibrary>> so =
      SharedLibrary::Open(UKAI_PCAP_SONAME, RTLD_NOW | RTLD_LOCAL, "libpcap");
  if (!so.ok())
    return Status::IoError(std::string(key) + ": " + so.status().message()).WithKey(key);
  std::unique_ptr<PcapLibrary> lib(new PcapLibrary());
  SharedLibrary& l = **so;
  l.Bind(&lib->fopen_offline, "pcap_fopen_offline_with_tstamp_precision");
  l.Bind(&lib->open_dead, "pcap_open_dead_with_tstamp_precision");
  l.Bind(&lib->next_ex, "pcap_next_ex");
  l.Bind(&lib->geterr, "pcap_geterr");
  l.Bind(&lib->datalink, "pcap_datalink");
  l.Bind(&lib->datalink_val_to_name, "pcap_datalink_val_to_name");
  l.Bind(&lib->close, "pcap_close");
  l.Bind(&lib->dump_open, "pcap_dump_open");
  l.Bind(&lib->dump, "pcap_dump");
  l.Bind(&lib->dump_close, "pcap_dump_close");
  if (Status st = l.Missing(); !st.ok()) {
    return Status::IoError(std::string(key) + ": " + st.message()).WithKey(key);
  }
  lib->library_ = std::move(*so);
  return lib;
}

}  // namespace ukai::sim
