// The collectives' messages: one RSR each to the member's collective endpoint (handler
// "ukai.coll"), a fixed 56-byte little-endian header, then the kind's body.
//
// offset type field
//  0     u8   magic    0xC7
//  1     u8   kind     MsgKind
//  2     u8   coll     Collective of the operation (0 for group messages)
//  3     u8   algorithm
//  4     u8   dtype    DataType
//  5     u8   redop    ReduceOp (0: none)
//  6     u16  flags    0
//  8     u64  group    the group's id
// 16     u32  seq      the operation's sequence number in the group (p2p: per sender,
//                      receiver and tag; bye: the last operation the sender completed;
//                      shrink: the shrink's number)
// 20     u32  src      the sender's rank
// 24     u32  tag      the step's tag (p2p: the user's tag)
// 28     u32  root     the operation's root (p2p: the destination rank)
// 32     u64  count    the operation's count argument (elements)
// 40     u64  total    bytes of the step's whole message (rts: of the data to come)
// 48     u64  offset   data: where this segment goes in the step's message; rts: the
//                      sender's one-sided address (0: none); put: the receiver's address
//                      of the step's data; wrote: the bytes written
// Bodies: data, p2p, relay: the segment's bytes; abort: u32 status code, then the message
// text; shrink: u32 count, then that many u32 ranks; the others: empty.
//
// Thread safety: pure functions.
#ifndef UKAI_RT_COLL_COLL_WIRE_H_
#define UKAI_RT_COLL_COLL_WIRE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ukai/rt/buffer.hpp"
#include "ukai/status.hpp"

namespace ukai::rt::coll {

inline constexpr uint8_t kCollMagic = 0xC7;
inline constexpr size_t kCollHeaderBytes = 56;
inline constexpr char kCollHandler[] = "ukai.coll";
inline constexpr char kCollHelloHandler[] = "ukai.coll.hello";

enum class MsgKind : uint8_t {
  kData = 1,           // a segment of a step's message
  kRts = 2,            // a large message is ready (rendezvous)
  kCts = 3,            // the receiver is ready for it: send the data
  kFin = 4,            // the receiver read it from the sender's memory
  kAbort = 5,          // the sender failed the operation (argument mismatch ...): so do you
  kBye = 6,            // the sender left the group after completing operations <= seq
  kP2p = 7,            // a part of a point-to-point message
  kRelay = 8,          // a part to forward to `root` as kP2p (relay point-to-point)
  kShrinkAsk = 9,      // shrink: the coordinator asks for the failed set
  kShrinkState = 10,   // shrink: a member's failed set
  kShrinkCommit = 11,  // shrink: the decided failed set
  kPut = 12,           // shared copy: the receiver asks the sender to write the first part
                       // of an announced step to `offset` (the receiver's address)
  kWrote = 13,         // shared copy: the sender wrote the first `offset` bytes
};
inline constexpr uint8_t kLastMsgKind = 13;
std::string MsgKindName(MsgKind k);

struct Header {
  MsgKind kind = MsgKind::kData;
  uint8_t coll = 0;
  uint8_t algorithm = 0;
  uint8_t dtype = 0;
  uint8_t redop = 0;
  uint64_t group = 0;
  uint32_t seq = 0;
  uint32_t src = 0;
  uint32_t tag = 0;
  uint32_t root = 0;
  uint64_t count = 0;
  uint64_t total = 0;
  uint64_t offset = 0;
};

void EncodeHeader(const Header& h, uint8_t* out);
// Decodes and checks a message: magic, kind, the enum fields in range, flags 0, and the body
// against the kind (data: offset + body <= total; abort: the code and text; shrink: the
// count). Errors (kParseError) name the field.
Result<Header> DecodeMessage(std::span<const uint8_t> payload);

// A Buffer holding header `h` and `body` (storage from `fast` when given: the runtime's
// registered memory for large bodies).
Buffer MakeMessage(const Header& h, std::span<const uint8_t> body);
// Body codecs.
std::vector<uint8_t> EncodeAbort(const Status& s);
Status DecodeAbort(std::span<const uint8_t> body);
std::vector<uint8_t> EncodeRanks(const std::vector<int>& ranks);
Result<std::vector<int>> DecodeRanks(std::span<const uint8_t> body, int group_size);

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_COLL_WIRE_H_
