// The requester's side of request/reply (include/ukai/rt/request.hpp): the table of pending
// requests of one Runtime, their completion (reply, failure, timeout, cancellation) and the
// timer thread that enforces RequestOptions::timeout. Internal.
//
// Thread safety: every method may be called from any thread. A request completes exactly
// once: whoever removes it from the table (under mu_) completes it.
#ifndef UKAI_RT_CORE_REQUESTS_H_
#define UKAI_RT_CORE_REQUESTS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "ukai/rt/request.hpp"

namespace ukai::rt::trace {
class Location;
}  // namespace ukai::rt::trace

namespace ukai::rt::internal {

class RuntimeImpl;

struct PendingRequest {
  uint64_t id = 0;
  RuntimeId peer = 0;
  RuntimeImpl* runtime = nullptr;
  bool progress_thread = true;  // false: Wait() drives the progress itself
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool done = false;  // guarded by mu
  Reply reply;        // set once done
  ReplyCallback callback;
  // OTF2 recording: the location and request id of the receive posted for the answer
  // (trace_request 0: not recording). The recorder completes or cancels it once.
  trace::Location* trace_location = nullptr;
  uint64_t trace_request = 0;
};

class RequestTable {
 public:
  using Clock = std::chrono::steady_clock;
  RequestTable() = default;
  ~RequestTable();  // fails what is left (kUnavailable) and stops the timer

  // Registers a request to `peer` (its id is set) before it is sent.
  std::shared_ptr<PendingRequest> Add(RuntimeId peer, ReplyCallback callback,
                                      std::chrono::milliseconds timeout, RuntimeImpl* runtime,
                                      bool progress_thread);
  // Completes request `id` from `from` with `reply`; false when it is not pending (completed
  // already, or never ours: then the reply is dropped).
  bool Complete(uint64_t id, RuntimeId from, Reply reply);
  // Completes request `id` with `why` (not OK) whoever it went to; false when not pending.
  bool Fail(uint64_t id, const Status& why);
  // Fails every request pending to `peer` (the peer failed or left).
  void FailPeer(RuntimeId peer, const Status& why);
  // Fails every pending request (Finalize) and stops the timer thread.
  void FailAll(const Status& why);
  size_t pending() const;
  // Removes and returns request `id` when pending (and, if from != 0, sent to `from`); the
  // caller completes it (Finish).
  std::shared_ptr<PendingRequest> Take(uint64_t id, RuntimeId from);

 private:
  void TimerLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;  // the timer waits on it
  std::unordered_map<uint64_t, std::shared_ptr<PendingRequest>> pending_;
  std::multimap<Clock::time_point, uint64_t> deadlines_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread timer_;  // started with the first request that has a timeout
};

// Completes `p` with `reply` (once; runs the callback outside any lock).
void Finish(const std::shared_ptr<PendingRequest>& p, Reply reply);

}  // namespace ukai::rt::internal

// The state behind a Replier (include/ukai/rt/request.hpp).
struct ukai::rt::Replier::State {
  internal::RuntimeImpl* runtime = nullptr;
  RuntimeId to = 0;
  uint32_t context = 0, endpoint = 0, handler = 0;
  uint64_t request = 0;
  std::atomic<bool> answered{false};
  std::atomic<bool> taken{false};  // TakeReplier was called
};

#endif  // UKAI_RT_CORE_REQUESTS_H_
