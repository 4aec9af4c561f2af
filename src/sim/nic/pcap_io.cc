#include "sim/nic/pcap_io.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "sim/nic/frame_source.h"
#include "sim/nic/pcap_library.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {
namespace {

constexpr int kSnapLen = 65535;
// The capture is read through stdio buffers of this size (libpcap reads with fread; the
// default 4 KiB buffer meant one read system call per three 1500-byte frames).
constexpr size_t kReadBufferBytes = size_t{256} << 10;

int64_t Nanos(const struct pcap_pkthdr* h) {
  return static_cast<int64_t>(h->ts.tv_sec) * 1000000000 + static_cast<int64_t>(h->ts.tv_usec);
}

class PcapSource final : public FrameSource {
 public:
  PcapSource(std::unique_ptr<PcapLibrary> lib, pcap_t* p, std::string path, double cps, bool fcs)
      : lib_(std::move(lib)), pcap_(p), path_(std::move(path)), cps_(cps), fcs_(fcs) {}
  ~PcapSource() override { lib_->close(pcap_); }

  Result<bool> Next(IngressFrame* out) override {
    struct pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    const int rc = lib_->next_ex(pcap_, &h, &data);
    if (rc == PCAP_ERROR_BREAK) return false;  // end of the file
    auto where = [&] { return "nic.ingress_pcap: " + path_ + ": frame " + std::to_string(n_); };
    ++n_;
    if (rc != 1) return Status::ParseError(where() + ": " + lib_->geterr(pcap_));
    if (h->caplen < h->len) {
      return Status::ParseError(where() + ": only " + std::to_string(h->caplen) + " of its " +
                                std::to_string(h->len) +
                                " bytes were captured (snap length): a partial frame cannot "
                                "be forwarded");
    }
    const size_t max = wire::kMaxFrameBytes + (fcs_ ? 4 : 0);
    if (h->caplen > max) {
      return Status::ParseError(where() + ": " + std::to_string(h->caplen) +
                                " bytes, longer than the largest frame (" + std::to_string(max) +
                                ")");
    }
    const int64_t t = Nanos(h);
    if (n_ == 1) first_ = t;
    if (t < last_) {
      return Status::ParseError(where() + ": its timestamp lies before the previous frame's");
    }
    last_ = t;
    out->cycle = static_cast<int64_t>(std::floor(static_cast<double>(t - first_) * 1e-9 * cps_));
    out->bytes.assign(data, data + h->caplen);
    out->has_fcs = fcs_;
    return true;
  }

 private:
  std::unique_ptr<PcapLibrary> lib_;
  pcap_t* pcap_;
  std::string path_;
  double cps_;
  bool fcs_;
  int64_t n_ = 0, first_ = 0, last_ = INT64_MIN;
};

class PcapSink final : public FrameSink {
 public:
  PcapSink(std::unique_ptr<PcapLibrary> lib, pcap_t* p, pcap_dumper_t* d, double cps)
      : lib_(std::move(lib)), pcap_(p), dumper_(d), cps_(cps) {}
  ~PcapSink() override {
    lib_->dump_close(dumper_);
    lib_->close(pcap_);
  }
  Status Write(int64_t cycle, std::span<const uint8_t> frame) override {
    struct pcap_pkthdr h = {};
    const int64_t ns = static_cast<int64_t>(static_cast<double>(cycle) / cps_ * 1e9);
    h.ts.tv_sec = static_cast<time_t>(ns / 1000000000);
    h.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000);
    h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
    lib_->dump(reinterpret_cast<u_char*>(dumper_), &h, frame.data());
    return Status::Ok();
  }

 private:
  std::unique_ptr<PcapLibrary> lib_;
  pcap_t* pcap_;
  pcap_dumper_t* dumper_;
  double cps_;
};

}  // namespace

Result<std::unique_ptr<FrameSource>> OpenPcapSource(const std::string& path,
                                                    double cycles_per_second, bool has_fcs) {
  Result<std::unique_ptr<PcapLibrary>> loaded = PcapLibrary::Load("nic.ingress_pcap");
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<PcapLibrary> lib = std::move(loaded).value();
  char err[PCAP_ERRBUF_SIZE] = {};
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::IoError("nic.ingress_pcap: " + path + ": " + std::strerror(errno))
        .WithKey("nic.ingress_pcap");
  }
  std::setvbuf(file, nullptr, _IOFBF, kReadBufferBytes);
  // On success the pcap_t owns `file` (pcap_close() closes it).
  pcap_t* p = lib->fopen_offline(file, PCAP_TSTAMP_PRECISION_NANO, err);
  if (p == nullptr) {
    std::fclose(file);
    return Status::IoError("nic.ingress_pcap: " + path + ": " + err).WithKey("nic.ingress_pcap");
  }
  if (lib->datalink(p) != DLT_EN10MB) {
    const char* known = lib->datalink_val_to_name(lib->datalink(p));
    const std::string name = known != nullptr ? known : std::to_string(lib->datalink(p));
    lib->close(p);
    return Status::ParseError("nic.ingress_pcap: " + path + ": link type " + name +
                              ", not Ethernet (EN10MB)")
        .WithKey("nic.ingress_pcap");
  }
  return std::unique_ptr<FrameSource>(
      new PcapSource(std::move(lib), p, path, cycles_per_second, has_fcs));
}

Result<std::unique_ptr<FrameSink>> OpenPcapSink(const std::string& path, double cycles_per_second) {
  Result<std::unique_ptr<PcapLibrary>> loaded = PcapLibrary::Load("nic.egress_pcap");
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<PcapLibrary> lib = std::move(loaded).value();
  pcap_t* p = lib->open_dead(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (p == nullptr) return Status::Internal("pcap_open_dead failed");
  pcap_dumper_t* d = lib->dump_open(p, path.c_str());
  if (d == nullptr) {
    const std::string err = lib->geterr(p);
    lib->close(p);
    return Status::IoError("nic.egress_pcap: " + path + ": " + err).WithKey("nic.egress_pcap");
  }
  return std::unique_ptr<FrameSink>(new PcapSink(std::move(lib), p, d, cycles_per_second));
}

Status WriteSyntheticPcap(const std::string& path, const std::vector<Mac>& dst_macs, int64_t frames,
                          int frame_bytes, double rate, bool with_fcs, double bad_fcs,
                          double cycles_per_second, uint64_t seed) {
  Result<std::unique_ptr<FrameSink>> sink = OpenPcapSink(path, cycles_per_second);
  if (!sink.ok()) return sink.status();
  std::unique_ptr<FrameSource> src =
      MakeSyntheticSource(dst_macs, frames, rate, frame_bytes, bad_fcs, seed);
  IngressFrame f;
  while (true) {
    Result<bool> got = src->Next(&f);
    if (!got.ok()) return got.status();
    if (!*got) break;
    // Without the FCS: its 4 bytes off the end (every synthetic frame has them).
    if (!with_fcs && f.bytes.size() >= 4) f.bytes.resize(f.bytes.size() - 4);
    UKAI_RETURN_IF_ERROR((*sink)->Write(f.cycle, f.bytes));
  }
  return Status::Ok();
}

}  // namespace ukai::sim
