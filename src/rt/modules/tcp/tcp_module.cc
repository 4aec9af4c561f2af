// The tcp module: set-up, reading frames, progress, deadlines, close (tcp_module_impl.h;
// the handshake is in tcp_handshake.cc, sessions in tcp_session.h).
#include "rt/modules/tcp/tcp_module.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "rt/modules/tcp/tcp_module_impl.h"

namespace ukai::rt {
namespace tcp {
namespace {

// Up to this many connections are polled with poll(2) while spinning (see Progress());
// with more, one epoll_wait finds the ready ones.
constexpr size_t kDirectPollMax = 8;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Parses "host:port" (host may be empty = any).
Status ParseHostPort(const std::string& s, std::string* host, uint16_t* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos)
    return Status::InvalidArgument("expected HOST:PORT, got '" + s + "'");
  *host = s.substr(0, colon);
  char* end = nullptr;
  long p = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535 || colon + 1 == s.size()) {
    return Status::InvalidArgument("bad port in '" + s + "'");
  }
  *port = static_cast<uint16_t>(p);
  return Status::Ok();
}

std::string HostName() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

ModuleCaps TcpModule::Query() const {
  ModuleCaps c;
  c.reach = Reach::kAnyHost;
  c.latency_us = 15;
  c.bandwidth_gbytes_s = 2;
  c.max_payload_bytes = wire::kMaxPayloadBytes;
  c.detects_peer_failure = true;
  c.multi_process = true;
  return c;
}

// ---- set-up ----

Status TcpModule::Init(ModuleHost* host) {
  host_ = host;
  std::string listen = host->Param("tcp.listen");
  // A job confined to this host needs no other interface: listen on loopback only.
  if (listen.empty()) listen = host->job_on_one_host() ? "127.0.0.1:0" : "0.0.0.0:0";
  Result<TcpLimits> limits = ReadTcpLimits(host);
  if (!limits.ok()) return limits.status();
  limits_ = *limits;
  std::string bind_host;
  uint16_t port = 0;
  UKAI_RETURN_IF_ERROR(ParseHostPort(listen, &bind_host, &port).WithContext("tcp.listen"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (bind_host.empty() || bind_host == "*") bind_host = "0.0.0.0";
  if (::inet_pton(AF_INET, bind_host.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("tcp.listen: '" + bind_host + "' is not an IPv4 address");
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return Status::IoError(Errno("tcp socket"));
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Status::IoError(Errno("tcp bind " + listen));
  }
  if (::listen(listen_fd_, 128) != 0) return Status::IoError(Errno("tcp listen"));
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return Status::IoError(Errno("epoll_create1"));
  identity_ = tcp::HostIdentity();
  const bool any = addr.sin_addr.s_addr == htonl(INADDR_ANY);
  const bool loopback = (ntohl(addr.sin_addr.s_addr) >> 24) == 127;
  self_target_.port = ntohs(addr.sin_port);
  self_target_.identity = identity_;
  self_target_.bind = any        ? tcp::Bind::kAny
                      : loopback ? tcp::Bind::kLoopback
                                 : tcp::Bind::kSpecific;
  self_target_.host = host->Param("tcp.host");
  if (self_target_.host.empty()) self_target_.host = any ? HostName() : bind_host;
  host->Trace("tcp listening on " + bind_host + ":" + std::to_string(self_target_.port) +
              " (advertised " + self_target_.host + ")");
  return StartHandshakeThread();
}

void TcpModule::Register(const std::shared_ptr<TcpConn>& c) {
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    conns_[c->fd()] = c;
    version_.fetch_add(1, std::memory_order_release);
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = c->fd();
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd(), &ev);
}

void TcpModule::Discard(const std::shared_ptr<TcpConn>& c) {
  if (c->fd() >= 0) ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd(), nullptr);
  Unregister(c);
  c->CloseFd();
}

void TcpModule::Unregister(const std::shared_ptr<TcpConn>& c) {
  std::lock_guard<std::mutex> lock(conns_mu_);
  for (auto it = conns_.begin(); it != conns_.end(); ++it) {
    if (it->second != c) continue;
    conns_.erase(it);
    if (c->accepted()) --accepted_open_;
    version_.fetch_add(1, std::memory_order_release);
    break;
  }
}

// ---- frames ----

bool TcpModule::HandleFrame(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                            std::span<const uint8_t> payload, ByteBlock* owned) {
  const std::shared_ptr<TcpSession>& s = c->session;  // set before it is registered
  if (h.source != s->peer() || h.target != self()) {
    Broken(c,
           Status::ParseError("tcp: frame from runtime " + RuntimeIdString(h.source) + " to " +
                              RuntimeIdString(h.target) + " on the connection of " +
                              RuntimeIdString(s->peer())),
           /*peer_fault=*/true);
    return false;
  }
  switch (h.kind) {
    case wire::FrameKind::kRsr:
      host_->Deliver(h, payload, owned);
      s->Received(h.frame_size());
      return true;
    case wire::FrameKind::kAck: {
      Result<uint64_t> n = tcp::DecodeCount(payload);
      if (n.ok() && s->OnAck(*n)) return true;
      Broken(c, Status::ParseError("tcp: bad acknowledgement from " + RuntimeIdString(s->peer())),
             /*peer_fault=*/true);
      return false;
    }
    case wire::FrameKind::kBye: {
      Result<uint64_t> n = tcp::DecodeCount(payload);
      if (n.ok()) s->OnAck(*n);
      Unregister(c);
      FailSession(s, /*orderly=*/true, Status::Unavailable("peer said goodbye"));
      return false;
    }
    default:
      Broken(c,
             Status::ParseError("tcp: unexpected frame kind " +
                                std::to_string(static_cast<int>(h.kind)) + " from " +
                                RuntimeIdString(s->peer())),
             /*peer_fault=*/true);
      return false;
  }
}

void TcpModule::FailSession(const std::shared_ptr<TcpSession>& s, bool orderly, const Status& why) {
  const std::shared_ptr<TcpConn> c = s->conn();
  if (!s->Shut(orderly ? CommState::kClosed : CommState::kFailed)) return;
  if (c != nullptr) Unregister(c);
  host_->PeerFailed(s->peer(), "tcp", orderly, why);
}

void TcpModule::Broken(const std::shared_ptr<TcpConn>& c, const Status& why, bool peer_fault) {
  const std::shared_ptr<TcpSession> s = c->session;
  if (peer_fault) host_->RejectFrame(why);
  if (peer_fault || limits_.reconnect_ms == 0 || s->state() != CommState::kOk) {
    Unregister(c);
    FailSession(s, /*orderly=*/false, why);
    c->CloseFd();
    return;
  }
  Unregister(c);
  if (!s->Lost(c)) return;  // not the session's connection any more (replaced by a resume)
  counters_.connections_lost.fetch_add(1, std::memory_order_relaxed);
  host_->Trace("tcp: connection to " + RuntimeIdString(s->peer()) + " lost (" + why.ToString() +
               "); waiting up to " + std::to_string(limits_.reconnect_ms) +
               " ms (tcp.reconnect_ms) for a new one");
  if (s->dialer()) QueueRedial(s);
}

// Delivers every complete frame in c->rbuf[rstart, rend). Returns frames delivered, or -1
// when the connection ended.
int TcpModule::ParseFrames(const std::shared_ptr<TcpConn>& c) {
  int n = 0;
  while (c->rend - c->rstart >= wire::kHeaderSize) {
    std::span<const uint8_t> avail(c->rbuf.data() + c->rstart, c->rend - c->rstart);
    // Before the handshake, only small frames (tcp_hello.h) are acceptable.
    Result<wire::FrameHeader> h = wire::DecodeHeader(avail);
    if (!h.ok()) {
      Broken(c, h.status().WithContext("tcp stream"), /*peer_fault=*/true);
      return -1;
    }
    const size_t total = h->frame_size();
    if (total > c->rbuf.capacity()) {  // large frame: receive into its own block
      c->big = ByteBlock(total);
      c->big.Resize(total);
      std::memcpy(c->big.data(), avail.data(), avail.size());
      c->big_filled = avail.size();
      c->rstart = c->rend;
      return n;
    }
    if (avail.size() < total) return n;
    if (!HandleFrame(c, *h, avail.subspan(h->header_len, h->payload_len), nullptr)) return -1;
    c->rstart += total;
    ++n;
  }
  return n;
}

int TcpModule::ReadConn(const std::shared_ptr<TcpConn>& c) {
  if (!c->big.empty()) {  // continue a large frame
    ssize_t r =
        ::recv(c->fd(), c->big.data() + c->big_filled, c->big.size() - c->big_filled, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
      Broken(c,
             Status::Unavailable(r == 0 ? "tcp: peer closed the connection mid-frame"
                                        : Errno("tcp recv")),
             /*peer_fault=*/false);
      return -1;
    }
    if (r > 0) {
      c->last_rx_ms = NowMs();
      c->big_filled += static_cast<size_t>(r);
      // Request/reply traffic puts a connection in the kernel's "ping-pong" mode, where it
      // delays ACKs hoping to piggyback them on a reply: in the middle of a large frame
      // that stalls the sender's window. Acknowledge at once while one is arriving.
      int one = 1;
      ::setsockopt(c->fd(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
    if (c->big_filled < c->big.size()) return 0;
    ByteBlock frame = std::move(c->big);
    c->big_filled = 0;
    Result<wire::FrameHeader> h = wire::DecodeHeader(frame.span());
    std::span<const uint8_t> payload(frame.data() + h->header_len, h->payload_len);
    return HandleFrame(c, *h, payload, &frame) ? 1 : -1;
  }
  // Compact: frames delivered in the previous Progress() have been dispatched by now.
  if (c->rstart != 0) {
    std::memmove(c->rbuf.data(), c->rbuf.data() + c->rstart, c->rend - c->rstart);
    c->rend -= c->rstart;
    c->rstart = 0;
  }
  ssize_t r = ::recv(c->fd(), c->rbuf.data() + c->rend, c->rbuf.capacity() - c->rend, MSG_DONTWAIT);
  if (r == 0) {
    Broken(c, Status::Unavailable("tcp: peer closed the connection"), /*peer_fault=*/false);
    return -1;
  }
  if (r < 0) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    Broken(c, Status::Unavailable(Errno("tcp recv")), /*peer_fault=*/false);
    return -1;
  }
  c->rend += static_cast<size_t>(r);
  c->last_rx_ms = NowMs();
  return ParseFrames(c);
}

// ---- progress ----

void TcpModule::RefreshPolled() {
  const uint64_t v = version_.load(std::memory_order_acquire);
  if (v == polled_version_) return;
  std::lock_guard<std::mutex> lock(conns_mu_);
  polled_.clear();
  for (auto& [fd, c] : conns_) polled_.push_back(c);
  polled_version_ = version_.load(std::memory_order_relaxed);
}

std::vector<std::shared_ptr<TcpSession>> TcpModule::Sessions() {
  std::vector<std::shared_ptr<TcpSession>> out;
  std::lock_guard<std::mutex> lock(conns_mu_);
  out.reserve(sessions_.size());
  for (auto& [peer, s] : sessions_) out.push_back(s);
  return out;
}

void TcpModule::CheckDeadlines() {
  const int64_t now = NowMs();
  if (now - deadlines_checked_ms_ < 50) return;
  deadlines_checked_ms_ = now;
  for (size_t i = 0; i < polled_.size(); ++i) {
    const std::shared_ptr<TcpConn> c = polled_[i];  // Broken() may refresh polled_ later
    const bool partial = !c->big.empty() || c->rend > c->rstart;
    if (c->fd() >= 0 && partial && now - c->last_rx_ms > limits_.frame_timeout_ms) {
      counters_.frame_timeouts.fetch_add(1, std::memory_order_relaxed);
      const Status why = Status::Unavailable(
          "tcp: a frame begun by peer " + RuntimeIdString(c->session->peer()) +
          " was not completed within " + std::to_string(limits_.frame_timeout_ms) +
          " ms (tcp.frame_timeout_ms)");
      host_->RejectFrame(why);
      Broken(c, why, /*peer_fault=*/false);
    }
  }
  for (const std::shared_ptr<TcpSession>& s : Sessions()) {
    if (s->state() != CommState::kOk) continue;
    s->AckPending();
    const int64_t lost = s->lost_since_ms();
    if (lost < 0) continue;
    if (Status why = s->given_up(); !why.ok()) {
      FailSession(s, /*orderly=*/false, why);
    } else if (!s->dialer() && now - lost > limits_.reconnect_ms) {
      FailSession(
          s, /*orderly=*/false,
          Status::Unavailable("tcp: the connection to " + RuntimeIdString(s->peer()) +
                              " was lost and the peer did not reconnect within " +
                              std::to_string(limits_.reconnect_ms) + " ms (tcp.reconnect_ms)"));
    }
  }
}

int TcpModule::TakeHandovers() {
  std::vector<Handover> taken;
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    taken.swap(handovers_);
    has_handovers_.store(false, std::memory_order_relaxed);
  }
  int delivered = 0;
  for (const Handover& h : taken) {
    if (h.resume && !Resume(h.conn, h.peer_received)) continue;
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      conns_[h.conn->fd()] = h.conn;  // in epoll already
      version_.fetch_add(1, std::memory_order_release);
    }
    if (!h.resume) host_->AdoptIncoming(h.conn->session->peer(), h.conn->session);
    // Frames the handshake thread read after the proof (none from a well-behaved dialer).
    if (h.conn->fd() >= 0 && h.conn->rend > h.conn->rstart) {
      const int n = ParseFrames(h.conn);
      if (n > 0) delivered += n;
    }
  }
  return delivered;
}

bool TcpModule::PrepareToBlock() {
  // Going idle: acknowledge what arrived, so that senders free it (and Finalize at the
  // peer sees it taken) without waiting for the timer.
  for (const std::shared_ptr<TcpSession>& s : Sessions()) {
    if (s->state() == CommState::kOk) s->AckPending();
  }
  return true;
}

std::map<std::string, uint64_t> TcpModule::Counters() const {
  return {{"connections_refused", counters_.connections_refused.load()},
          {"handshake_timeouts", counters_.handshake_timeouts.load()},
          {"frame_timeouts", counters_.frame_timeouts.load()},
          {"auth_failures", counters_.auth_failures.load()},
          {"connections_lost", counters_.connections_lost.load()},
          {"reconnects", counters_.reconnects.load()}};
}

void TcpModule::HandleReady(const std::shared_ptr<TcpConn>& c, bool writable, bool readable,
                            int* delivered) {
  if (c->fd() < 0) return;
  if (writable) {
    Status st = c->session->Flush();
    if (!st.ok()) {
      Broken(c, st, /*peer_fault=*/false);
      return;
    }
  }
  if (readable) {
    const int got = ReadConn(c);
    if (got > 0) *delivered += got;
  }
}

int TcpModule::Progress() {
  const int handed = has_handovers_.load(std::memory_order_acquire) ? TakeHandovers() : 0;
  RefreshPolled();
  CheckDeadlines();
  if (polled_.size() > kDirectPollMax) return handed + PollEvents();
  // Few connections: poll(2) them directly (as fast as epoll_wait here, and it takes no
  // epoll lock that arriving segments' wake-ups need too). Spinning on recv(MSG_DONTWAIT)
  // instead was not faster: it takes the socket lock that the sender's softirq needs to
  // queue the data. (The listening socket is the handshake thread's.)
  pollfd fds[kDirectPollMax];
  size_t n = 0;
  for (const auto& c : polled_) {
    const bool out = c->session->write_pending();
    fds[n++] = {c->fd(), static_cast<short>(out ? POLLIN | POLLOUT : POLLIN), 0};
  }
  if (n == 0 || ::poll(fds, n, 0) <= 0) return handed;
  int delivered = handed;
  for (size_t i = 0; i < n; ++i) {
    const short ev = fds[i].revents;
    if (ev == 0) continue;
    HandleReady(polled_[i], (ev & POLLOUT) != 0, (ev & (POLLIN | POLLERR | POLLHUP)) != 0,
                &delivered);
  }
  return delivered;
}

int TcpModule::PollEvents() {
  epoll_event events[64];
  int ready = ::epoll_wait(epfd_, events, 64, 0);
  int delivered = 0;
  for (int i = 0; i < ready; ++i) {
    const int fd = events[i].data.fd;
    std::shared_ptr<TcpConn> c;
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      auto it = conns_.find(fd);
      if (it == conns_.end()) continue;
      c = it->second;
    }
    HandleReady(c, (events[i].events & EPOLLOUT) != 0,
                (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0, &delivered);
  }
  return delivered;
}

void TcpModule::Close() {
  StopHandshakeThread();  // no connection is handed over after this
  {
    std::lock_guard<std::mutex> lock(redial_mu_);
    stopping_ = true;
  }
  redial_cv_.notify_all();
  if (reconnector_.joinable()) reconnector_.join();
  std::vector<std::shared_ptr<TcpConn>> conns;
  std::vector<std::shared_ptr<TcpSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    for (auto& [fd, c] : conns_) conns.push_back(c);
    for (Handover& h : handovers_) conns.push_back(h.conn);
    for (auto& [peer, s] : sessions_) sessions.push_back(s);
    conns_.clear();
    handovers_.clear();
  }
  for (auto& s : sessions) {
    s->Close();
    s->Shut(CommState::kClosed);
  }
  for (auto& c : conns) c->CloseFd();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epfd_ >= 0) ::close(epfd_);
  listen_fd_ = epfd_ = -1;
}

}  // namespace tcp

std::unique_ptr<Module> NewTcpModule(const ModuleEnv&) {
  return std::make_unique<tcp::TcpModule>();
}

}  // namespace ukai::rt
