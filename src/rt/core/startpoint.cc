#include "ukai/rt/startpoint.hpp"

#include <string>

#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

constexpr uint8_t kStartpointVersion = 1;
constexpr std::string_view kTextPrefix = "ukai-sp1:";

// A bounds-checked little-endian cursor for the decoders below.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> in, std::string what) : in_(in), what_(std::move(what)) {}
  bool Need(size_t n, const char* field) {
    if (in_.size() - pos_ >= n) return true;
    if (error_.ok()) {
      error_ = Status::OutOfRange(what_ + ": truncated at offset " + std::to_string(pos_) +
                                  " reading " + field + " (need " + std::to_string(n) + " bytes, " +
                                  std::to_string(in_.size() - pos_) + " left)");
    }
    return false;
  }
  uint8_t U8(const char* f) { return Need(1, f) ? in_[pos_++] : 0; }
  uint16_t U16(const char* f) { return Need(2, f) ? Take<uint16_t>(wire::GetLe16, 2) : 0; }
  uint32_t U32(const char* f) { return Need(4, f) ? Take<uint32_t>(wire::GetLe32, 4) : 0; }
  uint64_t U64(const char* f) { return Need(8, f) ? Take<uint64_t>(wire::GetLe64, 8) : 0; }
  std::span<const uint8_t> Bytes(size_t n, const char* f) {
    if (!Need(n, f)) return {};
    auto s = in_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  void Fail(const std::string& msg) {
    if (error_.ok()) {
      error_ = Status::ParseError(what_ + ": " + msg + " at offset " + std::to_string(pos_));
    }
  }
  const Status& error() const { return error_; }
  size_t pos() const { return pos_; }

 private:
  template <typename T, typename F>
  T Take(F f, size_t n) {
    T v = f(in_.data() + pos_);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> in_;
  std::string what_;
  size_t pos_ = 0;
  Status error_;
};

void Put16(std::vector<uint8_t>* out, uint16_t v) {
  out->push_back(static_cast<uint8_t>(v));
  out->push_back(static_cast<uint8_t>(v >> 8));
}
void Put32(std::vector<uint8_t>* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Put64(std::vector<uint8_t>* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

std::string RuntimeIdString(RuntimeId id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) s.push_back(kHex[(id >> shift) & 15]);
  return s;
}

const Descriptor* DescriptorTable::Find(std::string_view module) const {
  for (const Descriptor& d : entries) {
    if (d.module == module) return &d;
  }
  return nullptr;
}

void DescriptorTable::EncodeTo(std::vector<uint8_t>* out) const {
  Put64(out, runtime);
  out->push_back(static_cast<uint8_t>(entries.size()));
  for (const Descriptor& d : entries) {
    out->push_back(static_cast<uint8_t>(d.module.size()));
    out->insert(out->end(), d.module.begin(), d.module.end());
    Put16(out, static_cast<uint16_t>(d.bytes.size()));
    out->insert(out->end(), d.bytes.begin(), d.bytes.end());
  }
}

Result<DescriptorTable> DescriptorTable::Decode(std::span<const uint8_t> in, size_t* consumed) {
  Cursor c(in, "descriptor table");
  DescriptorTable t;
  t.runtime = c.U64("runtime id");
  if (c.error().ok() && t.runtime == 0) c.Fail("runtime id 0");
  const uint8_t n = c.U8("count");
  if (n > kMaxDescriptors) c.Fail("count " + std::to_string(n) + " exceeds the limit");
  for (uint8_t i = 0; i < n && c.error().ok(); ++i) {
    Descriptor d;
    const uint8_t name_len = c.U8("module name length");
    if (name_len == 0 || name_len > kMaxModuleNameLen) {
      c.Fail("module name length " + std::to_string(name_len) + " out of range");
      break;
    }
    auto name = c.Bytes(name_len, "module name");
    d.module.assign(name.begin(), name.end());
    const uint16_t len = c.U16("descriptor length");
    if (len > kMaxDescriptorBytes) {
      c.Fail("descriptor length " + std::to_string(len) + " exceeds the limit");
      break;
    }
    auto bytes = c.Bytes(len, "descriptor bytes");
    d.bytes.assign(bytes.begin(), bytes.end());
    if (c.error().ok()) t.entries.push_back(std::move(d));
  }
  if (!c.error().ok()) return c.error();
  if (consumed != nullptr) *consumed = c.pos();
  return t;
}

Startpoint::Startpoint(std::shared_ptr<const DescriptorTable> table, ContextId context,
                       EndpointId endpoint, std::optional<uint64_t> address)
    : table_(std::move(table)), context_(context), endpoint_(endpoint), address_(address) {}

const DescriptorTable& Startpoint::descriptors() const {
  static const DescriptorTable kEmpty;  // immutable constant, not shared state
  return table_ ? *table_ : kEmpty;
}

Startpoint Startpoint::WithAddress(uint64_t address) const {
  Startpoint s = *this;
  s.address_ = address;
  return s;
}

void Startpoint::SerializeTo(std::vector<uint8_t>* out) const {
  out->push_back(kStartpointVersion);
  Put32(out, context_);
  Put32(out, endpoint_);
  out->push_back(address_.has_value() ? 1 : 0);
  Put64(out, address_.value_or(0));
  descriptors().EncodeTo(out);
}

std::vector<uint8_t> Startpoint::Serialize() const {
  std::vector<uint8_t> out;
  out.reserve(64);
  SerializeTo(&out);
  return out;
}

Result<Startpoint> Startpoint::Deserialize(std::span<const uint8_t> in, size_t* consumed) {
  Cursor c(in, "startpoint");
  const uint8_t version = c.U8("version");
  if (c.error().ok() && version != kStartpointVersion) {
    c.Fail("unsupported version " + std::to_string(version));
  }
  const uint32_t context = c.U32("context id");
  const uint32_t endpoint = c.U32("endpoint id");
  const uint8_t has_address = c.U8("address flag");
  if (c.error().ok() && has_address > 1) c.Fail("address flag " + std::to_string(has_address));
  const uint64_t address = c.U64("address");
  if (c.error().ok() && has_address == 0 && address != 0) c.Fail("address without its flag");
  if (c.error().ok() && (context == 0 || endpoint == 0)) c.Fail("null context or endpoint id");
  if (!c.error().ok()) return c.error();
  size_t used = 0;
  Result<DescriptorTable> table = DescriptorTable::Decode(in.subspan(c.pos()), &used);
  if (!table.ok()) return table.status().WithContext("startpoint");
  if (consumed != nullptr) *consumed = c.pos() + used;
  std::optional<uint64_t> addr;
  if (has_address != 0) addr = address;
  return Startpoint(std::make_shared<const DescriptorTable>(std::move(*table)), context, endpoint,
                    addr);
}

std::string Startpoint::ToString() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::vector<uint8_t> bytes = Serialize();
  std::string s(kTextPrefix);
  for (uint8_t b : bytes) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

Result<Startpoint> Startpoint::FromString(std::string_view text) {
  auto is_space = [](char ch) { return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.substr(0, kTextPrefix.size()) != kTextPrefix) {
    return Status::ParseError("startpoint text must start with '" + std::string(kTextPrefix) + "'");
  }
  text.remove_prefix(kTextPrefix.size());
  if (text.size() % 2 != 0) return Status::ParseError("startpoint text: odd number of digits");
  auto digit = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> bytes(text.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::ParseError("startpoint text: bad hex digit at position " +
                                std::to_string(kTextPrefix.size() + 2 * i));
    }
    bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  size_t used = 0;
  Result<Startpoint> sp = Deserialize(bytes, &used);
  if (!sp.ok()) return sp.status();
  if (used != bytes.size()) return Status::ParseError("startpoint text: trailing bytes");
  return sp;
}

}  // namespace ukai::rt
