// The tcp module's connections and sessions.
//
// TcpConn: one socket and its receive state; on the listening side also the state of its
// handshake (tcp_hello.h) until the dialer proved its key. Owned by the handshake thread
// until then, later by the module's connection table, and referenced by its session.
//
// TcpSession: the CommObject the runtime holds for one peer runtime. It outlives its
// connections: when the
// connection of an authenticated peer is reset or closes without a goodbye, the session
// keeps every RSR the peer has not acknowledged and waits up to tcp.reconnect_ms for a new
// connection (its dialer re-dials and resumes, tcp_hello.h); then it resends exactly what
// the peer did not receive, in order. RSRs are counted: the n-th RSR of a session is
// sequence number n on both sides; the receiver acknowledges the count it received (kAck:
// after 64 RSRs or 1 MiB, when its progress engine goes idle, and at least every 50 ms),
// which frees them at the sender. A session that cannot be resumed in time fails, and what
// the peer had not acknowledged is reported lost (Outstanding).
//
// Threads: Send() from any thread; Close()/Outstanding() from the runtime's flush and
// finalize paths; everything else from the module (progress thread, or the dialing thread
// that attaches a new connection). The send side and the current connection are guarded by
// the session's mutex; a connection's fd is closed only under it (no writer ever uses a
// recycled fd number).
#ifndef UKAI_RT_MODULES_TCP_TCP_SESSION_H_
#define UKAI_RT_MODULES_TCP_TCP_SESSION_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rt/core/module.h"
#include "rt/modules/tcp/tcp_hello.h"

namespace ukai::rt::tcp {

inline constexpr size_t kRecvBufferBytes = 256 << 10;
// The receiver acknowledges after this many RSRs or bytes (else at idle or every 50 ms).
inline constexpr uint64_t kAckEveryFrames = 64;
inline constexpr uint64_t kAckEveryBytes = 1 << 20;

int64_t NowMs();

class TcpSession;

class TcpConn {
 public:
  TcpConn(int fd, bool accepted) : fd_(fd), accepted_(accepted) {}
  int fd() const { return fd_.load(std::memory_order_acquire); }
  bool accepted() const { return accepted_; }
  // Closes the socket (idempotent). Callers that share the fd with writers hold the
  // session's lock (TcpSession::Detach).
  void CloseFd();

  // Receive state (progress thread only).
  ByteBlock rbuf{kRecvBufferBytes};
  size_t rstart = 0;
  size_t rend = 0;  // bytes valid in rbuf
  ByteBlock big;    // a frame larger than rbuf being received
  size_t big_filled = 0;
  const int64_t opened_ms = NowMs();
  int64_t last_rx_ms = opened_ms;

  // The listener's side of the handshake (the handshake thread only): kHello -> kProof ->
  // kSession. A dialed connection is authenticated before the module sees it.
  enum class Stage { kHello, kProof, kSession };
  Stage stage = Stage::kHello;
  Transcript transcript;
  SecretKey key{};                      // the key this handshake is proved with
  std::shared_ptr<TcpSession> resumes;  // the session a resuming hello names
  // Set once authenticated (a dialed connection is authenticated before it is polled).
  std::shared_ptr<TcpSession> session;

 private:
  std::atomic<int> fd_;
  const bool accepted_;
};

class TcpSession final : public CommObject {
 public:
  // `dialer`: we dialed the session's connection (we re-dial after a loss); `target` is
  // the peer's tcp descriptor for that.
  TcpSession(RuntimeId self, RuntimeId peer, int epfd, bool dialer, std::vector<uint8_t> target);

  // CommObject.
  Status Send(ByteBlock&& frame) override;
  void Close() override;
  CommState state() const override { return state_.load(); }
  RuntimeId peer() const override { return peer_; }
  // Every byte the session holds for the peer: unwritten, and written but not acknowledged
  // yet (kept for a resend after a reconnect). Counting only the unwritten ones let a
  // stalled receiver's socket buffers (tcp_rmem up to 32 MiB here) hold that much more of
  // our memory beyond send_queue_bytes.
  size_t QueuedBytes() const override { return out_bytes_.load(std::memory_order_relaxed); }
  Unconfirmed Outstanding() override;

  // Makes `c` the session's connection: frames the peer acknowledged up to
  // `peer_received` are freed, the rest are resent on `c` after `first` (a welcome frame
  // the listener owes the dialer, or empty). False when the session is failed or closed.
  bool Attach(const std::shared_ptr<TcpConn>& c, uint64_t peer_received,
              std::vector<uint8_t> first);
  // Whether the session has (had) a connection; dialing: a connection of ours for it is
  // in its handshake.
  bool has_conn() const;
  bool ever_attached() const { return ever_attached_.load(); }
  std::atomic<bool> dialing{false};
  // Waits until the session has a connection or `deadline` (a simultaneous open that lost:
  // the peer's connection is attached by the handshake thread).
  bool WaitAttached(std::chrono::steady_clock::time_point deadline);

  // Progress thread: writes what waits (the socket turned writable). Error = the
  // connection broke.
  Status Flush();
  // The peer acknowledged `count` RSRs. False when it claims more than we wrote.
  bool OnAck(uint64_t count);
  // An RSR of `bytes` arrived; sends an acknowledgement when one is due.
  void Received(size_t bytes);
  // Sends an acknowledgement if RSRs arrived since the last one (idle, timer).
  void AckPending();
  uint64_t received() const { return received_.load(std::memory_order_acquire); }
  // Bytes wait for the socket to turn writable (EPOLLOUT armed). Lock-free.
  bool write_pending() const { return write_armed_.load(std::memory_order_acquire); }

  // The connection `c` broke through no fault of the peer: detaches it if it is the
  // current one (true) and starts the reconnect clock.
  bool Lost(const std::shared_ptr<TcpConn>& c);
  // Milliseconds (steady clock) since which the session has no connection, or -1.
  int64_t lost_since_ms() const { return lost_since_ms_.load(); }
  // Ends the session for good (once: false afterwards) and closes its connection: state
  // `state` (kFailed, or kClosed when the peer said goodbye) unless our Close() closed it
  // already; what the peer had not acknowledged is kept as the loss (Outstanding).
  bool Shut(CommState state);
  // The reconnecting thread gave up (`why`); the progress thread fails the session.
  void GiveUp(const Status& why);
  Status given_up() const;

  bool dialer() const { return dialer_; }
  void set_dialer(bool d) { dialer_ = d; }
  const std::vector<uint8_t>& target() const { return target_; }
  void set_session_key(const SecretKey& k);
  SecretKey session_key() const;
  std::shared_ptr<TcpConn> conn() const;

 private:
  struct Out {
    ByteBlock frame;
  };
  // Under mu_: writes ctrl_ then out_ from the cursor; false on EAGAIN (EPOLLOUT armed),
  // an error Status when the connection broke.
  Result<bool> WriteLocked();
  // After the goodbye: half-closes `fd` and reads until the peer closes or the flush
  // timeout passes, so that our close does not reset the connection (see the .cc).
  static void DrainUntilPeerCloses(int fd);
  Result<bool> WriteBytes(const uint8_t* p, size_t n, size_t* off);
  void ArmWrite(bool on);
  void QueueControl(std::span<const uint8_t> frame);
  void Detach();  // under mu_: closes and forgets the connection

  const RuntimeId self_;
  const RuntimeId peer_;
  const int epfd_;
  bool dialer_;
  const std::vector<uint8_t> target_;
  std::atomic<CommState> state_{CommState::kOk};

  mutable std::mutex mu_;
  std::condition_variable attached_cv_;
  std::shared_ptr<TcpConn> conn_;
  std::atomic<bool> ever_attached_{false};
  SecretKey session_key_{};
  // Send side (under mu_): RSRs not yet acknowledged by the peer, oldest first (sequence
  // numbers acked_ + 1 ...); the next one to write and how much of it is written; control
  // frames (acks) written at the next frame boundary.
  std::deque<Out> out_;
  uint64_t acked_ = 0;
  std::atomic<uint64_t> out_bytes_{0};  // of out_ (written under mu_, read by QueuedBytes)
  size_t cursor_ = 0;
  size_t cursor_off_ = 0;
  std::vector<uint8_t> ctrl_;
  size_t ctrl_off_ = 0;
  std::atomic<bool> write_armed_{false};  // written under mu_
  bool shut_ = false;                     // Shut() ran: lost_ is final
  Unconfirmed lost_;
  Status given_up_;  // under mu_

  // Receive side (progress thread; atomic for the dialing thread's resume).
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> acked_received_{0};  // the count our last kAck carried (or Attach's)
  uint64_t unacked_bytes_ = 0;
  std::atomic<int64_t> lost_since_ms_{-1};
};

}  // namespace ukai::rt::tcp

#endif  // UKAI_RT_MODULES_TCP_TCP_SESSION_H_
