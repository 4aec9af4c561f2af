// A netrace v1.0 trace writer for tests and benchmarks (the format: sim/workload/
// netrace_format.h): builds the decompressed bytes of a trace, compresses them with libbz2,
// and streams long traces to a file without holding them in memory. Fields can be set to
// wrong values on purpose (magic, version, node count, packet counts) to test the reader's
// errors.
#ifndef UKAI_TESTS_SIM_WORKLOAD_NETRACE_WRITER_H_
#define UKAI_TESTS_SIM_WORKLOAD_NETRACE_WRITER_H_

#include <bzlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim/workload/netrace_format.h"

namespace ukai::testing {

struct TracePacket {
  uint64_t cycle = 0;
  uint32_t id = 0;
  uint8_t type = 1;  // ReadReq (8 bytes)
  uint8_t src = 0, dst = 1;
  std::vector<uint32_t> deps;  // ids of later packets that wait for this one
};

struct TraceHeader {
  uint32_t magic = sim::kNetraceMagic;
  float version = 1.0f;
  std::string benchmark = "ukai test trace";
  int nodes = 64;
  uint64_t cycles = 0;   // 0: the last packet's cycle
  int64_t packets = -1;  // -1: the number of packets written
  std::string notes = "written by tests/sim/workload/netrace_writer.h";
  std::vector<sim::NetraceRegion> regions;  // empty: one region over the whole trace
};

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

inline std::string PacketBytes(const TracePacket& p) {
  std::string out;
  Put<uint64_t>(&out, p.cycle);
  Put<uint32_t>(&out, p.id);
  Put<uint32_t>(&out, 0x1000 + p.id * 64);  // address
  Put<uint8_t>(&out, p.type);
  Put<uint8_t>(&out, p.src);
  Put<uint8_t>(&out, p.dst);
  Put<uint8_t>(&out, 0x02);  // node types: L1D -> L2
  Put<uint8_t>(&out, static_cast<uint8_t>(p.deps.size()));
  for (uint32_t d : p.deps) Put<uint32_t>(&out, d);
  return out;
}

// Header bytes; `packet_count` and `last_cycle` fill the defaults.
inline std::string HeaderBytes(TraceHeader h, uint64_t packet_count, uint64_t last_cycle) {
  if (h.regions.empty()) h.regions.push_back({0, last_cycle, packet_count});
  std::string out;
  Put<uint32_t>(&out, h.magic);
  Put<float>(&out, h.version);
  char name[30] = {};
  std::strncpy(name, h.benchmark.c_str(), sizeof(name) - 1);
  out.append(name, sizeof(name));
  Put<uint8_t>(&out, static_cast<uint8_t>(h.nodes));
  Put<uint8_t>(&out, 0);
  Put<uint64_t>(&out, h.cycles ? h.cycles : last_cycle);
  Put<uint64_t>(&out, h.packets >= 0 ? static_cast<uint64_t>(h.packets) : packet_count);
  Put<uint32_t>(&out, static_cast<uint32_t>(h.notes.size() + 1));
  Put<uint32_t>(&out, static_cast<uint32_t>(h.regions.size()));
  out.append(8, '\0');
  out.append(h.notes);
  out.push_back('\0');
  for (const sim::NetraceRegion& r : h.regions) {
    Put<uint64_t>(&out, r.seek_offset);
    Put<uint64_t>(&out, r.cycles);
    Put<uint64_t>(&out, r.packets);
  }
  return out;
}

// The decompressed trace.
inline std::string TraceBytes(const TraceHeader& h, const std::vector<TracePacket>& packets) {
  std::string body;
  for (const TracePacket& p : packets) body += PacketBytes(p);
  return HeaderBytes(h, packets.size(), packets.empty() ? 0 : packets.back().cycle) + body;
}

inline std::string Bz2Compress(const std::string& raw) {
  unsigned int size = static_cast<unsigned int>(raw.size() + raw.size() / 100 + 600);
  std::string out(size, '\0');
  if (BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(raw.data()),
                               static_cast<unsigned int>(raw.size()), 9, 0, 0) != BZ_OK) {
    return {};
  }
  out.resize(size);
  return out;
}

inline bool WriteFile(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

inline bool WriteTrace(const std::string& path, const TraceHeader& h,
                       const std::vector<TracePacket>& packets) {
  return WriteFile(path, Bz2Compress(TraceBytes(h, packets)));
}

// Streams a long trace to a file: the header first (its counts given up front), then the
// packets one by one, compressed as they come.
class StreamingTraceWriter {
 public:
  StreamingTraceWriter(const std::string& path, const TraceHeader& h, uint64_t packets,
                       uint64_t last_cycle) {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) return;
    int err = BZ_OK;
    bz_ = BZ2_bzWriteOpen(&err, file_, 9, 0, 0);
    if (err != BZ_OK) bz_ = nullptr;
    Write(HeaderBytes(h, packets, last_cycle));
  }
  void Add(const TracePacket& p) { Write(PacketBytes(p)); }
  bool Close() {
    int err = BZ_OK;
    if (bz_ != nullptr) BZ2_bzWriteClose(&err, bz_, 0, nullptr, nullptr);
    bz_ = nullptr;
    const bool ok = file_ != nullptr && std::fclose(file_) == 0 && ok_ && err == BZ_OK;
    file_ = nullptr;
    return ok;
  }
  ~StreamingTraceWriter() { Close(); }

 private:
  void Write(const std::string& bytes) {
    int err = BZ_OK;
    if (bz_ == nullptr) {
      ok_ = false;
      return;
    }
    BZ2_bzWrite(&err, bz_, const_cast<char*>(bytes.data()), static_cast<int>(bytes.size()));
    ok_ = ok_ && err == BZ_OK;
  }
  std::FILE* file_ = nullptr;
  BZFILE* bz_ = nullptr;
  bool ok_ = true;
};

}  // namespace ukai::testing

#endif  // UKAI_TESTS_SIM_WORKLOAD_NETRACE_WRITER_H_
