#include "rt/rma/rma_wire.h"

#include <cstring>
#include <string>

#include "wire/rsr_frame.h"

namespace ukai::rt::internal {
namespace {

using wire::GetLe16;
using wire::GetLe32;
using wire::GetLe64;
using wire::PutLe16;
using wire::PutLe32;
using wire::PutLe64;

Status Bad(const std::string& what) { return Status::ParseError("rma request: " + what); }

bool ValidOpcode(uint8_t c) { return c >= 1 && c <= 8; }

}  // namespace

size_t RequestSize(const RmaRequest& r) {
  size_t n = kRequestHeaderBytes;
  if (r.flags & kReqHasReturn) n += 2 + r.return_route.size();
  if (r.op == RmaWireOp::kPut) n += r.data.size();
  if (r.op == RmaWireOp::kAtomic) n += r.atomics.size() * kAtomicOpBytes;
  return n;
}

void EncodeRequest(const RmaRequest& r, uint8_t* out) {
  out[0] = static_cast<uint8_t>(r.op);
  out[1] = r.flags;
  PutLe16(out + 2, 0);
  PutLe32(out + 4, r.segment);
  PutLe64(out + 8, r.op_id);
  PutLe64(out + 16, r.dest.runtime);
  PutLe32(out + 24, r.dest.context);
  PutLe32(out + 28, r.dest_access_id);
  PutLe64(out + 32, r.init.runtime);
  PutLe32(out + 40, r.init.context);
  PutLe32(out + 44, r.init_access_id);
  PutLe64(out + 48, r.offset);
  PutLe32(out + 56,
          r.op == RmaWireOp::kAtomic ? static_cast<uint32_t>(r.atomics.size()) : r.length);
  PutLe32(out + 60, r.op_offset);
  PutLe64(out + 64, r.flag);
  uint8_t* p = out + kRequestHeaderBytes;
  if (r.flags & kReqHasReturn) {
    PutLe16(p, static_cast<uint16_t>(r.return_route.size()));
    if (!r.return_route.empty()) std::memcpy(p + 2, r.return_route.data(), r.return_route.size());
    p += 2 + r.return_route.size();
  }
  if (r.op == RmaWireOp::kPut && !r.data.empty()) std::memcpy(p, r.data.data(), r.data.size());
  if (r.op == RmaWireOp::kAtomic) {
    for (const AtomicOp& a : r.atomics) {
      p[0] = static_cast<uint8_t>(a.code);
      p[1] = a.width;
      PutLe16(p + 2, 0);
      PutLe32(p + 4, 0);
      PutLe64(p + 8, a.offset);
      PutLe64(p + 16, a.operand);
      PutLe64(p + 24, a.compare);
      p += kAtomicOpBytes;
    }
  }
}

Result<RmaRequest> DecodeRequest(std::span<const uint8_t> in) {
  if (in.size() < kRequestHeaderBytes) {
    return Bad("truncated header: " + std::to_string(in.size()) + " of 72 bytes");
  }
  const uint8_t* h = in.data();
  RmaRequest r;
  if (h[0] < 1 || h[0] > 6) {
    return Bad("op " + std::to_string(h[0]) + " is not put/get/atomic/one-sided put/get/done");
  }
  r.op = static_cast<RmaWireOp>(h[0]);
  r.flags = h[1];
  if (r.flags & ~(kReqHasReturn | kReqHasFlag)) {
    return Bad("unknown flags 0x" + std::to_string(r.flags));
  }
  if (GetLe16(h + 2) != 0) return Bad("reserved field at offset 2 is not 0");
  r.segment = GetLe32(h + 4);
  r.op_id = GetLe64(h + 8);
  r.dest = {GetLe64(h + 16), GetLe32(h + 24)};
  r.dest_access_id = GetLe32(h + 28);
  r.init = {GetLe64(h + 32), GetLe32(h + 40)};
  r.init_access_id = GetLe32(h + 44);
  r.offset = GetLe64(h + 48);
  r.length = GetLe32(h + 56);
  r.op_offset = GetLe32(h + 60);
  r.flag = GetLe64(h + 64);
  size_t pos = kRequestHeaderBytes;
  if (r.flags & kReqHasReturn) {
    if (in.size() < pos + 2) return Bad("truncated return route length");
    const size_t n = GetLe16(h + pos);
    if (in.size() < pos + 2 + n)
      return Bad("return route of " + std::to_string(n) + " bytes truncated");
    r.return_route = in.subspan(pos + 2, n);
    pos += 2 + n;
  }
  const size_t rest = in.size() - pos;
  if (r.op == RmaWireOp::kAtomic) {
    if (r.length == 0 || r.length > kRmaMaxAtomicOps) {
      return Bad("atomic op count " + std::to_string(r.length) + " not in 1..128");
    }
    if (rest != size_t{r.length} * kAtomicOpBytes) {
      return Bad(std::to_string(rest) + " bytes of atomic ops for " + std::to_string(r.length) +
                 " ops");
    }
    for (uint32_t i = 0; i < r.length; ++i) {
      const uint8_t* p = h + pos + i * kAtomicOpBytes;
      if (!ValidOpcode(p[0]))
        return Bad("atomic op " + std::to_string(i) + ": bad opcode " + std::to_string(p[0]));
      if (p[1] != 4 && p[1] != 8)
        return Bad("atomic op " + std::to_string(i) + ": width " + std::to_string(p[1]));
      if (GetLe16(p + 2) != 0 || GetLe32(p + 4) != 0)
        return Bad("atomic op " + std::to_string(i) + ": reserved not 0");
      r.atomics.push_back({static_cast<AtomicOpcode>(p[0]), p[1], GetLe64(p + 8), GetLe64(p + 16),
                           GetLe64(p + 24)});
    }
    return r;
  }
  if (IsOneSidedAsk(r.op) || r.op == RmaWireOp::kOneSidedDone) {  // no data, no 4 KiB limit
    if (rest != 0) return Bad(std::to_string(rest) + " data bytes after a one-sided ask");
    if (r.length == 0) return Bad("one-sided ask of 0 bytes");
    return r;
  }
  if (r.length > kRmaMaxPacketBytes) {
    return Bad("packet length " + std::to_string(r.length) + " over 4096 bytes");
  }
  const size_t want = r.op == RmaWireOp::kPut ? r.length : 0;
  if (rest != want) {
    return Bad(std::to_string(rest) + " data bytes for length " + std::to_string(r.length));
  }
  r.data = in.subspan(pos, want);
  return r;
}

size_t ReplySize(const RmaReply& r) { return kReplyHeaderBytes + r.message.size() + r.data.size(); }

void EncodeReply(const RmaReply& r, uint8_t* out) {
  out[0] = static_cast<uint8_t>(r.op);
  out[1] = static_cast<uint8_t>(r.code);
  PutLe16(out + 2, static_cast<uint16_t>(r.message.size()));
  PutLe32(out + 4, static_cast<uint32_t>(r.data.size()));
  PutLe64(out + 8, r.op_id);
  PutLe32(out + 16, r.op_offset);
  PutLe32(out + 20, 0);
  uint8_t* p = out + kReplyHeaderBytes;
  if (!r.message.empty()) std::memcpy(p, r.message.data(), r.message.size());
  if (!r.data.empty()) std::memcpy(p + r.message.size(), r.data.data(), r.data.size());
}

Result<RmaReply> DecodeReply(std::span<const uint8_t> in) {
  if (in.size() < kReplyHeaderBytes) return Status::ParseError("rma reply: truncated header");
  const uint8_t* h = in.data();
  RmaReply r;
  if (h[0] < 1 || h[0] > 5) return Status::ParseError("rma reply: bad op " + std::to_string(h[0]));
  r.op = static_cast<RmaWireOp>(h[0]);
  if (h[1] > static_cast<uint8_t>(StatusCode::kInternal)) {
    return Status::ParseError("rma reply: bad status code " + std::to_string(h[1]));
  }
  r.code = static_cast<StatusCode>(h[1]);
  const size_t msg = GetLe16(h + 2), data = GetLe32(h + 4);
  r.op_id = GetLe64(h + 8);
  r.op_offset = GetLe32(h + 16);
  if (GetLe32(h + 20) != 0) return Status::ParseError("rma reply: reserved field not 0");
  if (in.size() != kReplyHeaderBytes + msg + data) {
    return Status::ParseError("rma reply: " + std::to_string(in.size()) + " bytes, header says " +
                              std::to_string(kReplyHeaderBytes + msg + data));
  }
  r.message = {reinterpret_cast<const char*>(h + kReplyHeaderBytes), msg};
  r.data = in.subspan(kReplyHeaderBytes + msg, data);
  return r;
}

}  // namespace ukai::rt::internal
