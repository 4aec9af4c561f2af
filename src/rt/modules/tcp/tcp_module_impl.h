// The tcp module's class (tcp_module.h has the factory). Its code is in two files:
// tcp_module.cc (set-up, reading frames, progress, deadlines, close) and tcp_handshake.cc
// (dialing, reconnecting, and both sides of the handshake of tcp_hello.h).
//
// Threads: Connect() (the dialer's side of the handshake, blocking) and TcpSession::Send()
// run on user threads; the reconnecting thread re-dials lost sessions; the handshake thread
// accepts connections and runs the listener's side of their handshake; everything else
// (reads, queued writes, acknowledgements, failure handling) runs on the progress thread
// inside Progress(). conns_mu_ guards the connection, session and hand-over tables.
#ifndef UKAI_RT_MODULES_TCP_TCP_MODULE_IMPL_H_
#define UKAI_RT_MODULES_TCP_TCP_MODULE_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "rt/core/module.h"
#include "rt/modules/tcp/tcp_dial.h"
#include "rt/modules/tcp/tcp_limits.h"
#include "rt/modules/tcp/tcp_session.h"

namespace ukai::rt::tcp {

class TcpModule final : public Module {
 public:
  ~TcpModule() override { Close(); }
  std::string_view name() const override { return "tcp"; }
  Status Init(ModuleHost* host) override;
  ModuleCaps Query() const override;
  Result<std::vector<uint8_t>> MakeDescriptor() override { return EncodeTarget(self_target_); }
  bool CanReach(std::span<const uint8_t> d) const override {
    Result<Target> t = DecodeTarget(d);
    return t.ok() && DialAddress(*t, identity_).ok();
  }
  std::string Unreachable(std::span<const uint8_t> d) const override {
    Result<Target> t = DecodeTarget(d);
    if (!t.ok()) return t.status().message();
    Result<std::string> a = DialAddress(*t, identity_);
    return a.ok() ? "reachable" : a.status().message();
  }
  // Connects and runs the dialer's side of the handshake (blocking, at most
  // tcp.connect_timeout_ms).
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer, std::span<const uint8_t> d) override;
  int Progress() override;
  int WaitFd() const override { return epfd_; }
  bool PrepareToBlock() override;
  void Close() override;
  std::map<std::string, uint64_t> Counters() const override;

  RuntimeId self() const { return host_->runtime_id(); }

 private:
  // Connections the handshake thread authenticated, for the progress thread (under
  // conns_mu_): a new session's connection (attached, to be adopted), or a resume (to be
  // attached: Resume) with the count of our RSRs the peer said it received.
  struct Handover {
    std::shared_ptr<TcpConn> conn;
    bool resume = false;
    uint64_t peer_received = 0;
  };

  // ---- tcp_module.cc ----
  void Register(const std::shared_ptr<TcpConn>& c);
  // Forgets `c` (its fd is closed by whoever detached it, or by the caller).
  void Unregister(const std::shared_ptr<TcpConn>& c);
  // Unregisters `c`, removes it from epoll and closes its socket.
  void Discard(const std::shared_ptr<TcpConn>& c);
  int ReadConn(const std::shared_ptr<TcpConn>& c);
  int ParseFrames(const std::shared_ptr<TcpConn>& c);
  void RefreshPolled();
  int PollEvents();
  void HandleReady(const std::shared_ptr<TcpConn>& c, bool writable, bool readable, int* delivered);
  // A whole frame arrived on `c`; false when the connection ended with it.
  bool HandleFrame(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                   std::span<const uint8_t> payload, ByteBlock* owned);
  // The connection broke: its session waits for a new connection (reconnect_ms), or fails
  // when `peer_fault` or reconnection is off.
  void Broken(const std::shared_ptr<TcpConn>& c, const Status& why, bool peer_fault);
  // Ends `s` for good and tells the runtime (once).
  void FailSession(const std::shared_ptr<TcpSession>& s, bool orderly, const Status& why);
  // Frames begun and stalled break their connection; lost sessions past reconnect_ms fail;
  // pending acknowledgements go out (at most every 50 ms).
  void CheckDeadlines();
  std::vector<std::shared_ptr<TcpSession>> Sessions();

  // Takes the connections the handshake thread authenticated: registers them, attaches
  // resumes, adopts new sessions, and delivers frames already read with the proof. Returns
  // frames delivered.
  int TakeHandovers();
  // Progress thread: makes the resuming connection `c` its session's, after the old one,
  // and sends the welcome with the count received. False when the session ended.
  bool Resume(const std::shared_ptr<TcpConn>& c, uint64_t peer_received);

  // ---- tcp_handshake.cc ----
  void QueueRedial(const std::shared_ptr<TcpSession>& s);
  void ReconnectLoop();
  void Redial(const std::shared_ptr<TcpSession>& s);
  // The handshake thread: accepts, runs the listener's side of every handshake (whatever
  // the progress thread does: a runtime that does not progress still lets peers connect),
  // closes those that miss tcp.handshake_timeout_ms, and hands the authenticated ones over.
  Status StartHandshakeThread();
  void StopHandshakeThread();
  void HandshakeLoop();
  void Accept(std::vector<std::shared_ptr<TcpConn>>* open);
  void ReadHandshake(const std::shared_ptr<TcpConn>& c);
  bool ListenerStep(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
                    std::span<const uint8_t> payload);
  bool OnHello(const std::shared_ptr<TcpConn>& c, const wire::FrameHeader& h,
               std::span<const uint8_t> payload);
  bool OnProof(const std::shared_ptr<TcpConn>& c, const Proof& proof);
  void QueueHandover(Handover h);
  // Refuses a connection in its handshake: counted (in frames_rejected and, when
  // `auth_failure`, auth_failures), traced, closed; no state of the runtime it claimed to
  // be changes.
  void Refuse(const std::shared_ptr<TcpConn>& c, const Status& why, bool auth_failure = true);
  // Closes a connection in its handshake (and frees its place under tcp.max_connections).
  void DropHandshake(const std::shared_ptr<TcpConn>& c);

  ModuleHost* host_ = nullptr;
  int listen_fd_ = -1;
  int epfd_ = -1;
  Target self_target_;
  std::string identity_;
  TcpLimits limits_;
  TcpLimitCounters counters_;
  int64_t deadlines_checked_ms_ = 0;  // progress thread only
  size_t accepted_open_ = 0;          // accepted connections open (under conns_mu_)
  mutable std::mutex conns_mu_;
  std::unordered_map<int, std::shared_ptr<TcpConn>> conns_;
  // One session per peer runtime, made by Connect() or by an accepted handshake; kept for
  // the module's life (a failed one refuses everything).
  std::unordered_map<RuntimeId, std::shared_ptr<TcpSession>> sessions_;
  std::atomic<uint64_t> version_{0};  // bumped when conns_ changes
  // Progress thread: a snapshot of conns_ (refreshed when version_ moves).
  std::vector<std::shared_ptr<TcpConn>> polled_;
  uint64_t polled_version_ = ~uint64_t{0};
  std::vector<Handover> handovers_;
  std::atomic<bool> has_handovers_{false};
  std::thread handshaker_;
  int stop_fd_ = -1;  // eventfd: stops the handshake thread
  // The reconnecting thread (started with the first loss) and its queue of sessions.
  std::mutex redial_mu_;
  std::condition_variable redial_cv_;
  std::deque<std::shared_ptr<TcpSession>> redial_;
  bool stopping_ = false;
  std::thread reconnector_;
};

}  // namespace ukai::rt::tcp

#endif  // UKAI_RT_MODULES_TCP_TCP_MODULE_IMPL_H_
