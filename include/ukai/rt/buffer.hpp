// Buffers: typed pack (Buffer) and unpack (Reader) of RSR payloads.
//
// Every item is written as a one-byte type tag followed by its value, little-endian on the
// wire whatever the host order: fixed-width integers, IEEE floats, bools (one byte 0/1),
// strings and byte spans (u32 length + bytes), startpoints (u32 length + Startpoint
// serialisation). Reading with the wrong type, past the end, or a malformed value returns
// an error Status naming the offset, the expected and the found type; it never reads out of
// bounds, and a failed read leaves the Reader where it was.
//
// Storage: the heap, or registered memory from Runtime::NewBuffer (the shm module's pool:
// sent over shm, a large RSR is then delivered from where it was packed, one copy in all).
// Either kind works with every module and peer, copies, grows and outlives the Runtime.
//
// A Buffer keeps kHeadroom bytes in front of its payload so the runtime writes the wire
// frame header in place: sending a moved Buffer costs no copy of the payload.
//
// Thread safety: plain values; one thread at a time per object.
#ifndef UKAI_RT_BUFFER_HPP_
#define UKAI_RT_BUFFER_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ukai/rt/byte_block.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

// The tag byte in front of each packed item.
enum class TypeTag : uint8_t {
  kU8 = 1,
  kU16 = 2,
  kU32 = 3,
  kU64 = 4,
  kI8 = 5,
  kI16 = 6,
  kI32 = 7,
  kI64 = 8,
  kF32 = 9,
  kF64 = 10,
  kBool = 11,
  kString = 12,
  kBytes = 13,
  kStartpoint = 14,
};

// "u32", "string", ...; "tag 0x63" for unknown values.
std::string TypeTagName(uint8_t tag);

class Buffer {
 public:
  // Bytes reserved in front of the payload for the frame header (== wire::kHeaderSize).
  static constexpr size_t kHeadroom = 56;

  Buffer() : block_(kHeadroom + 64) { block_.Resize(kHeadroom); }
  // An empty buffer with room for `payload_capacity` payload bytes.
  explicit Buffer(size_t payload_capacity) : block_(kHeadroom + payload_capacity) {
    block_.Resize(kHeadroom);
  }
  // An empty buffer that packs into `storage` (its contents are dropped; it grows, from
  // the same source when it can, like any Buffer). Runtime::NewBuffer uses it.
  static Buffer FromBlock(ByteBlock storage) {
    Buffer b(std::move(storage), 0);
    b.block_.Resize(kHeadroom);
    return b;
  }
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;
  Buffer(const Buffer& o) : block_(o.block_.Clone()) {}
  Buffer& operator=(const Buffer& o) {
    if (this != &o) block_ = o.block_.Clone();
    return *this;
  }

  void PutU8(uint8_t v);
  void PutU16(uint16_t v);
  void PutU32(uint32_t v);
  void PutU64(uint64_t v);
  void PutI8(int8_t v);
  void PutI16(int16_t v);
  void PutI32(int32_t v);
  void PutI64(int64_t v);
  void PutF32(float v);
  void PutF64(double v);
  void PutBool(bool v);
  // Strings and byte spans up to 4 GiB - 1 (the frame limit is far lower: 64 MiB).
  void PutString(std::string_view v);
  void PutBytes(std::span<const uint8_t> v);
  void PutStartpoint(const Startpoint& sp);

  // Payload bytes packed so far (excluding the headroom).
  size_t size() const { return block_.size() - kHeadroom; }
  std::span<const uint8_t> payload() const { return block_.span().subspan(kHeadroom); }
  // Drops the payload, keeping the capacity.
  void Clear() { block_.Resize(kHeadroom); }

  // The storage, headroom included (the runtime writes the frame header there).
  ByteBlock& block() { return block_; }
  const ByteBlock& block() const { return block_; }
  ByteBlock TakeBlock() {
    ByteBlock b = std::move(block_);
    return b;
  }

 private:
  Buffer(ByteBlock storage, int /*tag*/) : block_(std::move(storage)) {}
  uint8_t* Item(TypeTag tag, size_t value_bytes);
  ByteBlock block_;
};

class Reader {
 public:
  // Reads `payload`, which must outlive the Reader (and views returned by it).
  explicit Reader(std::span<const uint8_t> payload) : data_(payload) {}

  Result<uint8_t> GetU8();
  Result<uint16_t> GetU16();
  Result<uint32_t> GetU32();
  Result<uint64_t> GetU64();
  Result<int8_t> GetI8();
  Result<int16_t> GetI16();
  Result<int32_t> GetI32();
  Result<int64_t> GetI64();
  Result<float> GetF32();
  Result<double> GetF64();
  Result<bool> GetBool();  // a value byte other than 0/1 is an error
  Result<std::string> GetString();
  // Zero-copy views into the payload (valid while the payload is).
  Result<std::string_view> GetStringView();
  Result<std::span<const uint8_t>> GetBytes();
  Result<Startpoint> GetStartpoint();

  // The tag of the next item (error at the end).
  Result<TypeTag> PeekTag() const;
  size_t offset() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  // Checks the tag and that `n` value bytes follow; returns a pointer to the value.
  Result<const uint8_t*> Fixed(TypeTag tag, size_t n);
  Result<std::span<const uint8_t>> Sized(TypeTag tag);
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_BUFFER_HPP_
