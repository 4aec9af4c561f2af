// The netrace v1.0 trace format (on-chip traffic of real programs; the University of Texas
// at Austin's netrace reader defines it) and a streaming reader of it.
//
// A trace is a bzip2 stream of little-endian packed records:
//   header (72 bytes): magic 0x484A5455 (u32), version (f32, 1.0), benchmark name (30
//     bytes, NUL-terminated), node count (u8), 1 pad byte, cycles (u64), packets (u64),
//     notes length (u32, with its NUL), region count (u32), 8 pad bytes;
//   the notes (notes length bytes);
//   one region record per region (24 bytes): seek offset (u64, bytes after the header, i.e.
//     after the region records), cycles (u64), packets (u64). Regions follow each other:
//     region r starts at cycle sum(cycles of regions 0..r-1); packet cycles are absolute;
//   packets in cycle order (21 bytes + 4 per dependency): cycle (u64), id (u32), address
//     (u32), type (u8, kNetracePacketTypes), source node (u8), destination node (u8), node
//     types (u8: source's in the high nibble, destination's in the low: 0 L1 data cache,
//     1 L1 instruction cache, 2 L2 cache, 3 memory controller), dependency count (u8), then
//     that many packet ids (u32 each): the later packets that wait for this one (a packet
//     starts only once every packet that lists it has been delivered).
//
// The reader streams: it holds the header and one packet, whatever the trace length.
// Errors (kParseError) name the trace and where: the header field, or the packet's index
// (0-based, counted from the trace's first packet) and the decompressed byte offset.
//
// Thread safety: none; one reader per trace.
#ifndef UKAI_SIM_WORKLOAD_NETRACE_FORMAT_H_
#define UKAI_SIM_WORKLOAD_NETRACE_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/workload/bz2_stream.h"

namespace ukai::sim {

inline constexpr uint32_t kNetraceMagic = 0x484A5455;
inline constexpr int kNetraceHeaderBytes = 72;
inline constexpr int kNetraceRegionBytes = 24;
inline constexpr int kNetracePacketBytes = 21;  // without its dependency ids
inline constexpr int kNetracePacketTypeCount = 31;

// One packet type: its name and size in bytes (-1: not a valid type, "InvalidCmd").
// Control packets (requests, acknowledgements, invalidations) are 8 bytes; packets that
// carry a 64-byte cache line (responses with data, write requests, writebacks) are 72.
struct NetracePacketType {
  const char* name;
  int bytes;
};
// Indexed by the packet's type byte (docs/workloads.md prints the table).
extern const NetracePacketType kNetracePacketTypes[kNetracePacketTypeCount];

struct NetraceRegion {
  uint64_t seek_offset = 0;  // bytes after the region records
  uint64_t cycles = 0;
  uint64_t packets = 0;
};

struct NetraceHeader {
  float version = 1.0f;
  std::string benchmark;
  int nodes = 0;
  uint64_t cycles = 0;   // the last packet's cycle
  uint64_t packets = 0;  // in the whole trace
  std::string notes;
  std::vector<NetraceRegion> regions;
};

struct NetracePacket {
  uint64_t cycle = 0;
  uint32_t id = 0;
  uint32_t address = 0;
  uint8_t type = 0;
  uint8_t src = 0;
  uint8_t dst = 0;
  uint8_t node_types = 0;
  std::vector<uint32_t> deps;  // ids of the packets that wait for this one
};

class NetraceReader {
 public:
  // Opens a .tra.bz2 file and reads its header. Errors name `path`.
  static Result<std::unique_ptr<NetraceReader>> Open(const std::string& path);
  // Reads the header from `stream` (decompressed bytes); `name` stands for the file.
  static Result<std::unique_ptr<NetraceReader>> FromStream(std::unique_ptr<ByteStream> stream,
                                                           const std::string& name);

  const NetraceHeader& header() const { return header_; }
  // Skips to the first packet of `region` (reading and dropping the bytes before it); only
  // before the first Next(). Errors: no such region, a stream too short.
  Status SeekRegion(int region);
  // The next packet into `*p`: true; false at the end of the trace (after checking that
  // the trace held as many packets as its header says); an error for a truncated or
  // corrupt stream or an invalid packet (unknown type, node >= node count, cycle going
  // back).
  Result<bool> Next(NetracePacket* p);
  // Index of the next packet (counted from the trace's first packet).
  uint64_t next_index() const { return index_; }
  // The cycle at which the region the reader started in begins.
  uint64_t start_cycle() const { return start_cycle_; }
  const std::string& name() const { return name_; }

 private:
  NetraceReader() = default;
  Status ReadHeader();
  Status ReadExact(void* out, size_t n, const std::string& what);
  std::string Where() const;  // "<name>: packet <i> (byte <offset>)"

  std::unique_ptr<ByteStream> stream_;
  std::string name_;
  NetraceHeader header_;
  int64_t packets_offset_ = 0;  // decompressed offset of the first packet of region 0
  uint64_t index_ = 0;
  uint64_t expected_ = 0;  // packets from the start region to the end
  uint64_t start_cycle_ = 0;
  uint64_t last_cycle_ = 0;
  bool started_ = false;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_NETRACE_FORMAT_H_
