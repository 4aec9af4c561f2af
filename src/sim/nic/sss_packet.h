// The SSS-CORE NIC's packets as the simulator counts them (docs/sss.md): the fields of a
// remote-access packet (the paper's Section 2.1 list, carried for their byte counts), the
// bytes a packet puts on the wire, and the split of a transfer into packets of at most
// nic.max_payload_bytes that never cross a page boundary.
//
// The paper gives only the total: 30 bytes of header and trailer plus 2 bytes per switch on
// the route. The widths below are ours (the paper gives none); they add up to the
// default nic.header_bytes, and the route is the per-switch part.
//
// Thread safety: pure functions and constant tables.
#ifndef UKAI_SIM_NIC_SSS_PACKET_H_
#define UKAI_SIM_NIC_SSS_PACKET_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/nic/sss_config.h"

namespace ukai::sim {

// One field of the header or trailer, in the order the paper lists them (the packet type
// first: switches handle multicast and ack combining by it), then the trailer.
struct PacketField {
  std::string_view name;
  int bytes;
};
std::span<const PacketField> SssPacketFields();
// Their sum (30: the paper's header + trailer).
int SssFieldBytes();

// What a packet is, for its header and for the statistics.
enum class SssPacketKind : uint8_t {
  kWrite,           // remote write data
  kReadRequest,     // remote read request (no payload)
  kReadReply,       // read data returned (a remote write to the reader)
  kAck,             // ack-less remote write to the SS-Wait flag (combined or not)
  kMulticastTree,   // hierarchical multicast: copied in the switches
  kMulticastChain,  // chained multicast: forwarded by the member NICs
  kConverted,       // a chained packet on its way to the switch that converts it
};
std::string_view SssPacketKindName(SssPacketKind k);

// Bytes on the wire of a packet: header + trailer, the route (per_switch_bytes per switch
// it crosses or, for a multicast tree, per switch of the tree), `extra` header bytes
// (a chained packet's member list, an ack field, a kept return route) and the payload.
int64_t WireBytes(const SssConfig& c, int switches, int64_t extra, int64_t payload);
// Flits of `wire` bytes with `flit_bytes` per flit.
int32_t WireFlits(int64_t wire, int flit_bytes);

// One packet of a split transfer: its offset in the transfer and its payload.
struct Piece {
  int64_t offset;
  int32_t bytes;
};
// Splits `bytes` starting at `page_offset` within a page into pieces of at most
// max_payload bytes, none crossing a page boundary (page_bytes); a 0-byte transfer is one
// empty piece.
std::vector<Piece> SplitTransfer(int64_t bytes, int64_t page_offset, int max_payload,
                                 int page_bytes);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_PACKET_H_
