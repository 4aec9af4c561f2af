#include "sim/nic/sss_packet.h"

#include <algorithm>

namespace ukai::sim {
namespace {

// The paper's list (Section 2.1) with our widths; the trailer is the CRC the controller
// computes at send (Section 3.3).
constexpr PacketField kFields[] = {
    {"packet type", 2},
    {"destination process ID", 2},
    {"destination virtual address", 4},
    {"destination access ID", 4},
    {"destination node ID", 2},
    {"data start address", 4},
    {"data size", 2},
    {"own process ID", 2},
    {"own access ID", 4},
    {"CRC (trailer)", 4},
};

}  // namespace

std::span<const PacketField> SssPacketFields() { return kFields; }

int SssFieldBytes() {
  int total = 0;
  for (const PacketField& f : kFields) total += f.bytes;
  return total;
}

std::string_view SssPacketKindName(SssPacketKind k) {
  switch (k) {
    case SssPacketKind::kWrite:
      return "write";
    case SssPacketKind::kReadRequest:
      return "read-request";
    case SssPacketKind::kReadReply:
      return "read-reply";
    case SssPacketKind::kAck:
      return "ack";
    case SssPacketKind::kMulticastTree:
      return "multicast-tree";
    case SssPacketKind::kMulticastChain:
      return "multicast-chain";
    case SssPacketKind::kConverted:
      return "multicast-to-convert";
  }
  return "?";
}

int64_t WireBytes(const SssConfig& c, int switches, int64_t extra, int64_t payload) {
  return c.header_bytes + int64_t{c.per_switch_bytes} * switches + extra + payload;
}

int32_t WireFlits(int64_t wire, int flit_bytes) {
  return static_cast<int32_t>(std::max<int64_t>(1, (wire + flit_bytes - 1) / flit_bytes));
}

std::vector<Piece> SplitTransfer(int64_t bytes, int64_t page_offset, int max_payload,
                                 int page_bytes) {
  std::vector<Piece> out;
  if (bytes <= 0) {
    out.push_back({0, 0});
    return out;
  }
  int64_t done = 0;
  int64_t addr = page_offset % page_bytes;  // position within the current page
  while (done < bytes) {
    const int64_t to_page_end = page_bytes - addr;
    const int64_t n = std::min({bytes - done, int64_t{max_payload}, to_page_end});
    out.push_back({done, static_cast<int32_t>(n)});
    done += n;
    addr = (addr + n) % page_bytes;
  }
  return out;
}

}  // namespace ukai::sim
