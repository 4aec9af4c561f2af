// PcapLibrary: libpcap, loaded when a capture is opened rather than when the program starts.
//
// libpcap pulls in D-Bus, systemd, gcrypt, lzma, zstd, lz4 and libcap (Debian's build):
// linked into `ukai`, their loading and relocation took about 1 ms and 1.4 MB of resident
// memory at every start (docs/booksim.md, "Speed"), although only the gateway NIC's
// nic.ingress_pcap / nic.egress_pcap read or write captures. Each PcapLibrary opens the
// library (dlopen of the soname the build found, UKAI_PCAP_SONAME; the loader counts the
// references, so a second one costs a lookup) and closes it when destroyed; the types and
// constants still come from <pcap/pcap.h>.
//
// Ownership: a PcapLibrary outlives every pcap_t it opened (its owner keeps both).
// Thread safety: the function pointers may be called as libpcap allows; Load() may run on
// any thread.
#ifndef UKAI_SIM_NIC_PCAP_LIBRARY_H_
#define UKAI_SIM_NIC_PCAP_LIBRARY_H_

#include <pcap/pcap.h>

#include <memory>

#include "core/shared_library.h"
#include "core/status.h"

namespace ukai::sim {

class PcapLibrary {
 public:
  // Opens libpcap; an error naming the library and dlerror()'s reason when it is missing or
  // lacks one of the functions below. `key`: the config key whose file needs it.
  static Result<std::unique_ptr<PcapLibrary>> Load(const char* key);
  PcapLibrary(const PcapLibrary&) = delete;
  PcapLibrary& operator=(const PcapLibrary&) = delete;

  decltype(&::pcap_fopen_offline_with_tstamp_precision) fopen_offline = nullptr;
  decltype(&::pcap_open_dead_with_tstamp_precision) open_dead = nullptr;
  decltype(&::pcap_next_ex) next_ex = nullptr;
  decltype(&::pcap_geterr) geterr = nullptr;
  decltype(&::pcap_datalink) datalink = nullptr;
  decltype(&::pcap_datalink_val_to_name) datalink_val_to_name = nullptr;
  decltype(&::pcap_close) close = nullptr;
  decltype(&::pcap_dump_open) dump_open = nullptr;
  decltype(&::pcap_dump) dump = nullptr;
  decltype(&::pcap_dump_close) dump_close = nullptr;

 private:
  PcapLibrary() = default;
  std::unique_ptr<SharedLibrary> library_;  // closed when the PcapLibrary is destroyed
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_PCAP_LIBRARY_H_
