#include "wire/gateway_packet.h"

#include <string>

#include "wire/crc32.h"

namespace ukai::wire {
namespace {

std::string Str(size_t v) { return std::to_string(v); }

std::string Hex(uint32_t v) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

size_t PaddingFor(size_t before_crc) { return (4 - before_crc % 4) % 4; }

// Sequential big-endian reader that names the field it fails on.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}

  Status Need(size_t n, const char* field) const {
    if (in_.size() - at_ >= n) return Status::Ok();
    return Status::OutOfRange("gateway packet truncated: " + std::string(field) + " needs " +
                              Str(n) + " byte(s) at offset " + Str(at_) + ", the input has " +
                              Str(in_.size()));
  }
  Result<uint32_t> Uint(size_t bytes, const char* field) {
    UKAI_RETURN_IF_ERROR(Need(bytes, field));
    uint32_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | in_[at_ + i];
    at_ += bytes;
    return v;
  }
  Status Detour(const char* count_field, const char* via_field, std::vector<uint32_t>* out) {
    const size_t count_at = at_;
    Result<uint32_t> n = Uint(1, count_field);
    if (!n.ok()) return n.status();
    if (*n > kMaxVia) {
      return Status::ParseError("gateway packet: " + std::string(count_field) + " = " + Str(*n) +
                                " at offset " + Str(count_at) + " exceeds " + Str(kMaxVia) +
                                " via nodes");
    }
    for (uint32_t i = 0; i < *n; ++i) {
      Result<uint32_t> via = Uint(4, via_field);
      if (!via.ok()) return via.status();
      out->push_back(*via);
    }
    return Status::Ok();
  }
  size_t at() const { return at_; }
  std::span<const uint8_t> Take(size_t n) {
    std::span<const uint8_t> s = in_.subspan(at_, n);
    at_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> in_;
  size_t at_ = 0;
};

// Writes into `*out` from its start (its capacity is reused).
class Writer {
 public:
  Writer(size_t size, std::vector<uint8_t>* out) : out_(*out) {
    out_.clear();
    out_.reserve(size);
  }
  void Uint(uint32_t v, size_t bytes) {
    for (size_t i = bytes; i > 0; --i) out_.push_back(static_cast<uint8_t>(v >> (8 * (i - 1))));
  }
  void Detour(const std::vector<uint32_t>& via) {
    Uint(static_cast<uint32_t>(via.size()), 1);
    for (uint32_t v : via) Uint(v, 4);
  }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t>& out_;
};

// The encoded size of `p` with a Part C of `frame_bytes` bytes.
size_t SizeWith(const GatewayPacket& p, size_t frame_bytes) {
  size_t n = 2 + 4 * p.detour.size() + 4 + 2;
  if (p.has_command) n += 1 + 4 * p.command.return_detour.size() + 4 + 4 + 1;
  n += 2 + frame_bytes;
  return n + PaddingFor(n) + 4;
}

// `p` with a Part C of `frame_bytes` bytes.
Status CheckEncodable(const GatewayPacket& p, size_t frame_bytes) {
  auto bad = [](const std::string& m) { return Status::InvalidArgument("gateway packet: " + m); };
  if (p.detour.size() > kMaxVia) return bad("routing detour has more than 4 via nodes");
  if (p.has_command && p.command.return_detour.size() > kMaxVia) {
    return bad("command detour has more than 4 via nodes");
  }
  if (p.broadcast && (!p.detour.empty() || p.dst != kBroadcastNode)) {
    return bad("a broadcast carries no detour and dst 0xFFFFFFFF");
  }
  if (!p.broadcast && p.dst == kBroadcastNode) return bad("dst 0xFFFFFFFF without broadcast");
  if (p.has_command && (p.command.cmd & ~kKnownCmds) != 0) {
    return bad("unknown cmd bits " + Hex(p.command.cmd));
  }
  if (frame_bytes < kMinFrameBytes || frame_bytes > kMaxFrameBytes) {
    return bad("Ethernet frame of " + Str(frame_bytes) + " bytes (must be 14.." +
               Str(kMaxFrameBytes) + ")");
  }
  if (SizeWith(p, frame_bytes) > kMaxPacketBytes) return bad("longer than 65535 bytes");
  return Status::Ok();
}

}  // namespace

size_t EncodedSize(const GatewayPacket& p) { return SizeWith(p, p.frame.size()); }

Result<std::vector<uint8_t>> EncodePacket(const GatewayPacket& p) {
  std::vector<uint8_t> out;
  UKAI_RETURN_IF_ERROR(EncodePacketInto(p, p.frame, &out));
  return out;
}

Status EncodePacketInto(const GatewayPacket& p, std::span<const uint8_t> frame,
                        std::vector<uint8_t>* out) {
  UKAI_RETURN_IF_ERROR(CheckEncodable(p, frame.size()));
  const size_t size = SizeWith(p, frame.size());
  Writer w(size, out);
  w.Uint((p.to_nic ? kFlagToNic : 0) | (p.broadcast ? kFlagBroadcast : 0) |
             (p.has_command ? kFlagCommand : 0) | (p.inbound ? kFlagInbound : 0),
         1);
  w.Detour(p.detour);
  w.Uint(p.dst, 4);
  w.Uint(static_cast<uint32_t>(size), 2);
  if (p.has_command) {
    w.Detour(p.command.return_detour);
    w.Uint(p.command.src, 4);
    w.Uint(p.command.dst, 4);
    w.Uint(p.command.cmd, 1);
  }
  w.Uint(static_cast<uint32_t>(frame.size()), 2);
  std::vector<uint8_t>& bytes = w.bytes();
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  bytes.resize(bytes.size() + PaddingFor(bytes.size()), 0);
  w.Uint(Crc32(bytes), 4);
  return Status::Ok();
}

namespace {

Status DecodeHeader(Reader& r, size_t input_size, GatewayPacket* p) {
  Result<uint32_t> flags = r.Uint(1, "flags");
  if (!flags.ok()) return flags.status();
  if ((*flags & ~uint32_t{kKnownPacketFlags}) != 0) {
    return Status::ParseError("gateway packet: flags " + Hex(*flags) +
                              " at offset 0 has unknown bits (known: 0x0F)");
  }
  p->to_nic = (*flags & kFlagToNic) != 0;
  p->broadcast = (*flags & kFlagBroadcast) != 0;
  p->has_command = (*flags & kFlagCommand) != 0;
  p->inbound = (*flags & kFlagInbound) != 0;
  UKAI_RETURN_IF_ERROR(r.Detour("detour count", "routing detour via node", &p->detour));
  Result<uint32_t> dst = r.Uint(4, "destination node");
  if (!dst.ok()) return dst.status();
  p->dst = *dst;
  if (p->broadcast && (!p->detour.empty() || p->dst != kBroadcastNode)) {
    return Status::ParseError(
        "gateway packet: a broadcast must carry no detour and "
        "destination 0xFFFFFFFF (got " +
        Str(p->detour.size()) + " via node(s), destination " + Str(p->dst) + ")");
  }
  if (!p->broadcast && p->dst == kBroadcastNode) {
    return Status::ParseError("gateway packet: destination 0xFFFFFFFF without the broadcast flag");
  }
  const size_t length_at = r.at();
  Result<uint32_t> length = r.Uint(2, "length");
  if (!length.ok()) return length.status();
  if (*length != input_size) {
    return Status::ParseError("gateway packet: length field " + Str(*length) + " at offset " +
                              Str(length_at) + " but the input has " + Str(input_size) + " bytes");
  }
  return Status::Ok();
}

Status DecodeCommand(Reader& r, GatewayPacket* p) {
  SendCommand& c = p->command;
  UKAI_RETURN_IF_ERROR(
      r.Detour("command detour count", "command detour via node", &c.return_detour));
  Result<uint32_t> src = r.Uint(4, "command source node");
  if (!src.ok()) return src.status();
  Result<uint32_t> dst = r.Uint(4, "command destination node");
  if (!dst.ok()) return dst.status();
  const size_t cmd_at = r.at();
  Result<uint32_t> cmd = r.Uint(1, "command cmd");
  if (!cmd.ok()) return cmd.status();
  if ((*cmd & ~uint32_t{kKnownCmds}) != 0) {
    return Status::ParseError("gateway packet: cmd " + Hex(*cmd) + " at offset " + Str(cmd_at) +
                              " has unknown bits (known: 0x03)");
  }
  c.src = *src;
  c.dst = *dst;
  c.cmd = static_cast<uint8_t>(*cmd);
  return Status::Ok();
}

}  // namespace

Result<GatewayPacket> DecodePacket(std::span<const uint8_t> in) {
  GatewayPacket p;
  Reader r(in);
  UKAI_RETURN_IF_ERROR(DecodeHeader(r, in.size(), &p));
  if (p.has_command) UKAI_RETURN_IF_ERROR(DecodeCommand(r, &p));
  const size_t frame_len_at = r.at();
  Result<uint32_t> frame_len = r.Uint(2, "frame length");
  if (!frame_len.ok()) return frame_len.status();
  if (*frame_len < kMinFrameBytes || *frame_len > kMaxFrameBytes) {
    return Status::ParseError("gateway packet: frame length " + Str(*frame_len) + " at offset " +
                              Str(frame_len_at) + " outside 14.." + Str(kMaxFrameBytes));
  }
  UKAI_RETURN_IF_ERROR(r.Need(*frame_len, "Ethernet frame"));
  std::span<const uint8_t> frame = r.Take(*frame_len);
  const size_t pad = PaddingFor(r.at());
  if (in.size() - r.at() != pad + 4) {
    return Status::ParseError("gateway packet: " + Str(in.size() - r.at()) +
                              " byte(s) after the frame at offset " + Str(r.at()) + ", expected " +
                              Str(pad) + " padding + 4 CRC");
  }
  for (uint8_t b : r.Take(pad)) {
    if (b != 0) return Status::ParseError("gateway packet: non-zero padding byte");
  }
  const size_t crc_at = r.at();
  const uint32_t computed = Crc32(in.first(crc_at));
  const uint32_t stored = r.Uint(4, "crc").value();
  if (computed != stored) {
    return Status::ParseError("gateway packet: CRC mismatch at offset " + Str(crc_at) +
                              " (stored " + Hex(stored) + ", computed " + Hex(computed) + ")");
  }
  p.frame.assign(frame.begin(), frame.end());
  return p;
}

}  // namespace ukai::wire
