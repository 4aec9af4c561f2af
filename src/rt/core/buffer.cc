#include "ukai/rt/buffer.hpp"

#include <cstring>
#include <string>

#include "wire/rsr_frame.h"

namespace ukai::rt {

static_assert(Buffer::kHeadroom == wire::kHeaderSize, "headroom must fit the frame header");

std::string TypeTagName(uint8_t tag) {
  static constexpr const char* kNames[] = {"?",   "u8",   "u16",    "u32",   "u64",
                                           "i8",  "i16",  "i32",    "i64",   "f32",
                                           "f64", "bool", "string", "bytes", "startpoint"};
  if (tag >= 1 && tag <= static_cast<uint8_t>(TypeTag::kStartpoint)) return kNames[tag];
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("tag 0x") + kHex[tag >> 4] + kHex[tag & 15];
}

uint8_t* Buffer::Item(TypeTag tag, size_t value_bytes) {
  uint8_t* p = block_.Extend(1 + value_bytes);
  p[0] = static_cast<uint8_t>(tag);
  return p + 1;
}

void Buffer::PutU8(uint8_t v) { *Item(TypeTag::kU8, 1) = v; }
void Buffer::PutU16(uint16_t v) { wire::PutLe16(Item(TypeTag::kU16, 2), v); }
void Buffer::PutU32(uint32_t v) { wire::PutLe32(Item(TypeTag::kU32, 4), v); }
void Buffer::PutU64(uint64_t v) { wire::PutLe64(Item(TypeTag::kU64, 8), v); }
void Buffer::PutI8(int8_t v) { *Item(TypeTag::kI8, 1) = static_cast<uint8_t>(v); }
void Buffer::PutI16(int16_t v) { wire::PutLe16(Item(TypeTag::kI16, 2), static_cast<uint16_t>(v)); }
void Buffer::PutI32(int32_t v) { wire::PutLe32(Item(TypeTag::kI32, 4), static_cast<uint32_t>(v)); }
void Buffer::PutI64(int64_t v) { wire::PutLe64(Item(TypeTag::kI64, 8), static_cast<uint64_t>(v)); }
void Buffer::PutF32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  wire::PutLe32(Item(TypeTag::kF32, 4), bits);
}
void Buffer::PutF64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  wire::PutLe64(Item(TypeTag::kF64, 8), bits);
}
void Buffer::PutBool(bool v) { *Item(TypeTag::kBool, 1) = v ? 1 : 0; }

void Buffer::PutString(std::string_view v) {
  uint8_t* p = Item(TypeTag::kString, 4 + v.size());
  wire::PutLe32(p, static_cast<uint32_t>(v.size()));
  if (!v.empty()) std::memcpy(p + 4, v.data(), v.size());
}

void Buffer::PutBytes(std::span<const uint8_t> v) {
  uint8_t* p = Item(TypeTag::kBytes, 4 + v.size());
  wire::PutLe32(p, static_cast<uint32_t>(v.size()));
  if (!v.empty()) std::memcpy(p + 4, v.data(), v.size());
}

void Buffer::PutStartpoint(const Startpoint& sp) {
  std::vector<uint8_t> bytes = sp.Serialize();
  uint8_t* p = Item(TypeTag::kStartpoint, 4 + bytes.size());
  wire::PutLe32(p, static_cast<uint32_t>(bytes.size()));
  std::memcpy(p + 4, bytes.data(), bytes.size());
}

// ---- Reader ----

Result<TypeTag> Reader::PeekTag() const {
  if (pos_ >= data_.size()) {
    return Status::OutOfRange("buffer unpack at offset " + std::to_string(pos_) +
                              ": no more items");
  }
  return static_cast<TypeTag>(data_[pos_]);
}

Result<const uint8_t*> Reader::Fixed(TypeTag tag, size_t n) {
  // Built only on the error paths: a successful read allocates nothing.
  auto where = [this] { return "buffer unpack at offset " + std::to_string(pos_) + ": "; };
  if (pos_ >= data_.size()) [[unlikely]] {
    return Status::OutOfRange(where() + "expected " + TypeTagName(static_cast<uint8_t>(tag)) +
                              ", found the end of the buffer");
  }
  if (data_[pos_] != static_cast<uint8_t>(tag)) [[unlikely]] {
    return Status::InvalidArgument(where() + "expected " + TypeTagName(static_cast<uint8_t>(tag)) +
                                   ", found " + TypeTagName(data_[pos_]));
  }
  if (data_.size() - pos_ - 1 < n) [[unlikely]] {
    return Status::OutOfRange(where() + TypeTagName(static_cast<uint8_t>(tag)) + " needs " +
                              std::to_string(n) + " bytes, " +
                              std::to_string(data_.size() - pos_ - 1) + " left");
  }
  const uint8_t* p = data_.data() + pos_ + 1;
  pos_ += 1 + n;
  return p;
}

Result<std::span<const uint8_t>> Reader::Sized(TypeTag tag) {
  const size_t start = pos_;
  Result<const uint8_t*> len_at = Fixed(tag, 4);
  if (!len_at.ok()) return len_at.status();
  const uint32_t len = wire::GetLe32(*len_at);
  if (data_.size() - pos_ < len) {
    pos_ = start;
    return Status::OutOfRange("buffer unpack at offset " + std::to_string(start) + ": " +
                              TypeTagName(static_cast<uint8_t>(tag)) + " of length " +
                              std::to_string(len) + " runs past the end (" +
                              std::to_string(data_.size() - start - 5) + " bytes left)");
  }
  std::span<const uint8_t> v = data_.subspan(pos_, len);
  pos_ += len;
  return v;
}

#define UKAI_READ_FIXED(Name, Type, Tag, Bytes, Expr) \
  Result<Type> Reader::Name() {                       \
    Result<const uint8_t*> p = Fixed(Tag, Bytes);     \
    if (!p.ok()) return p.status();                   \
    const uint8_t* v = *p;                            \
    return Expr;                                      \
  }

UKAI_READ_FIXED(GetU8, uint8_t, TypeTag::kU8, 1, v[0])
UKAI_READ_FIXED(GetU16, uint16_t, TypeTag::kU16, 2, wire::GetLe16(v))
UKAI_READ_FIXED(GetU32, uint32_t, TypeTag::kU32, 4, wire::GetLe32(v))
UKAI_READ_FIXED(GetU64, uint64_t, TypeTag::kU64, 8, wire::GetLe64(v))
UKAI_READ_FIXED(GetI8, int8_t, TypeTag::kI8, 1, static_cast<int8_t>(v[0]))
UKAI_READ_FIXED(GetI16, int16_t, TypeTag::kI16, 2, static_cast<int16_t>(wire::GetLe16(v)))
UKAI_READ_FIXED(GetI32, int32_t, TypeTag::kI32, 4, static_cast<int32_t>(wire::GetLe32(v)))
UKAI_READ_FIXED(GetI64, int64_t, TypeTag::kI64, 8, static_cast<int64_t>(wire::GetLe64(v)))
#undef UKAI_READ_FIXED

Result<float> Reader::GetF32() {
  Result<const uint8_t*> p = Fixed(TypeTag::kF32, 4);
  if (!p.ok()) return p.status();
  uint32_t bits = wire::GetLe32(*p);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

Result<double> Reader::GetF64() {
  Result<const uint8_t*> p = Fixed(TypeTag::kF64, 8);
  if (!p.ok()) return p.status();
  uint64_t bits = wire::GetLe64(*p);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

Result<bool> Reader::GetBool() {
  const size_t start = pos_;
  Result<const uint8_t*> p = Fixed(TypeTag::kBool, 1);
  if (!p.ok()) return p.status();
  if (**p > 1) {
    pos_ = start;
    return Status::InvalidArgument("buffer unpack at offset " + std::to_string(start) +
                                   ": bool value " + std::to_string(**p) + " is not 0 or 1");
  }
  return **p == 1;
}

Result<std::string_view> Reader::GetStringView() {
  Result<std::span<const uint8_t>> s = Sized(TypeTag::kString);
  if (!s.ok()) return s.status();
  return std::string_view(reinterpret_cast<const char*>(s->data()), s->size());
}

Result<std::string> Reader::GetString() {
  Result<std::string_view> s = GetStringView();
  if (!s.ok()) return s.status();
  return std::string(*s);
}

Result<std::span<const uint8_t>> Reader::GetBytes() { return Sized(TypeTag::kBytes); }

Result<Startpoint> Reader::GetStartpoint() {
  const size_t start = pos_;
  Result<std::span<const uint8_t>> s = Sized(TypeTag::kStartpoint);
  if (!s.ok()) return s.status();
  size_t used = 0;
  Result<Startpoint> sp = Startpoint::Deserialize(*s, &used);
  if (!sp.ok() || used != s->size()) {
    pos_ = start;
    Status why = sp.ok() ? Status::InvalidArgument("trailing bytes") : sp.status();
    return why.WithContext("buffer unpack at offset " + std::to_string(start) + ": startpoint");
  }
  return sp;
}

}  // namespace ukai::rt
