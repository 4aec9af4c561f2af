// RemoteKey's byte form: u8 version, u64 runtime, u32 context, u32 access_id,
// u32 segment, u64 base, u64 length, u32 page_size (41 bytes); version 2 (keys of Allocate'd
// segments, nonce != 0) then has u64 host, u64 nonce, u16 n + n bytes control_name, u16 m +
// m bytes memory_name (shm object names); then the owner's RMA startpoint
// (Startpoint::Serialize). Version 1 has no direct part (nonce 0). Little-endian.
#include <string>

#include "rt/modules/shm/shm_segment.h"

#include "ukai/rt/rma.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace {

constexpr size_t kKeyFixedBytes = 41;
constexpr uint8_t kKeyVersion = 1;
constexpr uint8_t kKeyVersionDirect = 2;

void PutName(const std::string& name, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 2 + name.size());
  wire::PutLe16(out->data() + at, static_cast<uint16_t>(name.size()));
  std::copy(name.begin(), name.end(), out->begin() + static_cast<ptrdiff_t>(at + 2));
}

// Reads a u16-prefixed shm object name at in[*at]; errors name `field`.
Result<std::string> GetName(std::span<const uint8_t> in, size_t* at, const char* field) {
  if (in.size() - *at < 2) {
    return Status::ParseError(std::string("remote key: ") + field + ": truncated length");
  }
  const size_t n = wire::GetLe16(in.data() + *at);
  if (in.size() - *at - 2 < n) {
    return Status::ParseError(std::string("remote key: ") + field + ": " + std::to_string(n) +
                              " bytes announced, " + std::to_string(in.size() - *at - 2) +
                              " present");
  }
  std::string name(reinterpret_cast<const char*>(in.data() + *at + 2), n);
  *at += 2 + n;
  if (!shm::IsShmName(name)) {
    return Status::ParseError(std::string("remote key: ") + field +
                              " is not a ukai shared-memory object name");
  }
  return name;
}

// The version-2 part after the fixed 41 bytes; *at advances past it.
Status ParseDirect(std::span<const uint8_t> in, size_t* at, RemoteKey* k) {
  if (in.size() - *at < 16) return Status::ParseError("remote key: host/nonce: truncated");
  k->host = wire::GetLe64(in.data() + *at);
  k->nonce = wire::GetLe64(in.data() + *at + 8);
  *at += 16;
  if (k->nonce == 0) return Status::ParseError("remote key: nonce 0 in a version 2 key");
  if (k->host == 0) return Status::ParseError("remote key: host 0 in a version 2 key");
  Result<std::string> control = GetName(in, at, "control_name");
  if (!control.ok()) return control.status();
  Result<std::string> memory = GetName(in, at, "memory_name");
  if (!memory.ok()) return memory.status();
  k->control_name = std::move(*control);
  k->memory_name = std::move(*memory);
  return Status::Ok();
}

}  // namespace

std::vector<uint8_t> RemoteKey::Serialize() const {
  std::vector<uint8_t> out(kKeyFixedBytes);
  uint8_t* p = out.data();
  const bool direct = nonce != 0;
  p[0] = direct ? kKeyVersionDirect : kKeyVersion;
  wire::PutLe64(p + 1, process.runtime);
  wire::PutLe32(p + 9, process.context);
  wire::PutLe32(p + 13, access_id);
  wire::PutLe32(p + 17, segment);
  wire::PutLe64(p + 21, base);
  wire::PutLe64(p + 29, length);
  wire::PutLe32(p + 37, page_size);
  if (direct) {
    out.resize(kKeyFixedBytes + 16);
    wire::PutLe64(out.data() + kKeyFixedBytes, host);
    wire::PutLe64(out.data() + kKeyFixedBytes + 8, nonce);
    PutName(control_name, &out);
    PutName(memory_name, &out);
  }
  route.SerializeTo(&out);
  return out;
}

Result<RemoteKey> RemoteKey::Parse(std::span<const uint8_t> in) {
  if (in.size() < kKeyFixedBytes) {
    return Status::ParseError("remote key: " + std::to_string(in.size()) +
                              " bytes, fewer than the 41 of its fixed part");
  }
  const uint8_t* p = in.data();
  if (p[0] != kKeyVersion && p[0] != kKeyVersionDirect) {
    return Status::ParseError("remote key: version " + std::to_string(p[0]) + " (want 1 or 2)");
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
  size_t at = kKeyFixedBytes;
  if (p[0] == kKeyVersionDirect) {
    if (Status d = ParseDirect(in, &at, &k); !d.ok()) return d;
  }
  size_t used = 0;
  Result<Startpoint> sp = Startpoint::Deserialize(in.subspan(at), &used);
  if (!sp.ok()) return Status::ParseError("remote key: route: " + sp.status().message());
  if (at + used != in.size()) {
    return Status::ParseError("remote key: " + std::to_string(in.size() - at - used) +
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
