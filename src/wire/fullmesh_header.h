// The control header of the optical full mesh (spec/fullmesh-relay.md, Fig. 10; claims-004
// E3.9-E3.14): attached when data first leave processor/memory and not changed by relays.
// The document gives only the field widths; the order, the padding and the FCS are ours.
//
// Frame for N nodes (bits numbered from the first byte's most significant bit):
//   bits 0..9          communication management number (10 bits, 0..1023)
//   bit  10            step number (0 = before the hop, 1 = after it)
//   bits 11..N+9       link management information: bit 11 + j is this node's transmit
//                      link j (links in ascending receiver order, skipping itself);
//                      1 = busy, 0 = idle (N - 1 bits)
//   next 32 bits       sending process ID (MPI), most significant bit first
//   then 0..7 zero bits to the byte boundary        -> ControlHeaderBytes(N) bytes
//   payload            (any length)
//   FCS                CRC-32 (IEEE 802.3: reflected, poly 0xEDB88320, init and final
//                      xor 0xFFFFFFFF) over header and payload, 4 bytes little-endian.
// N = 32: 74 header bits in 10 bytes + 4 FCS bytes (the document quotes ~100 bits).
//
// Decoding checks the length, the padding bits (must be 0) and the FCS; every error names
// the field. Thread safety: pure functions.
#ifndef UKAI_WIRE_FULLMESH_HEADER_H_
#define UKAI_WIRE_FULLMESH_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace ukai::wire {

inline constexpr int kFullMeshMaxNodes = 4096;

struct ControlHeader {
  uint16_t number = 0;      // 10 bits
  bool after_hop = false;   // the step bit
  std::vector<bool> links;  // N - 1 bits, busy = true
  uint32_t process_id = 0;
};

// Bytes of the header (without payload and FCS) for `nodes` nodes.
size_t ControlHeaderBytes(int nodes);

// Header + payload + FCS. Errors (kInvalidArgument): nodes out of [2, 4096], number > 1023,
// links.size() != nodes - 1.
Result<std::vector<uint8_t>> EncodeControlFrame(const ControlHeader& h, int nodes,
                                                std::span<const uint8_t> payload);

struct ControlFrameView {
  ControlHeader header;
  std::span<const uint8_t> payload;  // views the input
};

// Errors: kOutOfRange when shorter than header + FCS, kParseError for nonzero padding bits
// or a wrong FCS, kInvalidArgument for a bad node count.
Result<ControlFrameView> DecodeControlFrame(std::span<const uint8_t> in, int nodes);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_FULLMESH_HEADER_H_
