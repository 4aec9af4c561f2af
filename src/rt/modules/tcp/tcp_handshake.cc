// The tcp module's connection set-up (tcp_hello.h): dialing (Connect, the reconnecting
// thread) and the listener's side, run by the handshake thread, which hands authenticated
// connections over to the progress thread.
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "rt/modules/tcp/tcp_module_impl.h"

namespace ukai::rt::tcp {
namespace {

// Largest payload of a handshake frame the listener reads (kHello, kProof).
constexpr uint32_t kMaxHandshakePayload = 64;
// Bytes the handshake thread reads per recv (frames beyond the proof stay for the progress
// thread).
constexpr size_t kHandshakeRead = 4096;

// Writes a handshake frame on a connection nobody else writes to yet. A fresh socket's
// buffer always takes these few bytes; a partial write means the socket is broken.
bool SendHandshake(int fd, const std::vector<uint8_t>& frame) {
  return ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size());
}

std::string KindName(wire::FrameKind k) { return std::to_string(static_cast<int>(k)); }

}  // namespace

// ---- dialing ----

Result<std::shared_ptr<CommObject>> TcpModule::Connect(RuntimeId peer, std::span<const uint8_t> d) {
  Result<Target> t = DecodeTarget(d);
  if (!t.ok()) return t.status();
  if (host_->job_secret() == nullptr) return Status::FailedPrecondition("tcp: no job secret");
  std::shared_ptr<TcpSession> s;
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    auto it = sessions_.find(peer);
    if (it != sessions_.end()) {
      s = it->second;
      if (s->state() != CommState::kOk) {
        return Status::Unavailable("tcp: the session with " + RuntimeIdString(peer) + " ended");
      }
      if (s->ever_attached()) return std::shared_ptr<CommObject>(s);
    } else {
      s = std::make_shared<TcpSession>(self(), peer, epfd_, /*dialer=*/true,
                                       std::vector<uint8_t>(d.begin(), d.end()));
      sessions_[peer] = s;
    }
    s->dialing.store(true);
  }
  const PeerKey key = host_->KeyFor(peer);
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits_.connect_timeout_ms);
  bool refused = false;
  Result<Dialed> r = DialAndGreet(*t, identity_, self(), peer, key.key,
                                  key.kind == KeyKind::kJoin ? kJoinKey : 0, 0, deadline, &refused);
  // `dialing` stays set until the session is attached or given up: a hello of the peer
  // meanwhile (both dialed at once) is decided by the ids, not refused as a duplicate.
  struct ClearDialing {
    TcpSession* s;
    ~ClearDialing() { s->dialing.store(false); }
  } clear{s.get()};
  if (r.ok() && r->welcome.status == WelcomeStatus::kAccepted && !s->has_conn()) {
    auto c = std::make_shared<TcpConn>(r->fd, /*accepted=*/false);
    c->stage = TcpConn::Stage::kSession;
    c->session = s;
    s->set_session_key(r->session_key);
    s->set_dialer(true);
    Register(c);
    s->Attach(c, 0, {});
    host_->Trace("tcp: connected to " + RuntimeIdString(peer) + " (port " +
                 std::to_string(t->port) + ")");
    return std::shared_ptr<CommObject>(s);
  }
  if (r.ok()) ::close(r->fd);
  // Both sides dialed at once and the peer's connection won: the handshake thread attaches it.
  if (r.ok() && r->welcome.status == WelcomeStatus::kSuperseded) s->WaitAttached(deadline);
  if (s->ever_attached()) return std::shared_ptr<CommObject>(s);
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    auto it = sessions_.find(peer);
    if (it != sessions_.end() && it->second == s && !s->ever_attached()) sessions_.erase(it);
  }
  if (!r.ok()) return r.status();
  return Status::Unavailable("tcp: " + RuntimeIdString(peer) +
                             (r->welcome.status == WelcomeStatus::kDuplicate
                                  ? " has a session with us already"
                                  : " dialed us at the same time, and its connection never came"));
}

void TcpModule::QueueRedial(const std::shared_ptr<TcpSession>& s) {
  {
    std::lock_guard<std::mutex> lock(redial_mu_);
    if (stopping_) return;
    redial_.push_back(s);
  }
  // Started with the first loss (progress thread; Close() joins it after progress ends).
  if (!reconnector_.joinable()) reconnector_ = std::thread([this] { ReconnectLoop(); });
  redial_cv_.notify_all();
}

void TcpModule::Redial(const std::shared_ptr<TcpSession>& s) {
  Result<Target> t = DecodeTarget(s->target());
  const int64_t lost = s->lost_since_ms();
  if (!t.ok() || lost < 0) return;
  const int64_t give_up_at = lost + limits_.reconnect_ms;
  int backoff_ms = 10;
  Status last = Status::Unavailable("no attempt");
  while (NowMs() < give_up_at && s->state() == CommState::kOk) {
    {
      std::unique_lock<std::mutex> lock(redial_mu_);
      if (stopping_) return;
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(std::min<int64_t>(
                           limits_.connect_timeout_ms, std::max<int64_t>(1, give_up_at - NowMs())));
    bool refused = false;
    Result<Dialed> r = DialAndGreet(*t, identity_, self(), s->peer(), s->session_key(), kResume,
                                    s->received(), deadline, &refused);
    if (r.ok() && r->welcome.status == WelcomeStatus::kAccepted) {
      auto c = std::make_shared<TcpConn>(r->fd, /*accepted=*/false);
      c->stage = TcpConn::Stage::kSession;
      c->session = s;
      Register(c);
      if (s->Attach(c, r->welcome.received, {})) {
        counters_.reconnects.fetch_add(1, std::memory_order_relaxed);
        host_->Trace("tcp: resumed the session with " + RuntimeIdString(s->peer()));
        host_->Wake();
        return;
      }
      Discard(c);
      return;
    }
    if (r.ok()) ::close(r->fd);
    last = r.ok() ? Status::Unavailable("the peer refused to resume") : r.status();
    if (refused) break;  // nobody listens there any more: the runtime is gone
    std::unique_lock<std::mutex> lock(redial_mu_);
    redial_cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [&] { return stopping_; });
    backoff_ms = std::min(200, backoff_ms * 2);
  }
  s->GiveUp(last.WithContext("tcp: the connection to " + RuntimeIdString(s->peer()) +
                             " was lost and not re-established within " +
                             std::to_string(limits_.reconnect_ms) + " ms (tcp.reconnect_ms)"));
  host_->Wake();
}

void TcpModule::ReconnectLoop() {
  for (;;) {
    std::shared_ptr<TcpSession> s;
    {
      std::unique_lock<std::mutex> lock(redial_mu_);
      redial_cv_.wait(lock, [&] { return stopping_ || !redial_.empty(); });
      if (stopping_) return;
      s = std::move(redial_.front());
      redial_.pop_front();
    }
    Redial(s);
  }
}

// ---- the listener's side: the handshake thread ----

Status TcpModule::StartHandshakeThread() {
  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) return Status::IoError(std::string("eventfd: ") + std::strerror(errno));
  try {
    handshaker_ = std::thread([this] { HandshakeLoop(); });
  } catch (const std::system_error& e) {
    return Status::Unavailable(std::string("tcp: cannot start the handshake thread: ") + e.what());
  }
  return Status::Ok();
}

void TcpModule::StopHandshakeThread() {
  if (handshaker_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
    handshaker_.join();
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
  stop_fd_ = -1;
}

void TcpModule::HandshakeLoop() {
  std::vector<std::shared_ptr<TcpConn>> open;  // accepted, in their handshake
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{stop_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}});
    for (const auto& c : open) fds.push_back({c->fd(), POLLIN, 0});
    // Wake at least every 50 ms while handshakes are open, for their deadline.
    const int rc = ::poll(fds.data(), fds.size(), open.empty() ? -1 : 50);
    if (rc < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    const size_t polled = open.size();
    for (size_t i = 0; i < polled; ++i) {
      if (fds[i + 2].revents != 0) ReadHandshake(open[i]);
    }
    const int64_t now = NowMs();
    for (const auto& c : open) {
      if (c->fd() >= 0 && c->stage != TcpConn::Stage::kSession &&
          now - c->opened_ms > limits_.handshake_timeout_ms) {
        counters_.handshake_timeouts.fetch_add(1, std::memory_order_relaxed);
        Refuse(c,
               Status::Unavailable("tcp: no complete handshake within " +
                                   std::to_string(limits_.handshake_timeout_ms) +
                                   " ms of the connection (tcp.handshake_timeout_ms)"),
               /*auth_failure=*/false);
      }
    }
    // Refused and closed ones go; handed-over ones belong to the progress thread now.
    std::erase_if(open, [](const std::shared_ptr<TcpConn>& c) {
      return c->fd() < 0 || c->stage == TcpConn::Stage::kSession;
    });
    if (fds[1].revents != 0) Accept(&open);
  }
  for (const auto& c : open) DropHandshake(c);
}

void TcpModule::Accept(std::vector<std::shared_ptr<TcpConn>>* open) {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      if (accepted_open_ >= static_cast<size_t>(limits_.max_connections)) {
        ::close(fd);
        counters_.connections_refused.fetch_add(1, std::memory_order_relaxed);
        host_->Trace("tcp: refused a connection: " + std::to_string(accepted_open_) +
                     " accepted connections open (tcp.max_connections)");
        continue;
      }
      ++accepted_open_;
    }
    SetNoDelay(fd);
    open->push_back(std::make_shared<TcpConn>(fd, /*accepted=*/true));
  }
}

void TcpModule::DropHandshake(const std::shared_ptr<TcpConn>& c) {
  if (c->fd() < 0) return;
  c->CloseFd();
  std::lock_guard<std::mutex> lock(conns_mu_);
  --accepted_open_;
}

void TcpModule::Refuse(const std::shared_ptr<TcpConn>& c, const Status& why, bool auth_failure) {
  if (auth_failure) counters_.auth_failures.fetch_add(1, std::memory_order_relaxed);
  host_->RejectFrame(why);
  DropHandshake(c);
}

void TcpModule::ReadHandshake(const std::shared_ptr<TcpConn>& c) {
  if (c->fd() < 0 || c->stage == TcpConn::Stage::kSession) return;
  // Read only what the handshake can use: frames after the proof stay in the socket (or in
  // rbuf) for the progress thread.
  const size_t room = std::min(kHandshakeRead, c->rbuf.capacity() - c->rend);
  const ssize_t r = ::recv(c->fd(), c->rbuf.data() + c->rend, room, MSG_DONTWAIT);
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
    DropHandshake(c);  // went away before it proved anything: no state changes
    return;
  }
  if (r < 0) return;
  c->rend += static_cast<size_t>(r);
  while (c->stage != TcpConn::Stage::kSession && c->rend - c->rstart >= wire::kHeaderSize) {
    std::span<const uint8_t> avail(c->rbuf.data() + c->rstart, c->rend - c->rstart);
    Result<wire::FrameHeader> h = wire::DecodeHeader(avail, kMaxHandshakePayload);
    if (!h.ok()) {
      Refuse(c, h.status().WithContext("tcp handshake"));
      return;
    }
    if (avail.size() < h->frame_size()) return;
    c->rstart += h->frame_size();
    if (!ListenerStep(c, *h, avail.subspan(h->header_len, h->payload_len))) return;
  }
}

bool TcpModule::ListenerStep(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                             std::span<const uint8_t> payload) {
  if (c->stage == TcpConn::Stage::kHello) return OnHello(c, h, payload);
  const std::string from = "tcp: connection claiming runtime " + RuntimeIdString(h.source);
  if (h.kind != wire::FrameKind::kProof || h.source != c->transcript.dialer || h.target != self()) {
    Refuse(c,
           Status::ParseError(from + ": expected its proof, got frame kind " + KindName(h.kind)));
    return false;
  }
  Result<Proof> proof = DecodeProof(payload);
  if (!proof.ok()) {
    Refuse(c, proof.status().WithContext(from));
    return false;
  }
  if (!MacEqual(DialerMac(c->key, c->transcript, proof->received), proof->mac)) {
    Refuse(c, Status::Unavailable(from + " did not prove the job secret"));
    return false;
  }
  return OnProof(c, *proof);
}

bool TcpModule::OnHello(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                        std::span<const uint8_t> payload) {
  const std::string from = "tcp: connection claiming runtime " + RuntimeIdString(h.source);
  if (h.kind != wire::FrameKind::kHello || h.target != self() || h.source == 0 ||
      h.source == self()) {
    Refuse(c, Status::ParseError("tcp: first frame (kind " + KindName(h.kind) + ", from " +
                                 RuntimeIdString(h.source) + " to " + RuntimeIdString(h.target) +
                                 ") is not a hello for this runtime"));
    return false;
  }
  Result<Hello> hello = DecodeHello(payload);
  const JobSecret* secret = host_->job_secret();
  if (!hello.ok() || secret == nullptr) {
    Refuse(c, hello.ok() ? Status::FailedPrecondition("tcp: no job secret")
                         : hello.status().WithContext(from));
    return false;
  }
  if ((hello->flags & kResume) != 0) {
    {
      std::lock_guard<std::mutex> lock(conns_mu_);
      auto it = sessions_.find(h.source);
      if (it != sessions_.end() && it->second->state() == CommState::kOk &&
          it->second->ever_attached()) {
        c->resumes = it->second;
      }
    }
    if (c->resumes == nullptr) {
      Refuse(c, Status::Unavailable(from + " resumes a session this runtime does not have"));
      return false;
    }
    c->key = c->resumes->session_key();
  } else {
    c->key = secret->KeyFor((hello->flags & kJoinKey) != 0 ? KeyKind::kJoin : KeyKind::kJob);
  }
  c->transcript = {h.source, self(), hello->flags, hello->nonce, NewNonce()};
  const Challenge ch{c->transcript.nonce_l, ListenerMac(c->key, c->transcript)};
  if (!SendHandshake(c->fd(),
                     Frame(wire::FrameKind::kChallenge, self(), h.source, EncodeChallenge(ch)))) {
    DropHandshake(c);
    return false;
  }
  c->stage = TcpConn::Stage::kProof;
  return true;
}

bool TcpModule::OnProof(const std::shared_ptr<TcpConn>& c, const Proof& proof) {
  const Transcript& tr = c->transcript;
  const RuntimeId peer = tr.dialer;
  std::shared_ptr<TcpSession> s = c->resumes;
  WelcomeStatus status = WelcomeStatus::kAccepted;
  bool created = false;
  if (s == nullptr) {  // a new session: unless we have one, or our own dial wins
    std::lock_guard<std::mutex> lock(conns_mu_);
    auto it = sessions_.find(peer);
    if (it == sessions_.end()) {
      s = std::make_shared<TcpSession>(self(), peer, epfd_, /*dialer=*/false,
                                       std::vector<uint8_t>());
      sessions_[peer] = s;
      created = true;
    } else if (it->second->dialing.load() && !it->second->ever_attached() &&
               it->second->state() == CommState::kOk) {
      // Both sides dialed at once: the connection dialed by the lower id carries the session
      // (the peer decides the same way about ours).
      status = peer < self() ? WelcomeStatus::kAccepted : WelcomeStatus::kSuperseded;
      if (status == WelcomeStatus::kAccepted) {
        s = it->second;
        s->set_dialer(false);
      }
    } else {
      status = WelcomeStatus::kDuplicate;
    }
  }
  const uint64_t received = s != nullptr ? s->received() : 0;
  const std::vector<uint8_t> welcome =
      Frame(wire::FrameKind::kWelcome, self(), peer,
            EncodeWelcome({status, received, WelcomeMac(c->key, tr, status, received)}));
  if (status != WelcomeStatus::kAccepted) {
    SendHandshake(c->fd(), welcome);
    host_->Trace("tcp: " + RuntimeIdString(peer) + "'s connection not used: " +
                 (status == WelcomeStatus::kSuperseded ? "ours carries the session"
                                                       : "a session exists already"));
    DropHandshake(c);
    return false;
  }
  c->stage = TcpConn::Stage::kSession;
  c->session = s;
  if (c->resumes != nullptr) {
    // A resume is attached by the progress thread (TakeHandovers): it alone delivers the
    // session's frames, so the count of frames received that the welcome carries cannot
    // move meanwhile, and the old connection is dropped before it is read any further.
    QueueHandover({c, /*resume=*/true, proof.received});
    return true;
  }
  s->set_session_key(SessionKey(c->key, tr));
  // The progress thread polls it from now on (before Attach, whose writes may arm EPOLLOUT).
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = c->fd();
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd(), &ev);
  if (!s->Attach(c, 0, welcome)) {  // the session ended meanwhile
    ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd(), nullptr);
    DropHandshake(c);
    return false;
  }
  if (created) host_->Trace("tcp: accepted " + RuntimeIdString(peer));
  QueueHandover({c, /*resume=*/false, 0});
  return true;
}

void TcpModule::QueueHandover(Handover h) {
  {
    std::lock_guard<std::mutex> lock(conns_mu_);
    handovers_.push_back(std::move(h));
    has_handovers_.store(true, std::memory_order_release);
  }
  host_->Wake();
}

bool TcpModule::Resume(const std::shared_ptr<TcpConn>& c, uint64_t peer_received) {
  const std::shared_ptr<TcpSession>& s = c->session;
  if (const std::shared_ptr<TcpConn> old = s->conn(); old != nullptr && old != c) {
    Unregister(old);  // Attach below closes it
  }
  const uint64_t received = s->received();
  const std::vector<uint8_t> welcome =
      Frame(wire::FrameKind::kWelcome, self(), s->peer(),
            EncodeWelcome({WelcomeStatus::kAccepted, received,
                           WelcomeMac(c->key, c->transcript, WelcomeStatus::kAccepted, received)}));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = c->fd();
  ::epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd(), &ev);
  if (!s->Attach(c, peer_received, welcome)) {  // the session ended meanwhile
    ::epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd(), nullptr);
    DropHandshake(c);
    return false;
  }
  c->resumes = nullptr;
  counters_.reconnects.fetch_add(1, std::memory_order_relaxed);
  host_->Trace("tcp: " + RuntimeIdString(s->peer()) + " resumed its session");
  return true;
}

}  // namespace ukai::rt::tcp
