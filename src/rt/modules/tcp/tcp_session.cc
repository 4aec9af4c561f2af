#include "rt/modules/tcp/tcp_session.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ukai::rt::tcp {
namespace {

constexpr int kCloseFlushMs = 2000;

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void TcpConn::CloseFd() {
  const int fd = fd_.exchange(-1);
  if (fd >= 0) ::close(fd);
}

TcpSession::TcpSession(RuntimeId self, RuntimeId peer, int epfd, bool dialer,
                       std::vector<uint8_t> target)
    : self_(self), peer_(peer), epfd_(epfd), dialer_(dialer), target_(std::move(target)) {}

// ---- send side ----

Result<bool> TcpSession::WriteBytes(const uint8_t* p, size_t n, size_t* off) {
  const int fd = conn_->fd();
  while (*off < n) {
    const ssize_t w = ::send(fd, p + *off, n - *off, MSG_NOSIGNAL);
    if (w > 0) {
      *off += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (w < 0 && errno == EINTR) continue;
    return Status::Unavailable(std::string("tcp send: ") + std::strerror(errno));
  }
  return true;
}

void TcpSession::ArmWrite(bool on) {
  if (write_armed_ == on || !conn_ || conn_->fd() < 0) return;
  epoll_event ev{};
  ev.events = on ? static_cast<uint32_t>(EPOLLIN | EPOLLOUT) : static_cast<uint32_t>(EPOLLIN);
  ev.data.fd = conn_->fd();
  ::epoll_ctl(epfd_, EPOLL_CTL_MOD, conn_->fd(), &ev);
  write_armed_.store(on, std::memory_order_release);
}

Result<bool> TcpSession::WriteLocked() {
  if (!conn_ || conn_->fd() < 0) return false;
  for (;;) {
    // Control frames go between whole RSRs.
    if (!ctrl_.empty() && cursor_off_ == 0) {
      Result<bool> done = WriteBytes(ctrl_.data(), ctrl_.size(), &ctrl_off_);
      if (!done.ok() || !*done) return done;
      ctrl_.clear();
      ctrl_off_ = 0;
    }
    if (cursor_ == out_.size()) return true;
    const ByteBlock& f = out_[cursor_].frame;
    Result<bool> done = WriteBytes(f.data(), f.size(), &cursor_off_);
    if (!done.ok() || !*done) return done;
    ++cursor_;
    cursor_off_ = 0;
  }
}

Status TcpSession::Send(ByteBlock&& frame) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.load() != CommState::kOk) {
    return Status::Unavailable("tcp: connection to peer is closed or failed");
  }
  const size_t n = frame.size();
  const bool rsr = n > 5 && frame.data()[5] == static_cast<uint8_t>(wire::FrameKind::kRsr);
  if (!rsr) {  // no other frame kind is ever handed to a session by the runtime
    return Status::Internal("tcp: the runtime sent a frame that is no RSR");
  }
  // Kept until the peer acknowledges it (resent after a reconnect).
  out_.push_back(Out{std::move(frame)});
  out_bytes_.fetch_add(n, std::memory_order_relaxed);
  if (!conn_ || write_armed_) return Status::Ok();  // reconnecting, or the socket is full
  Result<bool> done = WriteLocked();
  // A broken connection is the progress thread's to notice (EPOLLERR/EOF): the frame stays
  // kept and goes again over the next connection.
  if (done.ok() && !*done) ArmWrite(true);
  return Status::Ok();
}

void TcpSession::QueueControl(std::span<const uint8_t> frame) {
  if (ctrl_off_ == 0 && !ctrl_.empty() && ctrl_.size() == wire::kHeaderSize + kCountBytes &&
      frame.size() == ctrl_.size() && ctrl_[5] == static_cast<uint8_t>(wire::FrameKind::kAck) &&
      frame[5] == ctrl_[5]) {
    std::memcpy(ctrl_.data(), frame.data(), frame.size());  // a newer ack replaces an unsent one
    return;
  }
  ctrl_.insert(ctrl_.end(), frame.begin(), frame.end());
}

Status TcpSession::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.load() != CommState::kOk || !conn_) return Status::Ok();
  Result<bool> done = WriteLocked();
  if (!done.ok()) return done.status();
  ArmWrite(!*done);
  return Status::Ok();
}

bool TcpSession::OnAck(uint64_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  if (count < acked_) return true;  // an old acknowledgement (resumes may reorder nothing)
  if (count - acked_ > cursor_) return false;  // more than we wrote on this connection
  for (uint64_t i = acked_; i < count; ++i) {
    out_bytes_.fetch_sub(out_.front().frame.size(), std::memory_order_relaxed);
    out_.pop_front();
    --cursor_;
  }
  acked_ = count;
  return true;
}

void TcpSession::Received(size_t bytes) {
  const uint64_t r = received_.load(std::memory_order_relaxed) + 1;
  received_.store(r, std::memory_order_release);
  unacked_bytes_ += bytes;
  if (r - acked_received_.load(std::memory_order_relaxed) >= kAckEveryFrames ||
      unacked_bytes_ >= kAckEveryBytes)
    AckPending();
}

void TcpSession::AckPending() {
  const uint64_t r = received_.load(std::memory_order_acquire);
  if (r == acked_received_.load(std::memory_order_relaxed)) return;
  const std::vector<uint8_t> ack = Frame(wire::FrameKind::kAck, self_, peer_, EncodeCount(r));
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.load() != CommState::kOk || !conn_) return;
  acked_received_.store(r, std::memory_order_relaxed);
  unacked_bytes_ = 0;
  QueueControl(ack);
  if (write_armed_) return;
  Result<bool> done = WriteLocked();
  if (done.ok() && !*done) ArmWrite(true);
}

void TcpSession::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_.load() != CommState::kOk) return;
  state_.store(CommState::kClosed);
  if (!conn_ || conn_->fd() < 0) return;  // reconnecting: nobody to say goodbye to
  // Flush what waits (the progress thread no longer runs), then say goodbye with the count
  // of RSRs we received, so the peer knows which of its frames we took. The goodbye goes
  // after every RSR: ctrl_ is written at the next frame boundary, and the loop writes on
  // until both are out.
  const std::vector<uint8_t> bye =
      Frame(wire::FrameKind::kBye, self_, peer_, EncodeCount(received_.load()));
  ctrl_.insert(ctrl_.end(), bye.begin(), bye.end());
  for (;;) {
    Result<bool> done = WriteLocked();
    if (!done.ok()) return;
    if (*done && ctrl_.empty()) break;
    pollfd p{conn_->fd(), POLLOUT, 0};
    if (::poll(&p, 1, kCloseFlushMs) <= 0) return;  // the goodbye did not go out
  }
  DrainUntilPeerCloses(conn_->fd());
}

// Closing a socket with unread bytes in its receive queue (acknowledgements the peer sent
// after our progress thread stopped) sends RST, and an RST makes the peer's kernel discard
// what the peer has not read yet: our goodbye among it, and the peer would then report as
// lost frames we took. So half-close, read and drop until the peer closes its side (it does
// on our goodbye) or kCloseFlushMs pass.
void TcpSession::DrainUntilPeerCloses(int fd) {
  if (::shutdown(fd, SHUT_WR) != 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCloseFlushMs);
  uint8_t sink[16384];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n == 0) return;  // the peer closed: nothing is left to reset
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return;
  }
}

CommObject::Unconfirmed TcpSession::Outstanding() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_) return lost_;
  if (state_.load() == CommState::kOk && conn_ && !write_armed_) {
    Result<bool> done = WriteLocked();  // push on (the progress thread may be asleep)
    if (done.ok() && !*done) ArmWrite(true);
  }
  return {out_.size(), out_bytes_.load(std::memory_order_relaxed)};
}

// ---- connections ----

bool TcpSession::Attach(const std::shared_ptr<TcpConn>& c, uint64_t peer_received,
                        std::vector<uint8_t> first) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_.load() != CommState::kOk) return false;
    if (conn_ && conn_ != c) Detach();
    // The peer took everything up to peer_received; the rest goes again, in order.
    while (acked_ < peer_received && !out_.empty()) {
      out_bytes_.fetch_sub(out_.front().frame.size(), std::memory_order_relaxed);
      out_.pop_front();
      ++acked_;
    }
    cursor_ = 0;
    cursor_off_ = 0;
    ctrl_ = std::move(first);
    ctrl_off_ = 0;
    conn_ = c;
    write_armed_.store(false, std::memory_order_release);
    ever_attached_.store(true);
    lost_since_ms_.store(-1);
    acked_received_.store(received_.load());  // the peer knows what we received: `first`
    Result<bool> done = WriteLocked();
    if (done.ok() && !*done) ArmWrite(true);
  }
  attached_cv_.notify_all();
  return true;
}

bool TcpSession::has_conn() const {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_ != nullptr;
}

bool TcpSession::WaitAttached(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  attached_cv_.wait_until(lock, deadline,
                          [&] { return conn_ != nullptr || state_.load() != CommState::kOk; });
  return conn_ != nullptr;
}

std::shared_ptr<TcpConn> TcpSession::conn() const {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_;
}

void TcpSession::Detach() {
  if (!conn_) return;
  ::epoll_ctl(epfd_, EPOLL_CTL_DEL, conn_->fd(), nullptr);
  conn_->CloseFd();
  conn_.reset();
  write_armed_.store(false, std::memory_order_release);
}

bool TcpSession::Lost(const std::shared_ptr<TcpConn>& c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conn_ != c) return false;
  Detach();
  if (state_.load() == CommState::kOk) lost_since_ms_.store(NowMs());
  return true;
}

bool TcpSession::Shut(CommState state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_) return false;
  shut_ = true;
  lost_ = {out_.size(), out_bytes_.load(std::memory_order_relaxed)};
  out_.clear();
  out_bytes_.store(0, std::memory_order_relaxed);
  cursor_ = cursor_off_ = 0;
  ctrl_.clear();
  if (state_.load() == CommState::kOk) state_.store(state);
  Detach();
  lost_since_ms_.store(-1);
  attached_cv_.notify_all();
  return true;
}

void TcpSession::GiveUp(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (given_up_.ok()) given_up_ = why;
}

Status TcpSession::given_up() const {
  std::lock_guard<std::mutex> lock(mu_);
  return given_up_;
}

void TcpSession::set_session_key(const SecretKey& k) {
  std::lock_guard<std::mutex> lock(mu_);
  session_key_ = k;
}

SecretKey TcpSession::session_key() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_key_;
}

}  // namespace ukai::rt::tcp
