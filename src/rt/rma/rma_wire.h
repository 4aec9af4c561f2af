// The byte layout of RMA requests and replies carried as RSR payloads (docs/rma.md).
//
// Request (little-endian), kRequestHeaderBytes = 72:
//    0 u8  op             RmaWireOp
//    1 u8  flags          kReqHasReturn | kReqHasFlag; other bits rejected
//    2 u16 reserved       0
//    4 u32 segment
//    8 u64 op_id          the initiator's operation id
//   16 u64 dest_runtime   } the destination's process ID and access ID (from the key)
//   24 u32 dest_context   }
//   28 u32 dest_access_id }
//   32 u64 init_runtime   } the initiator's process ID and access ID, stamped by the library
//   40 u32 init_context   }
//   44 u32 init_access_id }
//   48 u64 offset         of this packet within the segment
//   56 u32 length         put/get: data bytes of this packet; atomic: number of ops
//   60 u32 op_offset      put/get: this packet's offset within the operation's data
//   64 u64 flag           the initiator's completion flag address (0 = none)
// then, with kReqHasReturn, u16 n + n bytes of the initiator's serialised RMA startpoint;
// then put: `length` data bytes; atomic: `length` ops of kAtomicOpBytes (u8 code, u8 width,
// u16 0, u32 0, u64 offset, u64 operand, u64 compare). Nothing may follow.
//
// Reply, kReplyHeaderBytes = 24: u8 op, u8 status code (StatusCode), u16 message length,
// u32 data length, u64 op_id, u32 op_offset, u32 reserved 0; then the message, then the data
// (get: bytes read; atomic: u64 old value per op).
//
// One-sided asks (ops 4 and 5, the MPI one-sided path of docs/rma.md): a request to put /
// get `length` bytes (the whole operation, no 4 KiB limit) at `offset` by the transport's own
// one-sided operations; no data follows. The target runs every check of a packet and answers
// with a reply whose data is either the u64 window address of the first byte (go: the
// initiator transfers by itself) or empty (take the packet path); an error refuses the access.
// After a granted transfer the initiator sends op 6 (release: same fields as its ask, no
// data, no reply), so that the target knows which grants are still in flight.
//
// Decoders never read out of bounds and name the offending field. Thread safety: pure.
#ifndef UKAI_RT_RMA_RMA_WIRE_H_
#define UKAI_RT_RMA_RMA_WIRE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::internal {

enum class RmaWireOp : uint8_t {
  kPut = 1,
  kGet = 2,
  kAtomic = 3,
  kOneSidedPut = 4,  // asks (see above)
  kOneSidedGet = 5,
  kOneSidedDone = 6,  // release of a granted ask (see above)
};
inline bool IsOneSidedAsk(RmaWireOp op) {
  return op == RmaWireOp::kOneSidedPut || op == RmaWireOp::kOneSidedGet;
}

inline constexpr size_t kRequestHeaderBytes = 72;
inline constexpr size_t kReplyHeaderBytes = 24;
inline constexpr size_t kAtomicOpBytes = 32;
inline constexpr uint8_t kReqHasReturn = 1;
inline constexpr uint8_t kReqHasFlag = 2;

struct RmaRequest {
  RmaWireOp op = RmaWireOp::kPut;
  uint8_t flags = 0;
  uint32_t segment = 0;
  uint64_t op_id = 0;
  ProcessId dest;
  uint32_t dest_access_id = 0;
  ProcessId init;
  uint32_t init_access_id = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint32_t op_offset = 0;
  uint64_t flag = 0;
  std::span<const uint8_t> return_route;  // serialised startpoint (kReqHasReturn)
  std::span<const uint8_t> data;          // put data
  std::vector<AtomicOp> atomics;          // atomic ops
};

// Bytes the encoding of `r` takes (header + route + data/ops).
size_t RequestSize(const RmaRequest& r);
// Writes `r` into out[0..RequestSize(r)).
void EncodeRequest(const RmaRequest& r, uint8_t* out);
// kParseError naming the field for any malformed input; length > kRmaMaxPacketBytes for
// put/get or more than kRmaMaxAtomicOps ops are errors too.
Result<RmaRequest> DecodeRequest(std::span<const uint8_t> in);

struct RmaReply {
  RmaWireOp op = RmaWireOp::kPut;
  StatusCode code = StatusCode::kOk;
  uint64_t op_id = 0;
  uint32_t op_offset = 0;
  std::string_view message;
  std::span<const uint8_t> data;
};

size_t ReplySize(const RmaReply& r);
void EncodeReply(const RmaReply& r, uint8_t* out);
Result<RmaReply> DecodeReply(std::span<const uint8_t> in);

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_RMA_RMA_WIRE_H_
