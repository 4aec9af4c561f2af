#include "rt/modules/shm/shm_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ukai/rt/startpoint.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt::shm {
namespace {

Result<sockaddr_un> AbstractAddress(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  if (name.empty() || name.size() + 1 > sizeof(a.sun_path)) {
    return Status::InvalidArgument("shm socket name '" + name + "' is empty or too long");
  }
  a.sun_family = AF_UNIX;
  a.sun_path[0] = '\0';
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

std::string Err(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

Result<int> ListenAbstract(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> a = AbstractAddress(name, &len);
  if (!a.ok()) return a.status();
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(Err("shm: socket"));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*a), len) != 0 || listen(fd, 64) != 0) {
    Status s = Status::IoError(Err(("shm: bind/listen @" + name).c_str()));
    close(fd);
    return s;
  }
  return fd;
}

Result<int> ConnectAbstract(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> a = AbstractAddress(name, &len);
  if (!a.ok()) return a.status();
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(Err("shm: socket"));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*a), len) != 0) {
    Status s = Status::Unavailable(Err(("shm: connect @" + name).c_str()));
    close(fd);
    return s;
  }
  return fd;
}

Status SendMessage(int sock, const std::vector<uint8_t>& bytes, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) return Status::InvalidArgument("shm: too many fds in one message");
  iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  if (sendmsg(sock, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) {
    return Status::Unavailable(Err("shm: sendmsg"));
  }
  return Status::Ok();
}

Status SendMessage(int sock, const std::vector<uint8_t>& bytes, int fd) {
  return SendMessage(sock, bytes, fd >= 0 ? std::vector<int>{fd} : std::vector<int>{});
}

Status ReceiveMessage(int sock, int timeout_ms, std::vector<uint8_t>* bytes,
                      std::vector<int>* fds) {
  fds->clear();
  pollfd p{sock, POLLIN, 0};
  const int r = poll(&p, 1, timeout_ms);
  if (r == 0)
    return Status::OutOfRange("shm: no set-up message within " + std::to_string(timeout_ms) +
                              " ms");
  if (r < 0) return Status::IoError(Err("shm: poll"));
  bytes->resize(512);
  iovec iov{bytes->data(), bytes->size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n <= 0) return Status::Unavailable(n == 0 ? "shm: peer hung up" : Err("shm: recvmsg"));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->push_back(fd);
      }
    }
  }
  bytes->resize(static_cast<size_t>(n));
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (int fd : *fds) close(fd);
    fds->clear();
    return Status::ParseError("shm: set-up message truncated");
  }
  return Status::Ok();
}

std::string IdString(uint64_t id) { return RuntimeIdString(id); }

Result<uid_t> PeerUid(int sock) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::IoError(Err("shm: SO_PEERCRED"));
  }
  return cred.uid;
}

namespace {

constexpr size_t kHelloFixed = 26 + 1 + kNonceBytes + kMacBytes;  // before the name
constexpr size_t kReplyBytes = 20 + kMacBytes;

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(v));
  return buf;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::vector<uint8_t> EncodeHello(const Hello& h) {
  std::vector<uint8_t> b(kHelloFixed + h.segment.size());
  wire::PutLe32(b.data(), kHelloMagic);
  wire::PutLe32(b.data() + 4, kHandshakeVersion);
  wire::PutLe64(b.data() + 8, h.from);
  wire::PutLe64(b.data() + 16, h.to);
  b[24] = static_cast<uint8_t>(h.key_kind);
  std::memcpy(b.data() + 25, h.nonce.data(), h.nonce.size());
  std::memcpy(b.data() + 25 + kNonceBytes, h.mac.data(), h.mac.size());
  wire::PutLe16(b.data() + kHelloFixed - 2, static_cast<uint16_t>(h.segment.size()));
  std::memcpy(b.data() + kHelloFixed, h.segment.data(), h.segment.size());
  return b;
}

Result<Hello> DecodeHello(const std::vector<uint8_t>& b) {
  if (b.size() < kHelloFixed) {
    return Status::ParseError("shm hello: " + std::to_string(b.size()) + " bytes, need at least " +
                              std::to_string(kHelloFixed));
  }
  if (wire::GetLe32(b.data()) != kHelloMagic) {
    return Status::ParseError("shm hello: bad magic " + Hex32(wire::GetLe32(b.data())) + " (want " +
                              Hex32(kHelloMagic) + ")");
  }
  if (wire::GetLe32(b.data() + 4) != kHandshakeVersion) {
    return Status::ParseError("shm hello: unsupported version " +
                              std::to_string(wire::GetLe32(b.data() + 4)));
  }
  Hello h;
  h.from = wire::GetLe64(b.data() + 8);
  h.to = wire::GetLe64(b.data() + 16);
  if (b[24] > static_cast<uint8_t>(KeyKind::kJoin)) {
    return Status::ParseError("shm hello: unknown key kind " + std::to_string(b[24]));
  }
  h.key_kind = static_cast<KeyKind>(b[24]);
  std::memcpy(h.nonce.data(), b.data() + 25, kNonceBytes);
  std::memcpy(h.mac.data(), b.data() + 25 + kNonceBytes, kMacBytes);
  const size_t n = wire::GetLe16(b.data() + kHelloFixed - 2);
  if (b.size() != kHelloFixed + n) return Status::ParseError("shm hello: name length mismatch");
  h.segment.assign(reinterpret_cast<const char*>(b.data() + kHelloFixed), n);
  return h;
}

std::vector<uint8_t> EncodeReply(const Reply& r) {
  std::vector<uint8_t> b(kReplyBytes);
  wire::PutLe32(b.data(), kReplyMagic);
  wire::PutLe32(b.data() + 4, r.status);
  wire::PutLe64(b.data() + 8, r.from);
  wire::PutLe32(b.data() + 16, r.flags);
  std::memcpy(b.data() + 20, r.mac.data(), r.mac.size());
  return b;
}

Result<Reply> DecodeReply(const std::vector<uint8_t>& b) {
  if (b.size() != kReplyBytes || wire::GetLe32(b.data()) != kReplyMagic) {
    return Status::ParseError("shm reply: " + std::to_string(b.size()) + " bytes (want " +
                              std::to_string(kReplyBytes) + ") or bad magic");
  }
  Reply r{
      wire::GetLe32(b.data() + 4), wire::GetLe64(b.data() + 8), wire::GetLe32(b.data() + 16), {}};
  std::memcpy(r.mac.data(), b.data() + 20, r.mac.size());
  return r;
}

Mac HelloMac(const SecretKey& key, const Hello& h) {
  const uint8_t kind[1] = {static_cast<uint8_t>(h.key_kind)};
  return ComputeMac(key, "ukai shm v1 hello",
                    {LeBytes(h.from), LeBytes(h.to), kind, h.nonce, Bytes(h.segment)});
}

Mac ReplyMac(const SecretKey& key, const Reply& r, uint64_t connector, const Nonce& nonce) {
  return ComputeMac(
      key, "ukai shm v1 reply",
      {LeBytes(r.from), LeBytes(connector), LeBytes(r.status), LeBytes(r.flags), nonce});
}

Mac SegmentTag(const SecretKey& key, uint64_t creator, uint64_t attacher,
               const std::string& segment) {
  return ComputeMac(key, "ukai shm v1 segment",
                    {LeBytes(creator), LeBytes(attacher), Bytes(segment)});
}

}  // namespace ukai::rt::shm
