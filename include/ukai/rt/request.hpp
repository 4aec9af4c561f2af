// Request/reply on top of RSRs (Mercury's HG_Forward/HG_Respond, UCX's am + reply).
//
// Runtime::Request sends an RSR that expects exactly one reply and returns a ReplyFuture
// (or calls a ReplyCallback) for it. At the target the handler runs as for any RSR; it
// answers with Rsr::Reply(buffer) (or Rsr::Fail(status)), during the call, or later through
// a Replier taken with Rsr::TakeReplier(). The request completes exactly once, with:
//  * the reply (status OK, payload = the reply buffer's payload);
//  * the handler's failure: an exception it threw (as in ErrorEvent), its Fail(status), or
//    kFailedPrecondition when it returned without replying or taking the Replier;
//  * kNotFound when the target has no such context, endpoint or handler;
//  * kUnavailable when the peer fails or leaves, or the runtime finalizes;
//  * kTimeout when RequestOptions::timeout passes first; kCancelled by Cancel().
// A reply that arrives after the request completed (timed out, cancelled) is dropped.
//
// Thread safety: a ReplyFuture may be waited for, polled and cancelled from any thread;
// copies share the one request. A Replier may be used from any thread, once.
#ifndef UKAI_RT_REQUEST_HPP_
#define UKAI_RT_REQUEST_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "ukai/rt/buffer.hpp"
#include "ukai/rt/byte_block.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

class Runtime;
namespace internal {
struct PendingRequest;
class RequestTable;
}  // namespace internal

struct RequestOptions {
  // The request fails with kTimeout when no reply came within this time (0, the default =
  // no limit: a handler may take as long as it needs, and a failed or departed peer, or
  // Finalize, completes the request anyway with kUnavailable). The wait for room in the
  // send queue (flow control, SendOptions) counts against it: a request that could not be
  // sent in time fails with kTimeout too.
  std::chrono::milliseconds timeout{0};
};

// The outcome of a request: the status and, when OK, the reply payload (owned).
class Reply {
 public:
  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  RuntimeId peer() const { return peer_; }  // the target runtime
  std::span<const uint8_t> payload() const { return payload_; }
  // A reader positioned at the start of the payload.
  Reader reader() const { return Reader(payload_); }

  Reply() = default;
  Reply(Status status, RuntimeId peer, ByteBlock storage, std::span<const uint8_t> payload)
      : status_(std::move(status)), peer_(peer), storage_(std::move(storage)), payload_(payload) {}

 private:
  Status status_ = Status::Internal("request not completed");
  RuntimeId peer_ = 0;
  ByteBlock storage_;
  std::span<const uint8_t> payload_;
};

// Called once when a request completes: from the progress thread (reply, refusal, peer
// failure, finalize), the runtime's request-timer thread (timeout) or the thread that called
// Cancel(). Must not block; an exception it throws is ignored.
using ReplyCallback = std::function<void(Reply&)>;

// The future of one request (copies share it).
class ReplyFuture {
 public:
  ReplyFuture() = default;
  explicit ReplyFuture(std::shared_ptr<internal::PendingRequest> state)
      : state_(std::move(state)) {}

  // The request id (nonzero), 0 for a default-constructed future.
  uint64_t id() const;
  // Whether the request completed (never blocks).
  bool Ready() const;
  // Blocks until the request completed and returns its outcome. Without a progress thread
  // it drives the runtime's progress itself. Not from a non-threaded handler (the reply
  // could only arrive through the progress thread it blocks): use the callback form there.
  const Reply& Wait() const&;
  // On a temporary future (`rt.Request(...).Wait()`): the outcome by value (moved out of the
  // shared state; other copies of this future then see an empty payload).
  Reply Wait() &&;
  // Waits at most `timeout`; true when the request completed.
  bool WaitFor(std::chrono::nanoseconds timeout) const;
  // Completes a pending request with kCancelled (a later reply is dropped); false when it
  // had completed already.
  bool Cancel() const;

 private:
  std::shared_ptr<internal::PendingRequest> state_;
};

// The right to answer one request, taken from its handler (Rsr::TakeReplier) to reply
// later, from any thread. It must not outlive the Runtime. Copies share the one answer.
class Replier {
 public:
  Replier() = default;
  // Sends `reply` as the request's answer (the first answer wins: later ones return
  // kFailedPrecondition). Errors: no way back to the requester (kUnavailable), a reply
  // over the module's payload limit (kOutOfRange).
  Status Send(Buffer&& reply);
  // Answers with an error: the requester's future completes with `error` (not OK).
  Status Fail(const Status& error);
  bool valid() const { return state_ != nullptr; }

  struct State;  // internal
  explicit Replier(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_REQUEST_HPP_
