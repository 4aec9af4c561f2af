#include "rt/modules/tcp/tcp_dial.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace ukai::rt::tcp {
namespace {

constexpr uint8_t kTargetVersion = 2;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Largest payload of a handshake frame the dialer reads (kWelcome, kChallenge).
constexpr size_t kMaxHandshakePayload = 64;

Status WriteAll(int fd, std::span<const uint8_t> b, Clock::time_point deadline,
                const std::string& where) {
  size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
        return Status::Timeout("tcp handshake with " + where + ": send timed out");
      }
      continue;
    }
    return Status::Unavailable(Errno("tcp handshake with " + where + ": send"));
  }
  return Status::Ok();
}

Status ReadExact(int fd, uint8_t* out, size_t n, Clock::time_point deadline,
                 const std::string& where) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, out + got, n - got, MSG_DONTWAIT);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) {
      return Status::Unavailable("tcp handshake with " + where +
                                 ": the peer closed the connection (it refused our hello)");
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Status::Unavailable(Errno("tcp handshake with " + where + ": recv"));
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
      return Status::Timeout("tcp handshake with " + where + ": no answer in time");
    }
  }
  return Status::Ok();
}

// Reads one handshake frame of `kind` from `peer` to `self`; its payload in *payload.
Status ReadFrame(int fd, wire::FrameKind kind, RuntimeId self, RuntimeId peer,
                 Clock::time_point deadline, const std::string& where,
                 std::vector<uint8_t>* payload) {
  uint8_t head[wire::kHeaderSize];
  UKAI_RETURN_IF_ERROR(ReadExact(fd, head, sizeof head, deadline, where));
  Result<wire::FrameHeader> h = wire::DecodeHeader(head, kMaxHandshakePayload);
  if (!h.ok()) return h.status().WithContext("tcp handshake with " + where);
  if (h->kind != kind || h->source != peer || h->target != self ||
      h->header_len != wire::kHeaderSize) {
    return Status::ParseError("tcp handshake with " + where + ": unexpected frame (kind " +
                              std::to_string(static_cast<int>(h->kind)) + ", from " +
                              RuntimeIdString(h->source) + ")");
  }
  payload->resize(h->payload_len);
  return ReadExact(fd, payload->data(), payload->size(), deadline, where);
}

}  // namespace

Result<int> ConnectTo(const std::string& host, uint16_t port, Clock::time_point deadline,
                      bool* refused) {
  *refused = false;
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
    return Status::Unavailable("tcp: cannot resolve '" + host + "'");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ::freeaddrinfo(res);
    return Status::IoError(Errno("tcp socket"));
  }
  int rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    do {
      rc = ::poll(&p, 1, RemainingMs(deadline));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      ::close(fd);
      return Status::Unavailable("tcp connect " + where + ": no answer in time " +
                                 "(tcp.connect_timeout_ms)");
    }
    socklen_t elen = sizeof err;
    err = 0;
    if (rc < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) err = errno;
  }
  if (err != 0) {
    *refused = err == ECONNREFUSED;
    errno = err;
    Status st = Status::Unavailable(Errno("tcp connect " + where));
    ::close(fd);
    return st;
  }
  SetNoDelay(fd);
  return fd;
}

void SetNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string HostIdentity() {
  std::string id;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, id);
  char buf[128];
  const ssize_t n = ::readlink("/proc/self/ns/net", buf, sizeof buf);
  id += '|';
  if (n > 0) id.append(buf, static_cast<size_t>(n));
  return id;
}

std::vector<uint8_t> EncodeTarget(const Target& t) {
  std::vector<uint8_t> d = {kTargetVersion, 0, 0};
  wire::PutLe16(d.data() + 1, t.port);
  for (const std::string* s : {&t.host, &t.identity}) {
    const size_t n = std::min<size_t>(s->size(), 255);
    d.push_back(static_cast<uint8_t>(n));
    d.insert(d.end(), s->begin(), s->begin() + static_cast<ptrdiff_t>(n));
  }
  d.push_back(static_cast<uint8_t>(t.bind));
  return d;
}

Result<Target> DecodeTarget(std::span<const uint8_t> d) {
  Target t;
  if (d.size() < 6) return Status::ParseError("tcp descriptor too short");
  if (d[0] != kTargetVersion) {
    return Status::ParseError("tcp descriptor version " + std::to_string(d[0]) + " (want " +
                              std::to_string(kTargetVersion) + ")");
  }
  t.port = wire::GetLe16(d.data() + 1);
  size_t pos = 3;
  for (std::string* s : {&t.host, &t.identity}) {
    if (pos >= d.size() || d.size() - pos - 1 < d[pos]) {
      return Status::ParseError("tcp descriptor truncated");
    }
    s->assign(reinterpret_cast<const char*>(d.data() + pos + 1), d[pos]);
    pos += 1 + d[pos];
  }
  if (pos + 1 != d.size() || d[pos] > static_cast<uint8_t>(Bind::kSpecific) || t.port == 0 ||
      t.host.empty()) {
    return Status::ParseError("tcp descriptor malformed");
  }
  t.bind = static_cast<Bind>(d[pos]);
  return t;
}

Result<std::string> DialAddress(const Target& t, const std::string& self_identity) {
  if (t.identity == self_identity) {
    return t.bind == Bind::kSpecific ? t.host : std::string("127.0.0.1");
  }
  if (t.bind == Bind::kLoopback) {
    return Status::Unavailable("tcp: the peer listens on loopback only (" + t.host +
                               ") on another host or network namespace; set tcp.listen there");
  }
  return t.host;
}

Result<Dialed> DialAndGreet(const Target& t, const std::string& self_identity, RuntimeId self,
                            RuntimeId peer, const SecretKey& key, uint8_t flags, uint64_t received,
                            Clock::time_point deadline, bool* refused) {
  *refused = false;
  Result<std::string> host = DialAddress(t, self_identity);
  if (!host.ok()) return host.status();
  const std::string where = *host + ":" + std::to_string(t.port);
  Result<int> fd = ConnectTo(*host, t.port, deadline, refused);
  if (!fd.ok()) return fd.status();
  Dialed out;
  out.fd = *fd;
  auto fail = [&](Status s) {
    ::close(out.fd);
    return s;
  };
  Transcript tr;
  tr.dialer = self;
  tr.listener = peer;
  tr.flags = flags;
  tr.nonce_d = NewNonce();
  Status st =
      WriteAll(out.fd, Frame(wire::FrameKind::kHello, self, peer, EncodeHello({flags, tr.nonce_d})),
               deadline, where);
  if (!st.ok()) return fail(st);
  std::vector<uint8_t> payload;
  st = ReadFrame(out.fd, wire::FrameKind::kChallenge, self, peer, deadline, where, &payload);
  if (!st.ok()) return fail(st);
  Result<Challenge> ch = DecodeChallenge(payload);
  if (!ch.ok()) return fail(ch.status());
  tr.nonce_l = ch->nonce;
  if (!MacEqual(ListenerMac(key, tr), ch->mac)) {
    return fail(Status::Unavailable("tcp handshake with " + where + ": runtime " +
                                    RuntimeIdString(peer) +
                                    " did not prove the job secret (another job's runtime, or "
                                    "an impostor, listens there)"));
  }
  st = WriteAll(out.fd,
                Frame(wire::FrameKind::kProof, self, peer,
                      EncodeProof({received, DialerMac(key, tr, received)})),
                deadline, where);
  if (!st.ok()) return fail(st);
  st = ReadFrame(out.fd, wire::FrameKind::kWelcome, self, peer, deadline, where, &payload);
  if (!st.ok()) return fail(st);
  Result<Welcome> w = DecodeWelcome(payload);
  if (!w.ok()) return fail(w.status());
  if (!MacEqual(WelcomeMac(key, tr, w->status, w->received), w->mac)) {
    return fail(Status::Unavailable("tcp handshake with " + where + ": bad welcome"));
  }
  out.welcome = *w;
  out.session_key = (flags & kResume) != 0 ? key : SessionKey(key, tr);
  return out;
}

}  // namespace ukai::rt::tcp
