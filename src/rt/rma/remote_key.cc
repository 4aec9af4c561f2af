// RemoteKey's byte form: u8 version (1), u64 runtime, u32 context, u32 access_id,
// u32 segment, u64 base, u64 length, u32 page_size (41 bytes), then the owner's RMA
// startpoint (Startpoint::Serialize). Little-endian.
#include <string>

#include "ukai/rt/rma.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

constexpr size_t kKeyFixedBytes = 41;
constexpr uint8_t kKeyVersion = 1;

}  // namespace

std::vector<uint8_t> RemoteKey::Serialize() const {
  std::vector<uint8_t> out(kKeyFixedBytes);
  uint8_t* p = out.data();
  p[0] = kKeyVersion;
  wire::PutLe64(p + 1, process.runtime);
  wire::PutLe32(p + 9, process.context);
  wire::PutLe32(p + 13, access_id);
  wire::PutLe32(p + 17, segment);
  wire::PutLe64(p + 21, base);
  wire::PutLe64(p + 29, length);
  wire::PutLe32(p + 37, page_size);
  route.SerializeTo(&out);
  return out;
}

Result<RemoteKey> RemoteKey::Parse(std::span<const uint8_t> in) {
  if (in.size() < kKeyFixedBytes) {
    return Status::ParseError("remote key: " + std::to_string(in.size()) +
                              " bytes, fewer than the 41 of its fixed part");
  }
  const uint8_t* p = in.data();
  if (p[0] != kKeyVersion) {
    return Status::ParseError("remote key: version " + std::to_string(p[0]) + " (want 1)");
  }
  RemoteKey k;
  k.process = {wire::GetLe64(p + 1), wire::GetLe32(p + 9)};
  k.access_id = wire::GetLe32(p + 13);
  k.segment = wire::GetLe32(p + 17);
  k.base = wire::GetLe64(p + 21);
  k.length = wire::GetLe64(p + 29);
  k.page_size = wire::GetLe32(p + 37);
  if (k.page_size == 0 || (k.page_size & (k.page_size - 1)) != 0) {
    return Status::ParseError("remote key: page_size " + std::to_string(k.page_size) +
                              " is not a power of two");
  }
  size_t used = 0;
  Result<Startpoint> sp = Startpoint::Deserialize(in.subspan(kKeyFixedBytes), &used);
  if (!sp.ok()) return Status::ParseError("remote key: route: " + sp.status().message());
  if (kKeyFixedBytes + used != in.size()) {
    return Status::ParseError("remote key: " + std::to_string(in.size() - kKeyFixedBytes - used) +
                              " trailing bytes");
  }
  if (sp->runtime() != k.process.runtime || sp->context() != k.process.context ||
      sp->endpoint() != kRmaEndpointId) {
    return Status::ParseError("remote key: route does not lead to the key's process");
  }
  k.route = *sp;
  return k;
}

}  // namespace ukai::rt
