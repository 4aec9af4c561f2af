// The interconnect packet of the gateway patent (seed 000, Fig. 8) as bytes: what a compute
// node sends to an I/O node's NIC (outbound) and what the NIC sends into the interconnect
// (inbound). The patent fixes only the order of the fields (claims-000-003.md items 41-46);
// every width, encoding and the layout below are OURS. All integers big-endian (network
// order), as the Ethernet fields they carry.
//
//  Part A, routing header
//     0  u8   flags       bit 0 ID: 1 = deliver to the router's Ethernet NIC, 0 = to the
//                         CPU; bit 1 broadcast (routing info = "all compute nodes");
//                         bit 2 Part B (the send/receive command) present; bit 3 the
//                         detour below is external->internal (inbound; else
//                         internal->external); bits 4-7 must be 0
//     1  u8   n           via nodes of the routing header's detour, 0..kMaxVia
//     2  u32  via[n]      the detour: node addresses (linear node index), in order
//   2+4n u32  dst         destination node address (0xFFFFFFFF when broadcast)
//        u16  length      N: bytes of the whole packet, CRC included
//  Part B, send/receive command (only when flag bit 2)
//        u8   m           via nodes of the external->internal detour, 0..kMaxVia
//        u32  via[m]      the detour from the I/O node back to the source node
//        u32  src         source node address
//        u32  dst         destination node address (the I/O node)
//        u8   cmd         kCmd* bits (compute checksum, split packet); others must be 0
//  Part C, the Ethernet frame without preamble and FCS
//        u16  frame_len   F, 14..kMaxFrameBytes (ours: the patent has no such field, but the
//                         padding makes F otherwise ambiguous)
//        F bytes          destination MAC, source MAC, EtherType, data
//  Part A, tail
//        0-3 zero bytes   padding: the CRC starts at a multiple of 4
//        u32  crc         CRC-32 (crc32.h) of every byte before it, stored big-endian
//
// Decoding checks every field and rejects every malformed input with a specific error
// (kOutOfRange: truncated, naming the field and offsets; kParseError: a bad value, naming
// the field and the value); a decoded packet re-encodes to exactly the same bytes.
// Thread safety: pure functions.
#ifndef UKAI_WIRE_GATEWAY_PACKET_H_
#define UKAI_WIRE_GATEWAY_PACKET_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace ukai::wire {

inline constexpr int kMaxVia = 4;
inline constexpr uint32_t kBroadcastNode = 0xFFFFFFFFu;
inline constexpr size_t kMinFrameBytes = 14;    // two MACs + EtherType
inline constexpr size_t kMaxFrameBytes = 9018;  // 9000-byte jumbo payload + VLAN tag
inline constexpr size_t kMaxPacketBytes = 0xFFFF;

inline constexpr uint8_t kFlagToNic = 1u << 0;
inline constexpr uint8_t kFlagBroadcast = 1u << 1;
inline constexpr uint8_t kFlagCommand = 1u << 2;
inline constexpr uint8_t kFlagInbound = 1u << 3;
inline constexpr uint8_t kKnownPacketFlags = 0x0F;

inline constexpr uint8_t kCmdChecksum = 1u << 0;  // "compute the checksum" (¶88)
inline constexpr uint8_t kCmdSplit = 1u << 1;     // "split the packet" (¶88)
inline constexpr uint8_t kKnownCmds = 0x03;

// Part B.
struct SendCommand {
  std::vector<uint32_t> return_detour;  // external->internal: I/O node back to src
  uint32_t src = 0;
  uint32_t dst = 0;
  uint8_t cmd = 0;

  bool operator==(const SendCommand&) const = default;
};

struct GatewayPacket {
  bool to_nic = false;           // routing info ID: NIC (true) or CPU
  bool broadcast = false;        // destination = all compute nodes (no detour)
  bool inbound = false;          // the routing header's detour is external->internal
  std::vector<uint32_t> detour;  // routing header's detour (via nodes)
  uint32_t dst = 0;              // destination node (kBroadcastNode when broadcast)
  bool has_command = false;      // Part B present
  SendCommand command;           // Part B
  std::vector<uint8_t> frame;    // Part C: Ethernet frame without preamble and FCS

  bool operator==(const GatewayPacket&) const = default;
};

// The encoded size of `p` (valid or not).
size_t EncodedSize(const GatewayPacket& p);

// Encodes `p`. kInvalidArgument when a field cannot be encoded (too many via nodes, frame
// shorter than 14 or longer than kMaxFrameBytes bytes, broadcast with a detour or with
// dst != kBroadcastNode, unknown cmd bits, packet longer than 65535 bytes).
Result<std::vector<uint8_t>> EncodePacket(const GatewayPacket& p);

// EncodePacket() with `frame` as Part C (p.frame is not read), into `*out`: its contents
// are replaced, its capacity reused (no allocation once it is large enough; the NIC's
// per-frame path). Same bytes and errors as EncodePacket() of p with p.frame = frame; on
// an error `*out` is left unchanged. `frame` must not lie inside `*out`.
Status EncodePacketInto(const GatewayPacket& p, std::span<const uint8_t> frame,
                        std::vector<uint8_t>* out);

// Decodes exactly one packet occupying all of `in`.
Result<GatewayPacket> DecodePacket(std::span<const uint8_t> in);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_GATEWAY_PACKET_H_
