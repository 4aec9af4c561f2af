#include "rt/modules/tcp/tcp_hello.h"

#include <cstring>
#include <string>

namespace ukai::rt::tcp {
namespace {

Status Bad(const char* what, const std::string& detail) {
  return Status::ParseError(std::string("tcp ") + what + ": " + detail);
}

Status CheckSize(const char* what, std::span<const uint8_t> p, size_t want) {
  if (p.size() == want) return Status::Ok();
  return Bad(what, std::to_string(p.size()) + " payload bytes, expected " + std::to_string(want));
}

template <size_t N>
void Take(std::array<uint8_t, N>* out, const uint8_t* p) {
  std::memcpy(out->data(), p, N);
}

// The MAC input every message shares: both ids, the flags, both nonces.
Mac TranscriptMac(const SecretKey& k, std::string_view label, const Transcript& t,
                  std::span<const uint8_t> extra) {
  const auto d = LeBytes(t.dialer), l = LeBytes(t.listener);
  const uint8_t flags[1] = {t.flags};
  return ComputeMac(k, label, {d, l, flags, t.nonce_d, t.nonce_l, extra});
}

}  // namespace

std::vector<uint8_t> EncodeHello(const Hello& h) {
  std::vector<uint8_t> b(kHelloBytes, 0);
  b[0] = kHelloVersion;
  b[1] = h.flags;
  std::memcpy(b.data() + 4, h.nonce.data(), h.nonce.size());
  return b;
}

std::vector<uint8_t> EncodeChallenge(const Challenge& c) {
  std::vector<uint8_t> b(kChallengeBytes);
  std::memcpy(b.data(), c.nonce.data(), c.nonce.size());
  std::memcpy(b.data() + 32, c.mac.data(), c.mac.size());
  return b;
}

std::vector<uint8_t> EncodeProof(const Proof& p) {
  std::vector<uint8_t> b(kProofBytes);
  wire::PutLe64(b.data(), p.received);
  std::memcpy(b.data() + 8, p.mac.data(), p.mac.size());
  return b;
}

std::vector<uint8_t> EncodeWelcome(const Welcome& w) {
  std::vector<uint8_t> b(kWelcomeBytes, 0);
  b[0] = static_cast<uint8_t>(w.status);
  wire::PutLe64(b.data() + 8, w.received);
  std::memcpy(b.data() + 16, w.mac.data(), w.mac.size());
  return b;
}

std::vector<uint8_t> EncodeCount(uint64_t count) {
  std::vector<uint8_t> b(kCountBytes);
  wire::PutLe64(b.data(), count);
  return b;
}

Result<Hello> DecodeHello(std::span<const uint8_t> p) {
  UKAI_RETURN_IF_ERROR(CheckSize("hello", p, kHelloBytes));
  if (p[0] != kHelloVersion) return Bad("hello", "unsupported version " + std::to_string(p[0]));
  if ((p[1] & ~(kResume | kJoinKey)) != 0 || p[2] != 0 || p[3] != 0) {
    return Bad("hello", "unknown flags or nonzero reserved bytes");
  }
  Hello h;
  h.flags = p[1];
  Take(&h.nonce, p.data() + 4);
  return h;
}

Result<Challenge> DecodeChallenge(std::span<const uint8_t> p) {
  UKAI_RETURN_IF_ERROR(CheckSize("challenge", p, kChallengeBytes));
  Challenge c;
  Take(&c.nonce, p.data());
  Take(&c.mac, p.data() + 32);
  return c;
}

Result<Proof> DecodeProof(std::span<const uint8_t> p) {
  UKAI_RETURN_IF_ERROR(CheckSize("proof", p, kProofBytes));
  Proof r;
  r.received = wire::GetLe64(p.data());
  Take(&r.mac, p.data() + 8);
  return r;
}

Result<Welcome> DecodeWelcome(std::span<const uint8_t> p) {
  UKAI_RETURN_IF_ERROR(CheckSize("welcome", p, kWelcomeBytes));
  if (p[0] > static_cast<uint8_t>(WelcomeStatus::kDuplicate)) {
    return Bad("welcome", "unknown status " + std::to_string(p[0]));
  }
  for (size_t i = 1; i < 8; ++i) {
    if (p[i] != 0) return Bad("welcome", "nonzero reserved byte " + std::to_string(i));
  }
  Welcome w;
  w.status = static_cast<WelcomeStatus>(p[0]);
  w.received = wire::GetLe64(p.data() + 8);
  Take(&w.mac, p.data() + 16);
  return w;
}

Result<uint64_t> DecodeCount(std::span<const uint8_t> p) {
  UKAI_RETURN_IF_ERROR(CheckSize("ack or bye", p, kCountBytes));
  return wire::GetLe64(p.data());
}

Mac ListenerMac(const SecretKey& k, const Transcript& t) {
  return TranscriptMac(k, "ukai tcp v1 listener", t, {});
}

Mac DialerMac(const SecretKey& k, const Transcript& t, uint64_t received) {
  return TranscriptMac(k, "ukai tcp v1 dialer", t, LeBytes(received));
}

Mac WelcomeMac(const SecretKey& k, const Transcript& t, WelcomeStatus status, uint64_t received) {
  uint8_t extra[9];
  extra[0] = static_cast<uint8_t>(status);
  wire::PutLe64(extra + 1, received);
  return TranscriptMac(k, "ukai tcp v1 welcome", t, extra);
}

SecretKey SessionKey(const SecretKey& k, const Transcript& t) {
  return TranscriptMac(k, "ukai tcp v1 session", t, {});
}

std::vector<uint8_t> Frame(wire::FrameKind kind, RuntimeId source, RuntimeId target,
                           std::span<const uint8_t> payload) {
  std::vector<uint8_t> f(wire::kHeaderSize + payload.size());
  wire::FrameHeader h;
  h.kind = kind;
  h.source = source;
  h.target = target;
  h.payload_len = static_cast<uint32_t>(payload.size());
  wire::EncodeHeader(h, {f.data(), wire::kHeaderSize});
  if (!payload.empty()) std::memcpy(f.data() + wire::kHeaderSize, payload.data(), payload.size());
  return f;
}

}  // namespace ukai::rt::tcp
