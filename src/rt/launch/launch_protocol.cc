#include "rt/launch/launch_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "wire/rsr_frame.h"

namespace ukai::rt::launch {
namespace {

Status CheckHeader(uint32_t len, uint8_t type) {
  if (len == 0 || len > kMaxLaunchMessage) {
    return Status::ParseError("launch protocol: message length " + std::to_string(len) +
                              " outside [1, " + std::to_string(kMaxLaunchMessage) + "]");
  }
  if (type < static_cast<uint8_t>(MsgType::kHello) ||
      type > static_cast<uint8_t>(MsgType::kFinish)) {
    return Status::ParseError("launch protocol: unknown message type " + std::to_string(type));
  }
  return Status::Ok();
}

Result<sockaddr_un> Address(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  if (name.empty() || name.size() + 1 > sizeof(a.sun_path)) {
    return Status::InvalidArgument("launch address '" + name + "' is empty or too long");
  }
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

}  // namespace

Mac HelloMac(const SecretKey& secret, uint32_t rank) {
  return ComputeMac(secret, "ukai launch v1 hello", {LeBytes(rank)});
}

Status SendMsg(int fd, MsgType type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> out(5 + body.size());
  wire::PutLe32(out.data(), static_cast<uint32_t>(body.size() + 1));
  out[4] = static_cast<uint8_t>(type);
  if (!body.empty()) std::memcpy(out.data() + 5, body.data(), body.size());
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0)
      return Status::Unavailable(std::string("launch protocol: send: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

namespace {

// Reads exactly n bytes before `deadline_ms` (a steady-clock time point in ms; -1: none).
Status ReadExact(int fd, uint8_t* out, size_t n, int64_t deadline_ms) {
  using namespace std::chrono;
  size_t done = 0;
  while (done < n) {
    int wait = -1;
    if (deadline_ms >= 0) {
      const int64_t now =
          duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
      if (now >= deadline_ms) return Status::OutOfRange("launch protocol: timed out");
      wait = static_cast<int>(deadline_ms - now);
    }
    pollfd p{fd, POLLIN, 0};
    const int r = poll(&p, 1, wait);
    if (r < 0 && errno != EINTR) return Status::IoError("launch protocol: poll failed");
    if (r <= 0) continue;
    const ssize_t got = recv(fd, out + done, n - done, 0);
    if (got == 0) return Status::Unavailable("launch protocol: the other side closed");
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::Unavailable(std::string("launch protocol: recv: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(got);
  }
  return Status::Ok();
}

}  // namespace

// The launcher only ever answers requests, so a reader never sees bytes past the message
// it waits for: exact reads are enough.
Result<Message> ReceiveMsg(int fd, int timeout_ms) {
  using namespace std::chrono;
  const int64_t deadline =
      timeout_ms < 0 ? -1
                     : duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count() +
                           timeout_ms;
  uint8_t head[5];
  UKAI_RETURN_IF_ERROR(ReadExact(fd, head, 5, deadline));
  const uint32_t len = wire::GetLe32(head);
  UKAI_RETURN_IF_ERROR(CheckHeader(len, head[4]));
  Message m;
  m.type = static_cast<MsgType>(head[4]);
  m.body.resize(len - 1);
  if (len > 1) UKAI_RETURN_IF_ERROR(ReadExact(fd, m.body.data(), len - 1, deadline));
  return m;
}

Result<bool> MsgParser::Next(Message* out) {
  if (buf_.size() < 5) return false;
  const uint32_t len = wire::GetLe32(buf_.data());
  UKAI_RETURN_IF_ERROR(CheckHeader(len, buf_[4]));
  if (buf_.size() < 4 + size_t{len}) return false;
  out->type = static_cast<MsgType>(buf_[4]);
  out->body.assign(buf_.begin() + 5, buf_.begin() + 4 + len);
  buf_.erase(buf_.begin(), buf_.begin() + 4 + len);
  return true;
}

Result<int> ListenUnix(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> a = Address(name, &len);
  if (!a.ok()) return a.status();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("launch: socket failed");
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*a), len) != 0 || listen(fd, 256) != 0) {
    close(fd);
    return Status::IoError("launch: cannot listen on @" + name + ": " + std::strerror(errno));
  }
  return fd;
}

Result<int> ConnectUnix(const std::string& name) {
  socklen_t len = 0;
  Result<sockaddr_un> a = Address(name, &len);
  if (!a.ok()) return a.status();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError("launch: socket failed");
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*a), len) != 0) {
    close(fd);
    return Status::Unavailable("launch: cannot reach the launcher at @" + name + ": " +
                               std::strerror(errno));
  }
  return fd;
}

Result<std::vector<DescriptorTable>> DecodeTables(const std::vector<uint8_t>& b, int size) {
  if (b.size() < 4 || wire::GetLe32(b.data()) != static_cast<uint32_t>(size)) {
    return Status::ParseError("launcher bootstrap: table count does not match UKAI_SIZE");
  }
  std::vector<DescriptorTable> out;
  size_t at = 4;
  for (int r = 0; r < size; ++r) {
    if (b.size() - at < 4) return Status::ParseError("launcher bootstrap: tables truncated");
    const size_t n = wire::GetLe32(b.data() + at);
    at += 4;
    if (b.size() - at < n) return Status::ParseError("launcher bootstrap: table overruns");
    size_t used = 0;
    Result<DescriptorTable> t =
        DescriptorTable::Decode(std::span<const uint8_t>(b.data() + at, n), &used);
    if (!t.ok()) {
      return t.status().WithContext("launcher bootstrap: table of rank " + std::to_string(r));
    }
    out.push_back(std::move(*t));
    at += n;
  }
  return out;
}

}  // namespace ukai::rt::launch
