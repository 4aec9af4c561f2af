// The runtime's wire frame: a fixed 56-byte little-endian header followed by the payload.
// Every communication module carries these frames unchanged (stream modules such as tcp
// use header_len + payload_len for framing; datagram modules carry one frame per message).
//
// Layout (offsets in bytes, all integers little-endian):
//    0  u32 magic        0x49414B55 (the bytes "UKAI")
//    4  u8  version      kVersion (1)
//    5  u8  kind         FrameKind
//    6  u16 header_len   >= kHeaderSize; bytes past 56 are a future extension, skipped
//    8  u32 flags        kFlag* bits; unknown bits are rejected
//   12  u32 payload_len  bytes after the header; <= the decoder's limit
//   16  u64 source       runtime id of the sender
//   24  u64 target       runtime id of the receiver (0 only in kHello before the id is known)
//   32  u32 context      target context id (within the target runtime)
//   36  u32 endpoint     target endpoint id (within the context)
//   40  u32 handler      handler id (stable hash of the handler's name)
//   44  u32 reserved     must be 0 in version 1
//   48  u64 address      the startpoint's address in the target context (kFlagHasAddress)
//
// Decoding never reads out of bounds: every malformed or truncated input is a Status naming
// the field and the offending value. Thread safety: pure functions.
#ifndef UKAI_WIRE_RSR_FRAME_H_
#define UKAI_WIRE_RSR_FRAME_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "core/status.h"

namespace ukai::wire {

inline constexpr uint32_t kMagic = 0x49414B55;  // "UKAI" in memory order
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderSize = 56;
// Largest payload a frame may carry: 64 MiB of user data plus room for buffer tags.
inline constexpr uint32_t kMaxPayloadBytes = (64u << 20) + (64u << 10);

// What a frame is. Values 16..63 are reserved for the later RMA, atomic and multicast
// operations (spec/rma-nic.md) so those are additions, not format changes.
enum class FrameKind : uint8_t {
  kRsr = 1,    // remote service request: run handler `handler` at context/endpoint
  kHello = 2,  // first frame on a stream connection (tcp: the dialer's nonce, tcp_hello.h)
  kBye = 3,    // orderly goodbye: the sender is finalizing; not a failure
  // The tcp handshake and session (src/rt/modules/tcp/tcp_hello.h); other modules never
  // carry them.
  kChallenge = 4,  // listener -> dialer: the listener's nonce and proof
  kProof = 5,      // dialer -> listener: the dialer's proof
  kWelcome = 6,    // listener -> dialer: the connection is accepted (or why not)
  kAck = 7,        // frames of the session received so far (the sender may free them)
  // A round of Runtime::Barrier() on a simulated machine (the sim module only,
  // docs/sim-module.md): header only; `handler` = the round, `address` = the barrier's
  // sequence number.
  kBarrier = 8,
};

inline constexpr uint32_t kFlagHasAddress = 1u << 0;  // `address` is meaningful
// A request (Runtime::Request): the payload ends with the runtime's request trailer
// (kRequestTrailer bytes: u64 request id), which the handler does not see.
inline constexpr uint32_t kFlagRequest = 1u << 1;
// A reply to a request, or the refusal of an RSR the target could not deliver: the payload
// ends with the reply trailer (kReplyTrailer bytes: u64 request id, 0 for the refusal of a
// plain RSR; u32 status code, 0 = OK; before it the reply body, or the error message).
// context/endpoint/handler repeat those of the request or refused RSR.
inline constexpr uint32_t kFlagReply = 1u << 2;
inline constexpr uint32_t kKnownFlags = kFlagHasAddress | kFlagRequest | kFlagReply;
inline constexpr size_t kRequestTrailer = 8;
inline constexpr size_t kReplyTrailer = 12;

struct FrameHeader {
  FrameKind kind = FrameKind::kRsr;
  uint16_t header_len = kHeaderSize;
  uint32_t flags = 0;
  uint32_t payload_len = 0;
  uint64_t source = 0;
  uint64_t target = 0;
  uint32_t context = 0;
  uint32_t endpoint = 0;
  uint32_t handler = 0;
  uint64_t address = 0;

  bool has_address() const { return (flags & kFlagHasAddress) != 0; }
  size_t frame_size() const { return size_t{header_len} + payload_len; }
};

// Writes `h` (with header_len forced to kHeaderSize) into out[0..kHeaderSize).
// `out` must hold at least kHeaderSize bytes.
void EncodeHeader(const FrameHeader& h, std::span<uint8_t> out);

// Decodes and validates the header at the start of `in`. Needs only the header bytes (not
// the payload): stream readers call it as soon as kHeaderSize bytes arrived. Errors:
// kOutOfRange when fewer than kHeaderSize (or header_len) bytes are given, kParseError for a
// bad magic/version/kind/flags/reserved field or payload_len > max_payload.
Result<FrameHeader> DecodeHeader(std::span<const uint8_t> in,
                                 uint32_t max_payload = kMaxPayloadBytes);

// A decoded frame that views its input bytes (valid as long as they are).
struct FrameView {
  FrameHeader header;
  std::span<const uint8_t> payload;
};

// Decodes a whole frame: header as DecodeHeader, then requires `in` to hold exactly
// header_len + payload_len bytes (kOutOfRange when truncated, kParseError when longer).
Result<FrameView> DecodeFrame(std::span<const uint8_t> in, uint32_t max_payload = kMaxPayloadBytes);

// The bytes of `v` in the opposite order (std::byteswap is C++23).
template <typename T>
constexpr T ByteSwap(T v) {
  T out = 0;
  for (size_t i = 0; i < sizeof v; ++i) out = static_cast<T>((out << 8) | ((v >> (8 * i)) & 0xFF));
  return out;
}

// Little-endian helpers shared by the runtime's codecs. `p` must point at enough bytes.
// One unaligned load or store on little-endian hosts (the byte loops they replace were
// compiled byte by byte), a byte swap on big-endian ones.
template <typename T>
inline T LoadLe(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = ByteSwap(v);
  return v;
}
template <typename T>
inline void StoreLe(uint8_t* p, T v) {
  if constexpr (std::endian::native == std::endian::big) v = ByteSwap(v);
  std::memcpy(p, &v, sizeof v);
}
inline void PutLe16(uint8_t* p, uint16_t v) { StoreLe(p, v); }
inline void PutLe32(uint8_t* p, uint32_t v) { StoreLe(p, v); }
inline void PutLe64(uint8_t* p, uint64_t v) { StoreLe(p, v); }
inline uint16_t GetLe16(const uint8_t* p) { return LoadLe<uint16_t>(p); }
inline uint32_t GetLe32(const uint8_t* p) { return LoadLe<uint32_t>(p); }
inline uint64_t GetLe64(const uint8_t* p) { return LoadLe<uint64_t>(p); }

// "0x0000abcd": a 32-bit field as the wire codecs' errors print it.
std::string Hex32(uint32_t v);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_RSR_FRAME_H_
