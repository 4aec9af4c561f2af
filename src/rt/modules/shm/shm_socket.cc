#include "rt/modules/shm/shm_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::string IdString(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::vector<uint8_t> EncodeHello(const Hello& h) {
  std::vector<uint8_t> b(26 + h.segment.size());
  wire::PutLe32(b.data(), kHelloMagic);
  wire::PutLe32(b.data() + 4, kHandshakeVersion);
  wire::PutLe64(b.data() + 8, h.from);
  wire::PutLe64(b.data() + 16, h.to);
  wire::PutLe16(b.data() + 24, static_cast<uint16_t>(h.segment.size()));
  std::memcpy(b.data() + 26, h.segment.data(), h.segment.size());
  return b;
}

Result<Hello> DecodeHello(const std::vector<uint8_t>& b) {
  if (b.size() < 26)
    return Status::ParseError("shm hello: " + std::to_string(b.size()) +
                              " bytes, need at least 26");
  if (wire::GetLe32(b.data()) != kHelloMagic) return Status::ParseError("shm hello: bad magic");
  if (wire::GetLe32(b.data() + 4) != kHandshakeVersion) {
    return Status::ParseError("shm hello: unsupported version " +
                              std::to_string(wire::GetLe32(b.data() + 4)));
  }
  Hello h;
  h.from = wire::GetLe64(b.data() + 8);
  h.to = wire::GetLe64(b.data() + 16);
  const size_t n = wire::GetLe16(b.data() + 24);
  if (b.size() != 26 + n) return Status::ParseError("shm hello: name length mismatch");
  h.segment.assign(reinterpret_cast<const char*>(b.data() + 26), n);
  return h;
}

std::vector<uint8_t> EncodeReply(const Reply& r) {
  std::vector<uint8_t> b(20);
  wire::PutLe32(b.data(), kReplyMagic);
  wire::PutLe32(b.data() + 4, r.status);
  wire::PutLe64(b.data() + 8, r.from);
  wire::PutLe32(b.data() + 16, r.flags);
  return b;
}

Result<Reply> DecodeReply(const std::vector<uint8_t>& b) {
  if (b.size() != 20 || wire::GetLe32(b.data()) != kReplyMagic) {
    return Status::ParseError("shm reply: bad size or magic");
  }
  return Reply{wire::GetLe32(b.data() + 4), wire::GetLe64(b.data() + 8),
               wire::GetLe32(b.data() + 16)};
}

}  // namespace ukai::rt::shm
