#include "rt/modules/sim/sim_wire.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "wire/rsr_frame.h"

namespace ukai::rt::simwire {
namespace {

constexpr const char* kCallNames[] = {"Init",
                                      "Progress",
                                      "SendRsr",
                                      "SendRsr (waiting for room)",
                                      "a flush (Finalize, ClosePeer)",
                                      "Now",
                                      "a threaded handler",
                                      "a wait outside the runtime",
                                      "Barrier",
                                      "a runtime call"};
constexpr size_t kCallCount = sizeof(kCallNames) / sizeof(kCallNames[0]);
constexpr size_t kMaxText = 4096;

bool KnownType(uint8_t t) {
  return (t >= static_cast<uint8_t>(Type::kHello) && t <= static_cast<uint8_t>(Type::kLeave)) ||
         (t >= static_cast<uint8_t>(Type::kWelcome) && t <= static_cast<uint8_t>(Type::kTaken));
}

// Appends little-endian fields.
class Out {
 public:
  Out(Type type, size_t body, size_t trailing = 0) {
    b_.reserve(5 + body);
    b_.resize(5);
    wire::PutLe32(b_.data(), static_cast<uint32_t>(1 + body + trailing));
    b_[4] = static_cast<uint8_t>(type);
  }
  Out& U8(uint8_t v) {
    b_.push_back(v);
    return *this;
  }
  Out& U32(uint32_t v) {
    const size_t at = b_.size();
    b_.resize(at + 4);
    wire::PutLe32(b_.data() + at, v);
    return *this;
  }
  Out& U64(uint64_t v) {
    const size_t at = b_.size();
    b_.resize(at + 8);
    wire::PutLe64(b_.data() + at, v);
    return *this;
  }
  Out& Bytes(std::span<const uint8_t> s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<uint8_t> Take() { return std::move(b_); }

 private:
  std::vector<uint8_t> b_;
};

// Reads fixed fields off a body; `what` names the message in errors.
class In {
 public:
  In(std::span<const uint8_t> b, const char* what) : b_(b), what_(what) {}
  bool Need(size_t n) {
    if (b_.size() - at_ >= n) return true;
    if (error_.ok()) {
      error_ = Status::ParseError(std::string("sim channel: ") + what_ +
                                  " truncated: " + std::to_string(b_.size()) + " bytes");
    }
    return false;
  }
  uint8_t U8() { return Need(1) ? b_[at_++] : 0; }
  uint32_t U32() {
    if (!Need(4)) return 0;
    at_ += 4;
    return wire::GetLe32(b_.data() + at_ - 4);
  }
  uint64_t U64() {
    if (!Need(8)) return 0;
    at_ += 8;
    return wire::GetLe64(b_.data() + at_ - 8);
  }
  std::span<const uint8_t> Rest() { return b_.subspan(std::min(at_, b_.size())); }
  // OK when the fields were there and (exact) nothing follows them.
  Status Done(bool exact = true) {
    if (error_.ok() && exact && at_ != b_.size()) {
      error_ = Status::ParseError(std::string("sim channel: ") + what_ + " has " +
                                  std::to_string(b_.size() - at_) + " trailing bytes");
    }
    return error_;
  }

 private:
  std::span<const uint8_t> b_;
  const char* what_;
  size_t at_ = 0;
  Status error_;
};

Result<std::span<const uint8_t>> CheckFrame(std::span<const uint8_t> f, const char* what) {
  if (f.empty() || f.size() > MaxFrameBytes()) {
    return Status::ParseError(std::string("sim channel: ") + what + " carries a frame of " +
                              std::to_string(f.size()) + " bytes (1.." +
                              std::to_string(MaxFrameBytes()) + ")");
  }
  return f;
}

}  // namespace

const char* CallName(uint8_t index) { return index < kCallCount ? kCallNames[index] : nullptr; }

uint8_t CallIndex(const char* name) {
  for (size_t i = 0; i + 1 < kCallCount; ++i) {
    if (std::strcmp(kCallNames[i], name) == 0) return static_cast<uint8_t>(i);
  }
  return static_cast<uint8_t>(kCallCount - 1);
}

uint32_t MaxFrameBytes() { return wire::kHeaderSize + wire::kMaxPayloadBytes; }
uint32_t MaxMessageBytes() { return 1 + 4 + 8 + 8 + MaxFrameBytes(); }

void SimWireParser::Append(const uint8_t* data, size_t n) {
  if (at_ > 0 && at_ == buf_.size()) {
    buf_.clear();
    at_ = 0;
  } else if (at_ > (1u << 20)) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(at_));
    at_ = 0;
  }
  buf_.insert(buf_.end(), data, data + n);
}

Result<bool> SimWireParser::Next(Message* out) {
  if (!error_.ok()) return error_;
  if (buf_.size() - at_ < 5) return false;
  const uint32_t len = wire::GetLe32(buf_.data() + at_);
  const uint8_t type = buf_[at_ + 4];
  if (len == 0 || len > MaxMessageBytes()) {
    error_ = Status::ParseError("sim channel: message length " + std::to_string(len) +
                                " outside [1, " + std::to_string(MaxMessageBytes()) + "]");
    return error_;
  }
  if (!KnownType(type)) {
    error_ = Status::ParseError("sim channel: unknown message type " + std::to_string(type));
    return error_;
  }
  if (buf_.size() - at_ < 4 + size_t{len}) return false;
  out->type = static_cast<Type>(type);
  out->body.assign(buf_.begin() + static_cast<std::ptrdiff_t>(at_ + 5),
                   buf_.begin() + static_cast<std::ptrdiff_t>(at_ + 4 + len));
  at_ += 4 + size_t{len};
  return true;
}

std::vector<uint8_t> Encode(Type type, std::span<const uint8_t> body) {
  return Out(type, body.size()).Bytes(body).Take();
}
std::vector<uint8_t> EncodeHello(uint32_t rank, uint64_t runtime, uint32_t thread, int64_t cpu) {
  return Out(Type::kHello, 24)
      .U32(rank)
      .U64(runtime)
      .U32(thread)
      .U64(static_cast<uint64_t>(cpu))
      .Take();
}
std::vector<uint8_t> EncodeCall(uint32_t thread, CallKind kind, uint8_t call, int64_t cpu) {
  return Out(Type::kCall, 14)
      .U32(thread)
      .U8(static_cast<uint8_t>(kind))
      .U8(call)
      .U64(static_cast<uint64_t>(cpu))
      .Take();
}
std::vector<uint8_t> EncodeNow(uint32_t thread, int64_t cpu) {
  return Out(Type::kNow, 12).U32(thread).U64(static_cast<uint64_t>(cpu)).Take();
}
std::vector<uint8_t> EncodePostHeader(uint32_t thread, int64_t cpu, uint64_t peer,
                                      size_t frame_bytes) {
  return Out(Type::kPost, 20, frame_bytes)
      .U32(thread)
      .U64(static_cast<uint64_t>(cpu))
      .U64(peer)
      .Take();
}
std::vector<uint8_t> EncodeDispatched(uint32_t thread, uint32_t frames) {
  return Out(Type::kDispatched, 8).U32(thread).U32(frames).Take();
}
std::vector<uint8_t> EncodeWelcome(uint64_t machine, double clock_mhz, uint32_t process,
                                   bool cpu_time) {
  return Out(Type::kWelcome, 21)
      .U64(machine)
      .U64(std::bit_cast<uint64_t>(clock_mhz))
      .U32(process)
      .U8(cpu_time ? 1 : 0)
      .Take();
}
std::vector<uint8_t> EncodeText(Type type, const std::string& text) {
  const std::string t = text.substr(0, kMaxText);
  return Out(type, t.size()).Bytes({reinterpret_cast<const uint8_t*>(t.data()), t.size()}).Take();
}
std::vector<uint8_t> EncodeNowIs(uint32_t thread, int64_t cycles) {
  return Out(Type::kNowIs, 12).U32(thread).U64(static_cast<uint64_t>(cycles)).Take();
}
std::vector<uint8_t> EncodeArriveHeader(size_t frame_bytes) {
  return Out(Type::kArrive, 0, frame_bytes).Take();
}
std::vector<uint8_t> EncodePeerGone(uint64_t peer, bool orderly, const std::string& text) {
  const std::string t = text.substr(0, kMaxText);
  return Out(Type::kPeerGone, 9 + t.size())
      .U64(peer)
      .U8(orderly ? 1 : 0)
      .Bytes({reinterpret_cast<const uint8_t*>(t.data()), t.size()})
      .Take();
}
std::vector<uint8_t> EncodeTaken(uint64_t peer, uint64_t frames, uint64_t bytes) {
  return Out(Type::kTaken, 24).U64(peer).U64(frames).U64(bytes).Take();
}

Result<Hello> DecodeHello(std::span<const uint8_t> body) {
  In in(body, "hello");
  Hello h{in.U32(), in.U64(), in.U32(), static_cast<int64_t>(in.U64())};
  UKAI_RETURN_IF_ERROR(in.Done());
  if (h.runtime == 0) return Status::ParseError("sim channel: hello with runtime id 0");
  if (h.thread == 0) return Status::ParseError("sim channel: hello from thread 0");
  if (h.cpu < 0) return Status::ParseError("sim channel: hello with negative CPU time");
  return h;
}

Result<Call> DecodeCall(std::span<const uint8_t> body) {
  In in(body, "call");
  const uint32_t thread = in.U32();
  const uint8_t kind = in.U8();
  const uint8_t call = in.U8();
  const int64_t cpu = static_cast<int64_t>(in.U64());
  UKAI_RETURN_IF_ERROR(in.Done());
  if (kind > kLastCallKind || kind == kRetiredCallKind) {
    return Status::ParseError("sim channel: call of unknown kind " + std::to_string(kind) +
                              (kind == kRetiredCallKind ? " (retired: a parked thread)" : ""));
  }
  if (CallName(call) == nullptr) {
    return Status::ParseError("sim channel: call names unknown runtime call " +
                              std::to_string(call));
  }
  if (cpu < 0) return Status::ParseError("sim channel: call with negative CPU time");
  return Call{thread, static_cast<CallKind>(kind), CallName(call), cpu};
}

Result<Now> DecodeNow(std::span<const uint8_t> body) {
  In in(body, "now");
  Now n{in.U32(), static_cast<int64_t>(in.U64())};
  UKAI_RETURN_IF_ERROR(in.Done());
  if (n.cpu < 0) return Status::ParseError("sim channel: now with negative CPU time");
  return n;
}

Result<Post> DecodePost(std::span<const uint8_t> body) {
  In in(body, "post");
  Post p{in.U32(), static_cast<int64_t>(in.U64()), in.U64(), {}};
  UKAI_RETURN_IF_ERROR(in.Done(/*exact=*/false));
  if (p.cpu < 0) return Status::ParseError("sim channel: post with negative CPU time");
  Result<std::span<const uint8_t>> f = CheckFrame(in.Rest(), "post");
  if (!f.ok()) return f.status();
  p.frame = *f;
  return p;
}

Result<Dispatched> DecodeDispatched(std::span<const uint8_t> body) {
  In in(body, "dispatched");
  Dispatched d{in.U32(), in.U32()};
  UKAI_RETURN_IF_ERROR(in.Done());
  return d;
}

Result<Welcome> DecodeWelcome(std::span<const uint8_t> body) {
  In in(body, "welcome");
  Welcome w{in.U64(), std::bit_cast<double>(in.U64()), in.U32(), false};
  const uint8_t cpu_time = in.U8();
  UKAI_RETURN_IF_ERROR(in.Done());
  if (cpu_time > 1) {
    return Status::ParseError("sim channel: welcome with cpu_time " + std::to_string(cpu_time) +
                              " (0 or 1)");
  }
  w.cpu_time = cpu_time == 1;
  if (!std::isfinite(w.clock_mhz) || w.clock_mhz <= 0) {
    return Status::ParseError("sim channel: welcome with a clock of " +
                              std::to_string(w.clock_mhz) + " MHz");
  }
  return w;
}

Result<NowIs> DecodeNowIs(std::span<const uint8_t> body) {
  In in(body, "now reply");
  NowIs n{in.U32(), static_cast<int64_t>(in.U64())};
  UKAI_RETURN_IF_ERROR(in.Done());
  if (n.cycles < 0) return Status::ParseError("sim channel: now reply with a negative time");
  return n;
}

Result<std::span<const uint8_t>> DecodeArrive(std::span<const uint8_t> body) {
  return CheckFrame(body, "arrival");
}

Result<PeerGone> DecodePeerGone(std::span<const uint8_t> body) {
  In in(body, "peer gone");
  PeerGone g{in.U64(), false, {}};
  const uint8_t orderly = in.U8();
  UKAI_RETURN_IF_ERROR(in.Done(/*exact=*/false));
  if (orderly > 1) return Status::ParseError("sim channel: peer gone with orderly flag > 1");
  g.orderly = orderly == 1;
  Result<std::string> text = DecodeText(in.Rest());
  if (!text.ok()) return text.status();
  g.text = std::move(*text);
  return g;
}

Result<std::string> DecodeText(std::span<const uint8_t> body) {
  if (body.size() > kMaxText) {
    return Status::ParseError("sim channel: text of " + std::to_string(body.size()) +
                              " bytes (at most " + std::to_string(kMaxText) + ")");
  }
  return std::string(reinterpret_cast<const char*>(body.data()), body.size());
}

Result<Taken> DecodeTaken(std::span<const uint8_t> body) {
  In in(body, "taken");
  Taken t{in.U64(), in.U64(), in.U64()};
  UKAI_RETURN_IF_ERROR(in.Done());
  return t;
}

}  // namespace ukai::rt::simwire
