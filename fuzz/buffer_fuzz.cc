// libFuzzer target: typed buffer unpacking. Reads items as the next tag says (and, every
// other step, as a wrong type) until the end or an error; must never crash or read out of
// bounds, and a failed read must not move the reader.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "ukai/rt/buffer.hpp"

namespace {

// Reads one item of type `tag`; returns whether it succeeded.
bool ReadAs(ukai::rt::Reader& r, uint8_t tag) {
  using ukai::rt::TypeTag;
  switch (static_cast<TypeTag>(tag)) {
    case TypeTag::kU8:
      return r.GetU8().ok();
    case TypeTag::kU16:
      return r.GetU16().ok();
    case TypeTag::kU32:
      return r.GetU32().ok();
    case TypeTag::kU64:
      return r.GetU64().ok();
    case TypeTag::kI8:
      return r.GetI8().ok();
    case TypeTag::kI16:
      return r.GetI16().ok();
    case TypeTag::kI32:
      return r.GetI32().ok();
    case TypeTag::kI64:
      return r.GetI64().ok();
    case TypeTag::kF32:
      return r.GetF32().ok();
    case TypeTag::kF64:
      return r.GetF64().ok();
    case TypeTag::kBool:
      return r.GetBool().ok();
    case TypeTag::kString:
      return r.GetString().ok();
    case TypeTag::kBytes:
      return r.GetBytes().ok();
    case TypeTag::kStartpoint:
      return r.GetStartpoint().ok();
  }
  return false;  // unknown tag: every typed read refuses it
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ukai::rt::Reader r(std::span<const uint8_t>(data, size));
  for (int step = 0; !r.AtEnd(); ++step) {
    auto tag = r.PeekTag();
    if (!tag.ok()) std::abort();  // not at the end, so a tag byte is there
    const size_t before = r.offset();
    // Every other item: first try a wrong type, which must fail without moving.
    uint8_t wrong = static_cast<uint8_t>((static_cast<uint8_t>(*tag) % 14) + 1);
    if (step % 2 == 1 && wrong != static_cast<uint8_t>(*tag)) {
      if (ReadAs(r, wrong)) std::abort();
      if (r.offset() != before) std::abort();
    }
    if (!ReadAs(r, static_cast<uint8_t>(*tag))) {
      if (r.offset() != before) std::abort();
      break;
    }
    if (r.offset() <= before || r.offset() > size) std::abort();
  }
  return 0;
}
