#include "wire/rsr_frame.h"

#include <cstdio>
#include <string>

namespace ukai::wire {
namespace {

bool KnownKind(uint8_t k) {
  return k >= static_cast<uint8_t>(FrameKind::kRsr) &&
         k <= static_cast<uint8_t>(FrameKind::kBarrier);
}

Status Bad(const std::string& what) { return Status::ParseError("rsr frame: " + what); }

// DecodeHeader's checks in order, writing into `*h`: the first that fails, or kOk. No
// Status on the way (a frame is decoded per RSR on the receive path); Explain() words it.
enum class Check {
  kOk,
  kTruncated,
  kMagic,
  kVersion,
  kKind,
  kHeaderLen,
  kExtension,
  kFlags,
  kPayloadLen,
  kReserved
};

inline Check CheckHeader(std::span<const uint8_t> in, uint32_t max_payload, FrameHeader* h) {
  if (in.size() < kHeaderSize) [[unlikely]]
    return Check::kTruncated;
  const uint8_t* p = in.data();
  if (GetLe32(p) != kMagic) [[unlikely]]
    return Check::kMagic;
  if (p[4] != kVersion) [[unlikely]]
    return Check::kVersion;
  if (!KnownKind(p[5])) [[unlikely]]
    return Check::kKind;
  h->kind = static_cast<FrameKind>(p[5]);
  h->header_len = GetLe16(p + 6);
  if (h->header_len < kHeaderSize) [[unlikely]]
    return Check::kHeaderLen;
  if (in.size() < h->header_len) [[unlikely]]
    return Check::kExtension;
  h->flags = GetLe32(p + 8);
  if ((h->flags & ~kKnownFlags) != 0) [[unlikely]]
    return Check::kFlags;
  h->payload_len = GetLe32(p + 12);
  if (h->payload_len > max_payload) [[unlikely]]
    return Check::kPayloadLen;
  h->source = GetLe64(p + 16);
  h->target = GetLe64(p + 24);
  h->context = GetLe32(p + 32);
  h->endpoint = GetLe32(p + 36);
  h->handler = GetLe32(p + 40);
  if (GetLe32(p + 44) != 0) [[unlikely]]
    return Check::kReserved;
  h->address = GetLe64(p + 48);
  return Check::kOk;
}

// The Status of a failed CheckHeader(in, max_payload, ...) (`c` != kOk).
Status Explain(Check c, std::span<const uint8_t> in, uint32_t max_payload) {
  const uint8_t* p = in.data();
  switch (c) {
    case Check::kTruncated:
      return Status::OutOfRange("rsr frame: truncated header (" + std::to_string(in.size()) +
                                " of " + std::to_string(kHeaderSize) + " bytes)");
    case Check::kMagic:
      return Bad("bad magic " + Hex32(GetLe32(p)) + " at offset 0 (want " + Hex32(kMagic) + ")");
    case Check::kVersion:
      return Bad("unsupported version " + std::to_string(p[4]) + " at offset 4 (want " +
                 std::to_string(kVersion) + ")");
    case Check::kKind:
      return Bad("unknown kind " + std::to_string(p[5]) + " at offset 5");
    case Check::kHeaderLen:
      return Bad("header_len " + std::to_string(GetLe16(p + 6)) + " < " +
                 std::to_string(kHeaderSize) + " at offset 6");
    case Check::kExtension:
      return Status::OutOfRange("rsr frame: truncated extended header (" +
                                std::to_string(in.size()) + " of " +
                                std::to_string(GetLe16(p + 6)) + " bytes)");
    case Check::kFlags:
      return Bad("unknown flag bits " + Hex32(GetLe32(p + 8) & ~kKnownFlags) + " at offset 8");
    case Check::kPayloadLen:
      return Bad("payload_len " + std::to_string(GetLe32(p + 12)) + " exceeds the limit " +
                 std::to_string(max_payload) + " at offset 12");
    case Check::kReserved:
      return Bad("reserved field at offset 44 is not zero");
    case Check::kOk:
      break;
  }
  return Status::Ok();
}

}  // namespace

void EncodeHeader(const FrameHeader& h, std::span<uint8_t> out) {
  uint8_t* p = out.data();
  PutLe32(p + 0, kMagic);
  p[4] = kVersion;
  p[5] = static_cast<uint8_t>(h.kind);
  PutLe16(p + 6, static_cast<uint16_t>(kHeaderSize));
  PutLe32(p + 8, h.flags);
  PutLe32(p + 12, h.payload_len);
  PutLe64(p + 16, h.source);
  PutLe64(p + 24, h.target);
  PutLe32(p + 32, h.context);
  PutLe32(p + 36, h.endpoint);
  PutLe32(p + 40, h.handler);
  PutLe32(p + 44, 0);
  PutLe64(p + 48, h.address);
}

Result<FrameHeader> DecodeHeader(std::span<const uint8_t> in, uint32_t max_payload) {
  FrameHeader h;
  if (const Check c = CheckHeader(in, max_payload, &h); c != Check::kOk) {
    return Explain(c, in, max_payload);
  }
  return h;
}

Result<FrameView> DecodeFrame(std::span<const uint8_t> in, uint32_t max_payload) {
  FrameView v;
  const Check c = CheckHeader(in, max_payload, &v.header);
  const size_t want = v.header.frame_size();
  if (c == Check::kOk && in.size() == want) [[likely]] {
    v.payload = in.subspan(v.header.header_len, v.header.payload_len);
    return v;
  }
  if (c != Check::kOk) return Explain(c, in, max_payload);
  if (in.size() < want) {
    return Status::OutOfRange("rsr frame: truncated payload (" + std::to_string(in.size()) +
                              " of " + std::to_string(want) + " bytes)");
  }
  return Bad(std::to_string(in.size() - want) + " trailing bytes after a " + std::to_string(want) +
             "-byte frame");
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

}  // namespace ukai::wire
