// The collectives' message codec.
#include "rt/coll/coll_wire.h"

#include <cstring>

#include "ukai/rt/group.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt::coll {

std::string MsgKindName(MsgKind k) {
  static const char* const kNames[] = {
      "?",   "data",  "rts",        "cts",          "fin",           "abort", "bye",
      "p2p", "relay", "shrink-ask", "shrink-state", "shrink-commit", "put",   "wrote"};
  const auto i = static_cast<uint8_t>(k);
  return i <= kLastMsgKind ? kNames[i] : "kind " + std::to_string(i);
}

void EncodeHeader(const Header& h, uint8_t* p) {
  p[0] = kCollMagic;
  p[1] = static_cast<uint8_t>(h.kind);
  p[2] = h.coll;
  p[3] = h.algorithm;
  p[4] = h.dtype;
  p[5] = h.redop;
  wire::PutLe16(p + 6, 0);
  wire::PutLe64(p + 8, h.group);
  wire::PutLe32(p + 16, h.seq);
  wire::PutLe32(p + 20, h.src);
  wire::PutLe32(p + 24, h.tag);
  wire::PutLe32(p + 28, h.root);
  wire::PutLe64(p + 32, h.count);
  wire::PutLe64(p + 40, h.total);
  wire::PutLe64(p + 48, h.offset);
}

namespace {

Status Bad(const std::string& what) {
  return Status(StatusCode::kParseError, "collective message: " + what);
}

}  // namespace

Result<Header> DecodeMessage(std::span<const uint8_t> payload) {
  if (payload.size() < kCollHeaderBytes) {
    return Bad(std::to_string(payload.size()) + " bytes, shorter than the 56-byte header");
  }
  const uint8_t* p = payload.data();
  if (p[0] != kCollMagic) return Bad("bad magic " + std::to_string(p[0]));
  if (p[1] == 0 || p[1] > kLastMsgKind) return Bad("unknown kind " + std::to_string(p[1]));
  Header h;
  h.kind = static_cast<MsgKind>(p[1]);
  h.coll = p[2];
  h.algorithm = p[3];
  h.dtype = p[4];
  h.redop = p[5];
  if (h.coll > kCollectiveCount) return Bad("collective " + std::to_string(h.coll));
  if (h.algorithm > static_cast<uint8_t>(Algorithm::kRelay)) {
    return Bad("algorithm " + std::to_string(h.algorithm));
  }
  if (h.dtype > static_cast<uint8_t>(DataType::kDouble))
    return Bad("dtype " + std::to_string(h.dtype));
  if (h.redop > static_cast<uint8_t>(ReduceOp::kUser))
    return Bad("redop " + std::to_string(h.redop));
  if (wire::GetLe16(p + 6) != 0) return Bad("flags must be 0");
  h.group = wire::GetLe64(p + 8);
  h.seq = wire::GetLe32(p + 16);
  h.src = wire::GetLe32(p + 20);
  h.tag = wire::GetLe32(p + 24);
  h.root = wire::GetLe32(p + 28);
  h.count = wire::GetLe64(p + 32);
  h.total = wire::GetLe64(p + 40);
  h.offset = wire::GetLe64(p + 48);
  const std::span<const uint8_t> body = payload.subspan(kCollHeaderBytes);
  switch (h.kind) {
    case MsgKind::kData:
    case MsgKind::kP2p:
    case MsgKind::kRelay:
      if (h.offset > h.total || body.size() > h.total - h.offset) {
        return Bad(MsgKindName(h.kind) + " segment of " + std::to_string(body.size()) +
                   " bytes at offset " + std::to_string(h.offset) + " exceeds its total " +
                   std::to_string(h.total));
      }
      break;
    case MsgKind::kAbort:
      if (body.size() < 4) return Bad("abort without a status code");
      break;
    case MsgKind::kShrinkState:
    case MsgKind::kShrinkCommit:
      if (body.size() < 4 || (body.size() - 4) % 4 != 0 ||
          wire::GetLe32(body.data()) != (body.size() - 4) / 4) {
        return Bad("shrink message with a malformed rank list");
      }
      break;
    default:
      if (!body.empty()) return Bad(MsgKindName(h.kind) + " with a body");
  }
  return h;
}

Buffer MakeMessage(const Header& h, std::span<const uint8_t> body) {
  Buffer b(kCollHeaderBytes + body.size());
  ByteBlock& blk = b.block();
  const size_t at = blk.size();
  blk.Resize(at + kCollHeaderBytes + body.size());
  EncodeHeader(h, blk.data() + at);
  if (!body.empty()) std::memcpy(blk.data() + at + kCollHeaderBytes, body.data(), body.size());
  return b;
}

std::vector<uint8_t> EncodeAbort(const Status& s) {
  std::vector<uint8_t> out(4 + s.message().size());
  wire::PutLe32(out.data(), static_cast<uint32_t>(s.code()));
  std::memcpy(out.data() + 4, s.message().data(), s.message().size());
  return out;
}

Status DecodeAbort(std::span<const uint8_t> body) {
  const uint32_t code = wire::GetLe32(body.data());
  const std::string text(reinterpret_cast<const char*>(body.data()) + 4, body.size() - 4);
  if (code == 0 || code > static_cast<uint32_t>(kLastStatusCode)) {
    return Status::Internal(text);
  }
  return Status(static_cast<StatusCode>(code), text);
}

std::vector<uint8_t> EncodeRanks(const std::vector<int>& ranks) {
  std::vector<uint8_t> out(4 + 4 * ranks.size());
  wire::PutLe32(out.data(), static_cast<uint32_t>(ranks.size()));
  for (size_t i = 0; i < ranks.size(); ++i) {
    wire::PutLe32(out.data() + 4 + 4 * i, static_cast<uint32_t>(ranks[i]));
  }
  return out;
}

Result<std::vector<int>> DecodeRanks(std::span<const uint8_t> body, int group_size) {
  std::vector<int> out;
  const uint32_t n = wire::GetLe32(body.data());
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = wire::GetLe32(body.data() + 4 + 4 * i);
    if (r >= static_cast<uint32_t>(group_size)) {
      return Bad("rank " + std::to_string(r) + " in a group of " + std::to_string(group_size));
    }
    out.push_back(static_cast<int>(r));
  }
  return out;
}

}  // namespace ukai::rt::coll
