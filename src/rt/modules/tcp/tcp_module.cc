// The tcp module. Threads: Connect() and TcpConn::Send() run on user threads; everything
// else (accept, reads, queued writes, failure handling) on the progress thread inside
// Progress(). A connection's send side is guarded by its send_mu_; the fd is closed only
// under that lock so no writer ever uses a recycled fd number.
#include "rt/modules/tcp/tcp_module.h"

#include "rt/modules/tcp/tcp_limits.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ukai::rt {
namespace {

constexpr size_t kRecvBufferBytes = 256 << 10;
constexpr int kCloseFlushMs = 2000;
// Up to this many connections are polled with poll(2) while spinning (see Progress());
// with more, one epoll_wait finds the ready ones.
constexpr size_t kDirectPollMax = 8;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SetNonBlockingNoDelay(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

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

// A connected socket to `addr`, or an error naming `where`: the connect is non-blocking and
// given up after `timeout_ms` (an unreachable host does not hang the caller for minutes).
Result<int> ConnectWithTimeout(const sockaddr& addr, socklen_t len, const std::string& where,
                               int timeout_ms) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IoError(Errno("tcp socket"));
  if (::connect(fd, &addr, len) != 0 && errno != EINPROGRESS) {
    Status st = Status::Unavailable(Errno("tcp connect " + where));
    ::close(fd);
    return st;
  }
  pollfd p{fd, POLLOUT, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  if (rc == 0) {
    ::close(fd);
    return Status::Unavailable("tcp connect " + where + ": no answer within " +
                               std::to_string(timeout_ms) + " ms (tcp.connect_timeout_ms)");
  }
  int err = 0;
  socklen_t elen = sizeof err;
  if (rc < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
    if (err != 0) errno = err;
    Status st = Status::Unavailable(Errno("tcp connect " + where));
    ::close(fd);
    return st;
  }
  return fd;
}

std::string HostName() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

class TcpModule;

// One TCP connection to a peer runtime; also its CommObject.
class TcpConn final : public CommObject {
 public:
  TcpConn(TcpModule* m, int fd, RuntimeId peer) : module_(m), fd_(fd), peer_(peer) {}
  Status Send(ByteBlock&& frame) override;
  void Close() override;
  CommState state() const override { return state_.load(); }
  RuntimeId peer() const override { return peer_.load(); }
  size_t QueuedBytes() const override;
  Unconfirmed Outstanding() override;

  // Progress thread: writes queued frames.
  Status Flush();
  // Frames wait in the send queue (the progress thread polls them out).
  bool has_queued() const { return has_queued_.load(std::memory_order_acquire); }
  // Marks failed/closed and closes the fd (under the send lock). False if already done.
  bool Shut(CommState state);

  int fd() const { return fd_; }
  void set_peer(RuntimeId p) { peer_.store(p); }
  // Simultaneous open: from now on frames for the peer go over `to` (the peer's own
  // connection to us), provided this one has carried no RSR yet (so order is kept).
  // Returns whether it switched. The unused connection stays open, idle, until Close.
  bool RedirectIfUnused(const std::shared_ptr<TcpConn>& to);

  // Receive state (progress thread only).
  ByteBlock rbuf{kRecvBufferBytes};
  size_t rstart = 0;
  size_t rend = 0;  // bytes valid in rbuf
  ByteBlock big;    // a frame larger than rbuf being received
  size_t big_filled = 0;
  bool hello_seen = false;
  bool accepted = false;  // opened by the peer
  bool rsr_seen = false;  // an RSR arrived on it
  // tcp_limits.h deadlines: when the connection opened, when bytes last arrived.
  const int64_t opened_ms = NowMs();
  int64_t last_rx_ms = opened_ms;

 private:
  // Writes from `frame` at `*off`; returns false on EAGAIN, error Status on failure.
  Result<bool> WriteSome(const ByteBlock& frame, size_t* off);
  void ArmWrite(bool on);
  // Flow accounting (under send_mu_): a frame left the queue / was fully written.
  void Dequeued(size_t bytes) { queued_bytes_.fetch_sub(bytes, std::memory_order_relaxed); }
  void Written() {
    ends_.push_back(sent_bytes_);
    if (ends_.size() > prune_at_) {
      PruneAcked();
      prune_at_ = std::max<size_t>(4096, 2 * ends_.size());
    }
  }
  // Drops the ends of frames the peer's TCP acknowledged; returns the unacknowledged bytes.
  uint64_t PruneAcked();
  Unconfirmed CountLocked();

  TcpModule* module_;
  std::mutex send_mu_;
  int fd_;
  std::atomic<RuntimeId> peer_;
  std::atomic<CommState> state_{CommState::kOk};
  struct Pending {
    ByteBlock frame;
    size_t off;
  };
  std::deque<Pending> queue_;
  std::atomic<bool> has_queued_{false};
  // Flow control (under send_mu_ unless atomic): bytes of the frames in queue_; bytes
  // written to the socket so far; the stream offset at which each written frame ends,
  // until the peer's TCP acknowledged it (SIOCOUTQ); what was lost when the fd closed.
  std::atomic<size_t> queued_bytes_{0};
  uint64_t sent_bytes_ = 0;
  std::deque<uint64_t> ends_;
  size_t prune_at_ = 4096;
  Unconfirmed lost_;
  bool carried_rsr_ = false;           // under send_mu_
  std::shared_ptr<TcpConn> redirect_;  // under send_mu_: send over this one instead
  // redirect_.get() for lock-free readers (QueuedBytes on every send); set once, kept alive
  // by redirect_, never cleared.
  std::atomic<TcpConn*> redirect_raw_{nullptr};
  bool write_armed_ = false;
};

class TcpModule final : public Module {
 public:
  ~TcpModule() override { Close(); }
  std::string_view name() const override { return "tcp"; }
  Status Init(ModuleHost* host) override;
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = Reach::kAnyHost;
    c.latency_us = 15;
    c.bandwidth_gbytes_s = 2;
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = true;
    c.multi_process = true;
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override;
  bool CanReach(std::span<const uint8_t> d) const override { return Parse(d).ok(); }
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer, std::span<const uint8_t> d) override;
  int Progress() override;
  int WaitFd() const override { return epfd_; }
  void Close() override;

  int epfd() const { return epfd_; }
  RuntimeId self() const { return host_->runtime_id(); }

 private:
  struct Target {
    std::string host;      // advertised address
    std::string hostname;  // the peer's gethostname(), to use loopback on this host
    uint16_t port = 0;
  };
  static Result<Target> Parse(std::span<const uint8_t> d);
  void Accept();
  void Register(const std::shared_ptr<TcpConn>& c);
  int ReadConn(const std::shared_ptr<TcpConn>& c);
  int ParseFrames(const std::shared_ptr<TcpConn>& c);
  void RefreshPolled();
  int PollEvents();
  bool HandleFrame(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                   std::span<const uint8_t> payload, ByteBlock* owned);
  void Fail(const std::shared_ptr<TcpConn>& c, bool orderly, const Status& why);
  // Simultaneous open (both runtimes connected to each other): send over the peer's
  // connection `c` too, if ours carried no RSR yet. Rules (at most one side switches):
  // on the peer's hello when the peer's id is lower, and on the peer's first RSR.
  void UseIncoming(const std::shared_ptr<TcpConn>& c);
  // Closes accepted connections without a hello after handshake_timeout_ms, and fails those
  // with a frame begun but not complete frame_timeout_ms after their last bytes (checked
  // at most every 50 ms).
  void CheckDeadlines();
  std::map<std::string, uint64_t> Counters() const override;

  ModuleHost* host_ = nullptr;
  int listen_fd_ = -1;
  int epfd_ = -1;
  uint16_t port_ = 0;
  std::string advertised_;
  std::string hostname_;
  TcpLimits limits_;
  TcpLimitCounters limit_counters_;
  int64_t deadlines_checked_ms_ = 0;  // progress thread only
  size_t accepted_open_ = 0;          // accepted connections open (under conns_mu_)
  std::mutex conns_mu_;
  std::unordered_map<int, std::shared_ptr<TcpConn>> conns_;
  // Connections made by Connect(), per peer (under conns_mu_): when the peer connected to
  // us at the same time, the connection opened by the lower runtime id carries both
  // directions (replies piggyback the TCP acknowledgements instead of each side's data
  // needing pure ACK segments on a second connection).
  std::unordered_map<RuntimeId, std::weak_ptr<TcpConn>> outgoing_;
  std::atomic<uint64_t> version_{0};  // bumped when conns_ changes
  // Progress thread: a snapshot of conns_ (refreshed when version_ moves).
  std::vector<std::shared_ptr<TcpConn>> polled_;
  uint64_t polled_version_ = ~uint64_t{0};
  std::vector<std::shared_ptr<TcpConn>> scratch_;
};

// ---- TcpConn ----

void TcpConn::ArmWrite(bool on) {
  if (write_armed_ == on) return;
  epoll_event ev{};
  ev.events = on ? static_cast<uint32_t>(EPOLLIN | EPOLLOUT) : static_cast<uint32_t>(EPOLLIN);
  ev.data.fd = fd_;
  ::epoll_ctl(module_->epfd(), EPOLL_CTL_MOD, fd_, &ev);
  write_armed_ = on;
}

Result<bool> TcpConn::WriteSome(const ByteBlock& frame, size_t* off) {
  while (*off < frame.size()) {
    ssize_t n = ::send(fd_, frame.data() + *off, frame.size() - *off, MSG_NOSIGNAL);
    if (n > 0) {
      *off += static_cast<size_t>(n);
      sent_bytes_ += static_cast<uint64_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n < 0 && errno == EINTR) continue;
    return Status::Unavailable(Errno("tcp send"));
  }
  return true;
}

bool TcpConn::RedirectIfUnused(const std::shared_ptr<TcpConn>& to) {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (carried_rsr_ || redirect_ || state_.load() != CommState::kOk) return false;
  redirect_ = to;
  redirect_raw_.store(to.get(), std::memory_order_release);
  return true;
}

Status TcpConn::Send(ByteBlock&& frame) {
  std::unique_lock<std::mutex> lock(send_mu_);
  if (redirect_) {
    std::shared_ptr<TcpConn> to = redirect_;
    lock.unlock();
    return to->Send(std::move(frame));
  }
  if (state_.load() != CommState::kOk) {
    return Status::Unavailable("tcp: connection to peer is closed or failed");
  }
  if (frame.size() > 5 && frame.data()[5] == static_cast<uint8_t>(wire::FrameKind::kRsr)) {
    carried_rsr_ = true;
  }
  // Queued frames first, from this thread too: a sender streaming large frames keeps the
  // socket busy instead of waiting for the next progress pass to see it writable.
  while (!queue_.empty()) {
    Result<bool> done = WriteSome(queue_.front().frame, &queue_.front().off);
    if (!done.ok()) return done.status();
    if (!*done) break;
    Dequeued(queue_.front().frame.size());
    Written();
    queue_.pop_front();
  }
  if (queue_.empty()) {
    size_t off = 0;
    Result<bool> done = WriteSome(frame, &off);
    if (!done.ok()) return done.status();  // the progress thread sees the error and fails it
    if (*done) {
      Written();
      if (write_armed_) {
        has_queued_.store(false, std::memory_order_release);
        ArmWrite(false);
      }
      return Status::Ok();
    }
    queued_bytes_.fetch_add(frame.size(), std::memory_order_relaxed);
    queue_.push_back({std::move(frame), off});
  } else {
    queued_bytes_.fetch_add(frame.size(), std::memory_order_relaxed);
    queue_.push_back({std::move(frame), 0});
  }
  has_queued_.store(true, std::memory_order_release);
  ArmWrite(true);
  return Status::Ok();
}

Status TcpConn::Flush() {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (state_.load() != CommState::kOk) return Status::Ok();
  while (!queue_.empty()) {
    Result<bool> done = WriteSome(queue_.front().frame, &queue_.front().off);
    if (!done.ok()) return done.status();
    if (!*done) return Status::Ok();
    Dequeued(queue_.front().frame.size());
    Written();
    queue_.pop_front();
  }
  has_queued_.store(false, std::memory_order_release);
  ArmWrite(false);
  return Status::Ok();
}

bool TcpConn::Shut(CommState state) {
  std::lock_guard<std::mutex> lock(send_mu_);
  if (fd_ < 0) return false;
  lost_ = CountLocked();  // what the peer has not taken is lost with the connection
  state_.store(state);
  ::epoll_ctl(module_->epfd(), EPOLL_CTL_DEL, fd_, nullptr);
  ::close(fd_);
  fd_ = -1;
  queue_.clear();
  queued_bytes_.store(0, std::memory_order_relaxed);
  ends_.clear();
  return true;
}

uint64_t TcpConn::PruneAcked() {
  int unacked = 0;
  if (fd_ < 0 || ::ioctl(fd_, SIOCOUTQ, &unacked) != 0) return 0;
  const uint64_t acked = sent_bytes_ - static_cast<uint64_t>(unacked);
  while (!ends_.empty() && ends_.front() <= acked) ends_.pop_front();
  return static_cast<uint64_t>(unacked);
}

CommObject::Unconfirmed TcpConn::CountLocked() {
  if (fd_ < 0) return lost_;
  const uint64_t in_kernel = PruneAcked();
  return {queue_.size() + ends_.size(), queued_bytes_.load(std::memory_order_relaxed) + in_kernel};
}

size_t TcpConn::QueuedBytes() const {
  const TcpConn* to = redirect_raw_.load(std::memory_order_acquire);
  return queued_bytes_.load(std::memory_order_relaxed) + (to ? to->QueuedBytes() : 0);
}

CommObject::Unconfirmed TcpConn::Outstanding() {
  std::shared_ptr<TcpConn> to;
  Unconfirmed mine;
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    to = redirect_;
    if (fd_ >= 0 && state_.load() == CommState::kOk) {
      while (!queue_.empty()) {  // push the queue on (the progress thread may be asleep)
        Result<bool> done = WriteSome(queue_.front().frame, &queue_.front().off);
        if (!done.ok() || !*done) break;
        Dequeued(queue_.front().frame.size());
        Written();
        queue_.pop_front();
      }
    }
    mine = CountLocked();
  }
  if (to) {
    const Unconfirmed theirs = to->Outstanding();
    mine.frames += theirs.frames;
    mine.bytes += theirs.bytes;
  }
  return mine;
}

void TcpConn::Close() {
  std::shared_ptr<TcpConn> to;
  {
    std::lock_guard<std::mutex> lock(send_mu_);
    to = redirect_;
  }
  // Our frames went over `to`: flush it and say goodbye there first, so the peer sees the
  // goodbye after the last frame.
  if (to) to->Close();
  std::lock_guard<std::mutex> lock(send_mu_);
  if (state_.load() != CommState::kOk || fd_ < 0) return;
  // Flush what is queued (the progress thread no longer runs), then say goodbye.
  wire::FrameHeader bye;
  bye.kind = wire::FrameKind::kBye;
  bye.source = module_->self();
  bye.target = peer_.load();
  ByteBlock b(wire::kHeaderSize);
  b.Resize(wire::kHeaderSize);
  wire::EncodeHeader(bye, {b.data(), b.size()});
  queued_bytes_.fetch_add(b.size(), std::memory_order_relaxed);
  queue_.push_back({std::move(b), 0});
  while (!queue_.empty()) {
    Result<bool> done = WriteSome(queue_.front().frame, &queue_.front().off);
    if (!done.ok()) break;
    if (*done) {
      Dequeued(queue_.front().frame.size());
      Written();
      queue_.pop_front();
      continue;
    }
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, kCloseFlushMs) <= 0) break;
  }
  state_.store(CommState::kClosed);
}

// ---- TcpModule ----

Status TcpModule::Init(ModuleHost* host) {
  host_ = host;
  std::string listen = host->Param("tcp.listen");
  if (listen.empty()) listen = "0.0.0.0:0";
  Result<TcpLimits> limits = ReadTcpLimits(host);
  if (!limits.ok()) return limits.status();
  limits_ = *limits;
  std::string bind_host;
  UKAI_RETURN_IF_ERROR(ParseHostPort(listen, &bind_host, &port_).WithContext("tcp.listen"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
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
  port_ = ntohs(addr.sin_port);
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return Status::IoError(Errno("epoll_create1"));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd_;
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  hostname_ = HostName();
  advertised_ = host->Param("tcp.host");
  if (advertised_.empty()) advertised_ = bind_host == "0.0.0.0" ? hostname_ : bind_host;
  host->Trace("tcp listening on " + bind_host + ":" + std::to_string(port_) + " (advertised " +
              advertised_ + ")");
  return Status::Ok();
}

Result<std::vector<uint8_t>> TcpModule::MakeDescriptor() {
  // u16 port, u8 len + advertised host, u8 len + host name.
  std::vector<uint8_t> d(2);
  wire::PutLe16(d.data(), port_);
  for (const std::string* s : {&advertised_, &hostname_}) {
    d.push_back(static_cast<uint8_t>(std::min<size_t>(s->size(), 255)));
    d.insert(d.end(), s->begin(), s->begin() + std::min<size_t>(s->size(), 255));
  }
  return d;
}

Result<TcpModule::Target> TcpModule::Parse(std::span<const uint8_t> d) {
  Target t;
  if (d.size() < 4) return Status::ParseError("tcp descriptor too short");
  t.port = wire::GetLe16(d.data());
  size_t pos = 2;
  for (std::string* s : {&t.host, &t.hostname}) {
    if (pos >= d.size() || d.size() - pos - 1 < d[pos]) {
      return Status::ParseError("tcp descriptor truncated");
    }
    s->assign(reinterpret_cast<const char*>(d.data() + pos + 1), d[pos]);
    pos += 1 + d[pos];
  }
  if (pos != d.size() || t.port == 0) return Status::ParseError("tcp descriptor malformed");
  return t;
}

Result<std::shared_ptr<CommObject>> TcpModule::Connect(RuntimeId peer, std::span<const uint8_t> d) {
  Result<Target> t = Parse(d);
  if (!t.ok()) return t.status();
  const std::string host = t->hostname == hostname_ ? "127.0.0.1" : t->host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(t->port).c_str(), &hints, &res) != 0 || !res) {
    return Status::Unavailable("tcp: cannot resolve '" + host + "'");
  }
  const std::string where = host + ":" + std::to_string(t->port);
  Result<int> fd =
      ConnectWithTimeout(*res->ai_addr, res->ai_addrlen, where, limits_.connect_timeout_ms);
  ::freeaddrinfo(res);
  if (!fd.ok()) return fd.status();
  SetNonBlockingNoDelay(*fd);
  auto c = std::make_shared<TcpConn>(this, *fd, peer);
  c->hello_seen = true;  // we know who is at the other end
  Register(c);
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    outgoing_[peer] = c;
  }
  wire::FrameHeader hello;
  hello.kind = wire::FrameKind::kHello;
  hello.source = self();
  hello.target = peer;
  ByteBlock b(wire::kHeaderSize);
  b.Resize(wire::kHeaderSize);
  wire::EncodeHeader(hello, {b.data(), b.size()});
  UKAI_RETURN_IF_ERROR(c->Send(std::move(b)));
  host_->Trace("tcp connected to " + where);
  return std::shared_ptr<CommObject>(c);
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

void TcpModule::Accept() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      if (accepted_open_ >= static_cast<size_t>(limits_.max_connections)) {
        ::close(fd);
        limit_counters_.connections_refused.fetch_add(1, std::memory_order_relaxed);
        host_->Trace("tcp: refused a connection: " + std::to_string(accepted_open_) +
                     " accepted connections open (tcp.max_connections)");
        continue;
      }
      ++accepted_open_;
    }
    SetNonBlockingNoDelay(fd);
    auto c = std::make_shared<TcpConn>(this, fd, 0);
    c->accepted = true;
    Register(c);
  }
}

void TcpModule::Fail(const std::shared_ptr<TcpConn>& c, bool orderly, const Status& why) {
  const int fd = c->fd();
  if (!c->Shut(orderly ? CommState::kClosed : CommState::kFailed)) return;
  const RuntimeId peer = c->peer();
  bool others = false;  // another open connection from/to the same peer
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    conns_.erase(fd);
    if (c->accepted) --accepted_open_;
    version_.fetch_add(1, std::memory_order_release);
    for (const auto& [f, o] : conns_) others |= peer != 0 && o->peer() == peer;
  }
  // A peer that says goodbye closes all its connections; frames may still wait unread on
  // another one (both sides connected at once): it has left when its last one closed.
  if (peer != 0 && !(orderly && others)) host_->PeerFailed(peer, "tcp", orderly, why);
}

void TcpModule::UseIncoming(const std::shared_ptr<TcpConn>& c) {
  std::shared_ptr<TcpConn> mine;
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    auto it = outgoing_.find(c->peer());
    if (it != outgoing_.end()) mine = it->second.lock();
  }
  if (mine && mine != c && mine->RedirectIfUnused(c)) {
    host_->Trace("tcp: peer " + std::to_string(c->peer()) +
                 " connected too; its connection now carries both directions");
  }
}

bool TcpModule::HandleFrame(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                            std::span<const uint8_t> payload, ByteBlock* owned) {
  if (!c->hello_seen) {
    if (h.kind != wire::FrameKind::kHello || h.target != self() || h.source == 0) {
      host_->RejectFrame(Status::ParseError("tcp: first frame is not a hello for this runtime"));
      Fail(c, false, Status::ParseError("tcp: bad hello"));
      return false;
    }
    c->hello_seen = true;
    c->set_peer(h.source);
    host_->AdoptIncoming(h.source, c);
    if (h.source < self()) UseIncoming(c);  // simultaneous open: the lower id's wins
    return true;
  }
  if (h.source != c->peer()) {
    host_->RejectFrame(Status::ParseError("tcp: frame source does not match the connection"));
    Fail(c, false, Status::ParseError("tcp: frame from an unexpected source"));
    return false;
  }
  if (h.kind == wire::FrameKind::kBye) {
    Fail(c, true, Status::Unavailable("peer said goodbye"));
    return false;
  }
  if (h.kind == wire::FrameKind::kRsr) {
    // The peer sends over its own connection to us: it did not switch to ours, and never
    // will (it switches only while its connection carried no RSR), so we may use its one.
    if (!c->rsr_seen && c->accepted) UseIncoming(c);
    c->rsr_seen = true;
    host_->Deliver(h, payload, owned);
  }
  return true;
}

// Delivers every complete frame in c->rbuf[rstart, *rend). Returns frames delivered, or -1
// when the connection failed.
int TcpModule::ParseFrames(const std::shared_ptr<TcpConn>& c) {
  size_t* rend = &c->rend;
  int n = 0;
  while (*rend - c->rstart >= wire::kHeaderSize) {
    std::span<const uint8_t> avail(c->rbuf.data() + c->rstart, *rend - c->rstart);
    Result<wire::FrameHeader> h = wire::DecodeHeader(avail);
    if (!h.ok()) {
      host_->RejectFrame(h.status());
      Fail(c, false, h.status().WithContext("tcp stream"));
      return -1;
    }
    const size_t total = h->frame_size();
    if (total > c->rbuf.capacity()) {  // large frame: receive into its own block
      c->big = ByteBlock(total);
      c->big.Resize(total);
      std::memcpy(c->big.data(), avail.data(), avail.size());
      c->big_filled = avail.size();
      c->rstart = *rend;
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
      Fail(c, false,
           Status::Unavailable(r == 0 ? "tcp: peer closed the connection mid-frame"
                                      : Errno("tcp recv")));
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
  size_t& rend = c->rend;
  // Compact: frames delivered in the previous Progress() have been dispatched by now.
  if (c->rstart != 0) {
    std::memmove(c->rbuf.data(), c->rbuf.data() + c->rstart, rend - c->rstart);
    rend -= c->rstart;
    c->rstart = 0;
  }
  ssize_t r = ::recv(c->fd(), c->rbuf.data() + rend, c->rbuf.capacity() - rend, MSG_DONTWAIT);
  if (r == 0) {
    Fail(c, false, Status::Unavailable("tcp: peer closed the connection"));
    return -1;
  }
  if (r < 0) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    Fail(c, false, Status::Unavailable(Errno("tcp recv")));
    return -1;
  }
  rend += static_cast<size_t>(r);
  c->last_rx_ms = NowMs();
  return ParseFrames(c);
}

void TcpModule::RefreshPolled() {
  const uint64_t v = version_.load(std::memory_order_acquire);
  if (v == polled_version_) return;
  std::lock_guard<std::mutex> lock(conns_mu_);
  polled_.clear();
  for (auto& [fd, c] : conns_) polled_.push_back(c);
  polled_version_ = version_.load(std::memory_order_relaxed);
}

void TcpModule::CheckDeadlines() {
  const int64_t now = NowMs();
  if (now - deadlines_checked_ms_ < 50) return;
  deadlines_checked_ms_ = now;
  for (size_t i = 0; i < polled_.size(); ++i) {
    const std::shared_ptr<TcpConn> c = polled_[i];  // Fail() may refresh polled_ later
    if (c->fd() < 0) continue;
    const int64_t idle = now - c->last_rx_ms;
    const bool partial = !c->big.empty() || c->rend > c->rstart;
    if (!c->hello_seen && now - c->opened_ms > limits_.handshake_timeout_ms) {
      limit_counters_.handshake_timeouts.fetch_add(1, std::memory_order_relaxed);
      const Status why = Status::Unavailable("tcp: no complete hello within " +
                                             std::to_string(limits_.handshake_timeout_ms) +
                                             " ms of the connection (tcp.handshake_timeout_ms)");
      host_->RejectFrame(why);
      Fail(c, false, why);
    } else if (c->hello_seen && partial && idle > limits_.frame_timeout_ms) {
      limit_counters_.frame_timeouts.fetch_add(1, std::memory_order_relaxed);
      const Status why = Status::Unavailable(
          "tcp: a frame begun by peer " + std::to_string(c->peer()) + " was not completed within " +
          std::to_string(limits_.frame_timeout_ms) + " ms (tcp.frame_timeout_ms)");
      host_->RejectFrame(why);
      Fail(c, false, why);
    }
  }
}

std::map<std::string, uint64_t> TcpModule::Counters() const {
  return {{"connections_refused", limit_counters_.connections_refused.load()},
          {"handshake_timeouts", limit_counters_.handshake_timeouts.load()},
          {"frame_timeouts", limit_counters_.frame_timeouts.load()}};
}

int TcpModule::Progress() {
  RefreshPolled();
  CheckDeadlines();
  if (polled_.size() > kDirectPollMax) return PollEvents();
  // Few connections: poll(2) them and the listener directly (as fast as epoll_wait here,
  // and it takes no epoll lock that arriving segments' wake-ups need too). Spinning on
  // recv(MSG_DONTWAIT) instead was not faster: it takes the socket lock that the sender's
  // softirq needs to queue the data.
  pollfd fds[kDirectPollMax + 1];
  fds[0] = {listen_fd_, POLLIN, 0};
  size_t n = 1;
  for (const auto& c : polled_) {
    fds[n++] = {c->fd(), static_cast<short>(c->has_queued() ? POLLIN | POLLOUT : POLLIN), 0};
  }
  if (::poll(fds, n, 0) <= 0) return 0;
  int delivered = 0;
  if (fds[0].revents != 0) Accept();
  for (size_t i = 1; i < n; ++i) {
    const std::shared_ptr<TcpConn>& c = polled_[i - 1];
    if (fds[i].revents == 0 || c->fd() < 0) continue;
    if (fds[i].revents & POLLOUT) {
      Status st = c->Flush();
      if (!st.ok()) {
        Fail(c, false, st);
        continue;
      }
    }
    if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) {
      const int got = ReadConn(c);
      if (got > 0) delivered += got;
    }
  }
  return delivered;
}

int TcpModule::PollEvents() {
  epoll_event events[64];
  int ready = ::epoll_wait(epfd_, events, 64, 0);
  int delivered = 0;
  for (int i = 0; i < ready; ++i) {
    const int fd = events[i].data.fd;
    if (fd == listen_fd_) {
      Accept();
      continue;
    }
    std::shared_ptr<TcpConn> c;
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      auto it = conns_.find(fd);
      if (it == conns_.end()) continue;
      c = it->second;
    }
    if (events[i].events & EPOLLOUT) {
      Status st = c->Flush();
      if (!st.ok()) {
        Fail(c, false, st);
        continue;
      }
    }
    if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
      int n = ReadConn(c);
      if (n > 0) delivered += n;
    }
  }
  return delivered;
}

void TcpModule::Close() {
  std::vector<std::shared_ptr<TcpConn>> all;
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    for (auto& [fd, c] : conns_) all.push_back(c);
    conns_.clear();
  }
  for (auto& c : all) {
    c->Close();
    c->Shut(CommState::kClosed);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (epfd_ >= 0) ::close(epfd_);
  listen_fd_ = epfd_ = -1;
}

std::unique_ptr<Module> NewTcpModule(const ModuleEnv&) { return std::make_unique<TcpModule>(); }

}  // namespace ukai::rt
