// Raw tcp clients for tests that play a peer (or an impostor) by hand: frames on a socket,
// and the dialer's side of the handshake (src/rt/modules/tcp/tcp_hello.h) step by step.
#ifndef UKAI_TESTS_RT_TCP_TEST_UTIL_H_
#define UKAI_TESTS_RT_TCP_TEST_UTIL_H_

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "rt/core/job_secret.h"
#include "rt/modules/tcp/tcp_dial.h"
#include "rt/modules/tcp/tcp_hello.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {

// A job secret a test knows (RuntimeOptions::job_secret), `fill` in every byte.
inline std::array<uint8_t, 32> TestSecret(uint8_t fill) {
  std::array<uint8_t, 32> k;
  k.fill(fill);
  return k;
}

// The join token in `rt`'s startpoints (rt/core/job_secret.h): what a runtime of another
// job proves (flag tcp::kJoinKey) to connect to `rt`.
inline SecretKey JoinToken(const Runtime& rt) {
  const Descriptor* d = rt.descriptors().Find(kAuthDescriptor);
  if (d == nullptr) return {};
  Result<SecretKey> t = DecodeAuthDescriptor(d->bytes);
  return t.ok() ? *t : SecretKey{};
}

inline bool SendAll(int fd, const std::vector<uint8_t>& b) {
  size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

inline bool SendFrame(int fd, wire::FrameKind kind, RuntimeId from, RuntimeId to,
                      const std::vector<uint8_t>& payload) {
  return SendAll(fd, tcp::Frame(kind, from, to, payload));
}

struct RawFrame {
  wire::FrameHeader header;
  std::vector<uint8_t> payload;
};

// The next whole frame on `fd` within `timeout`, or nothing (timeout, EOF, garbage).
inline std::optional<RawFrame> ReadRawFrame(
    int fd, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto read_exact = [&](uint8_t* out, size_t n) {
    size_t got = 0;
    while (got < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      const ssize_t r = ::recv(fd, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  };
  uint8_t head[wire::kHeaderSize];
  if (!read_exact(head, sizeof head)) return std::nullopt;
  Result<wire::FrameHeader> h = wire::DecodeHeader(head);
  if (!h.ok()) return std::nullopt;
  RawFrame f{*h, std::vector<uint8_t>(h->payload_len)};
  if (!read_exact(f.payload.data(), f.payload.size())) return std::nullopt;
  return f;
}

// The dialer's side of the handshake done by hand against `rt`'s listener, claiming to be
// `claimed` and proving `key` (kind per `flags`). Returns the connected socket once the
// listener welcomed it, or -1 (the listener refused or closed).
inline int DialByHand(const Runtime& rt, RuntimeId claimed, const SecretKey& key,
                      uint8_t flags = 0) {
  const int fd = ConnectToTcp(rt);
  if (fd < 0) return -1;
  tcp::Transcript t{claimed, rt.id(), flags, NewNonce(), {}};
  if (!SendFrame(fd, wire::FrameKind::kHello, claimed, rt.id(),
                 tcp::EncodeHello({flags, t.nonce_d}))) {
    ::close(fd);
    return -1;
  }
  std::optional<RawFrame> ch = ReadRawFrame(fd);
  Result<tcp::Challenge> c =
      ch ? tcp::DecodeChallenge(ch->payload) : Result<tcp::Challenge>(Status::Unavailable("-"));
  if (!c.ok()) {
    ::close(fd);
    return -1;
  }
  t.nonce_l = c->nonce;
  if (!SendFrame(fd, wire::FrameKind::kProof, claimed, rt.id(),
                 tcp::EncodeProof({0, tcp::DialerMac(key, t, 0)}))) {
    ::close(fd);
    return -1;
  }
  std::optional<RawFrame> w = ReadRawFrame(fd);
  Result<tcp::Welcome> wel =
      w ? tcp::DecodeWelcome(w->payload) : Result<tcp::Welcome>(Status::Unavailable("-"));
  if (!wel.ok() || wel->status != tcp::WelcomeStatus::kAccepted) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// An RSR frame from `from` to (rt, context 1, endpoint 1, handler `handler`) with `payload`.
inline std::vector<uint8_t> RsrFrame(RuntimeId from, RuntimeId to, std::string_view handler,
                                     const std::vector<uint8_t>& payload = {}) {
  wire::FrameHeader h;
  h.kind = wire::FrameKind::kRsr;
  h.source = from;
  h.target = to;
  h.context = 1;
  h.endpoint = 1;
  h.handler = HandlerId::Of(handler).value;
  h.payload_len = static_cast<uint32_t>(payload.size());
  std::vector<uint8_t> f(wire::kHeaderSize + payload.size());
  wire::EncodeHeader(h, {f.data(), wire::kHeaderSize});
  if (!payload.empty()) std::memcpy(f.data() + wire::kHeaderSize, payload.data(), payload.size());
  return f;
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_TCP_TEST_UTIL_H_
