// Request/reply: the pending-request table, futures, repliers and Runtime::Request.
#include "rt/core/requests.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt/trace/recorder.h"

namespace ukai::rt {
namespace internal {

void Finish(const std::shared_ptr<PendingRequest>& p, Reply reply) {
  // A request that ends here without its answer recorded: its receive is cancelled (OTF2).
  if (p->trace_request != 0 && p->runtime != nullptr) p->runtime->TraceRequestEnded(*p);
  ReplyCallback callback;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (p->done) return;
    p->reply = std::move(reply);
    p->done = true;
    callback = std::move(p->callback);
  }
  p->cv.notify_all();
  if (!callback) return;
  // What the callback sends is recorded where its answer was received (OTF2).
  std::optional<TraceScope> scope;
  if (p->trace_request != 0) scope.emplace(p->trace_location);
  try {
    callback(p->reply);
  } catch (...) {  // documented: ignored
  }
}

RequestTable::~RequestTable() { FailAll(Status::Unavailable("runtime destroyed")); }

std::shared_ptr<PendingRequest> RequestTable::Add(RuntimeId peer, ReplyCallback callback,
                                                  std::chrono::milliseconds timeout,
                                                  RuntimeImpl* runtime, bool progress_thread) {
  auto p = std::make_shared<PendingRequest>();
  p->peer = peer;
  p->callback = std::move(callback);
  p->runtime = runtime;
  p->progress_thread = progress_thread;
  std::lock_guard<std::mutex> lock(mu_);
  p->id = next_id_++;
  pending_[p->id] = p;
  if (timeout.count() > 0) {
    auto it = deadlines_.emplace(Clock::now() + timeout, p->id);
    if (!timer_.joinable() && !stopping_) timer_ = std::thread([this] { TimerLoop(); });
    if (it == deadlines_.begin()) cv_.notify_all();
  }
  return p;
}

std::shared_ptr<PendingRequest> RequestTable::Take(uint64_t id, RuntimeId from) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || (from != 0 && it->second->peer != from)) return nullptr;
  std::shared_ptr<PendingRequest> p = std::move(it->second);
  pending_.erase(it);
  return p;
}

bool RequestTable::Complete(uint64_t id, RuntimeId from, Reply reply) {
  std::shared_ptr<PendingRequest> p = Take(id, from);
  if (!p) return false;
  Finish(p, std::move(reply));
  return true;
}

bool RequestTable::Fail(uint64_t id, const Status& why) {
  std::shared_ptr<PendingRequest> p = Take(id, 0);
  if (!p) return false;
  Finish(p, Reply(why, p->peer, ByteBlock(), {}));
  return true;
}

void RequestTable::FailPeer(RuntimeId peer, const Status& why) {
  std::vector<std::shared_ptr<PendingRequest>> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second->peer == peer) {
        failed.push_back(std::move(it->second));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& p : failed) Finish(p, Reply(why, peer, ByteBlock(), {}));
}

void RequestTable::FailAll(const Status& why) {
  std::vector<std::shared_ptr<PendingRequest>> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, p] : pending_) failed.push_back(std::move(p));
    pending_.clear();
    deadlines_.clear();
  }
  cv_.notify_all();
  if (timer_.joinable() && timer_.get_id() != std::this_thread::get_id()) timer_.join();
  for (auto& p : failed) Finish(p, Reply(why, p->peer, ByteBlock(), {}));
}

size_t RequestTable::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void RequestTable::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto first = deadlines_.begin();
    if (Clock::now() < first->first) {
      // A copy: the wait releases the lock, and FailAll/Erase may free the map's node.
      const Clock::time_point deadline = first->first;
      cv_.wait_until(lock, deadline);
      continue;
    }
    const uint64_t id = first->second;
    deadlines_.erase(first);
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;  // completed meanwhile
    std::shared_ptr<PendingRequest> p = std::move(it->second);
    pending_.erase(it);
    lock.unlock();
    Finish(p, Reply(Status::Timeout("request " + std::to_string(id) + " to runtime " +
                                    Hex(p->peer) + ": no reply within the timeout"),
                    p->peer, ByteBlock(), {}));
    lock.lock();
  }
}

Result<std::shared_ptr<PendingRequest>> RuntimeImpl::SendRequest(ByteBlock&& frame,
                                                                 const Startpoint& target,
                                                                 HandlerId handler,
                                                                 ReplyCallback done,
                                                                 RequestOptions options) {
  if (finalized_) return Status::FailedPrecondition("Request: runtime is finalized");
  if (!target.valid()) return Status::InvalidArgument("Request: null startpoint");
  if (options.timeout.count() < 0) return Status::InvalidArgument("Request: negative timeout");
  Result<Peer*> peer = PeerFor(target);
  if (!peer.ok()) return peer.status();
  const size_t payload = frame.size() - wire::kHeaderSize + wire::kRequestTrailer;
  if (payload > (*peer)->max_payload) {
    return Status::OutOfRange("Request: payload of " + std::to_string(payload) +
                              " bytes (with the request trailer) exceeds the " +
                              std::string((*peer)->module->name()) + " limit of " +
                              std::to_string((*peer)->max_payload));
  }
  // The same flow control as SendRsr (flow_control.cc): blocks while the peer's send
  // queue is full, driving progress; that wait counts against the request's timeout.
  const auto start = std::chrono::steady_clock::now();
  UKAI_RETURN_IF_ERROR(AwaitRoom(**peer, target.runtime(), /*wait=*/true, options.timeout));
  std::chrono::milliseconds left = options.timeout;
  if (left.count() > 0) {
    left -= std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
    left = std::max(left, std::chrono::milliseconds(1));
  }
  const bool callback = static_cast<bool>(done);
  std::shared_ptr<PendingRequest> p =
      requests_.Add(target.runtime(), std::move(done), left, this, options_.progress_thread);
  wire::PutLe64(frame.Extend(wire::kRequestTrailer), p->id);
  EncodeRsrHeader(&frame, target, handler, wire::kFlagRequest, payload);
  uint64_t post_with_send = 0;
  if (recorder_) {  // the answer's receive is posted with the send (docs/otf2-recording.md)
    p->trace_request = p->id | trace::kAnswerRequestBit;
    if (callback) {  // nobody waits for it: on the progress location, posted first
      p->trace_location = ProgressLocation();
      recorder_->PostAnswer(p->trace_location, p->trace_request, target.runtime());
    } else {  // the requester waits for it: on its location, posted as the request leaves
      p->trace_location = TraceLocation();
      post_with_send = p->trace_request;
    }
  }
  Status st = SendLogged(**peer, FrameClass::kUser, std::move(frame), post_with_send);
  if (!st.ok()) {
    {  // the caller gets `st`; the callback is not called
      std::lock_guard<std::mutex> lock(p->mu);
      p->callback = nullptr;
    }
    requests_.Fail(p->id, st);
    return st;
  }
  ++rsr_sent_;
  return p;
}

}  // namespace internal

// ---- ReplyFuture ----

uint64_t ReplyFuture::id() const { return state_ ? state_->id : 0; }

bool ReplyFuture::Ready() const {
  if (!state_) return true;
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

bool ReplyFuture::WaitFor(std::chrono::nanoseconds timeout) const {
  if (!state_ || Ready()) return true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // A handler thread blocked here counts as waiting: when all are, the pool grows, or at
  // its limit this thread runs queued handlers meanwhile (thread_pool.h).
  internal::WaitScope scope;
  std::unique_lock<std::mutex> lock(state_->mu);
  while (!state_->done) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    // Nobody else progresses, or each round must tell the simulated machine that this
    // thread still waits (rt/core/virtual_time.h): progress here.
    if (!state_->progress_thread || internal::ThreadInSimulation()) {
      lock.unlock();
      if (state_->runtime->Progress() == 0) std::this_thread::yield();
      lock.lock();
      continue;
    }
    if (scope.pool() != nullptr) {
      lock.unlock();
      const bool helped = scope.pool()->HelpWhileWaiting();
      lock.lock();
      if (!helped && !state_->done) {
        state_->cv.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(1)));
      }
      continue;
    }
    state_->cv.wait_until(lock, deadline);
  }
  return true;
}

const Reply& ReplyFuture::Wait() const& {
  static const Reply kNone(Status::FailedPrecondition("Wait on an empty ReplyFuture"), 0,
                           ByteBlock(), {});
  if (!state_) return kNone;
  while (!WaitFor(std::chrono::hours(1))) {
  }
  return state_->reply;
}

Reply ReplyFuture::Wait() && {
  if (!state_)
    return Reply(Status::FailedPrecondition("Wait on an empty ReplyFuture"), 0, ByteBlock(), {});
  Wait();  // the const& overload (this is an lvalue here)
  std::lock_guard<std::mutex> lock(state_->mu);
  return std::move(state_->reply);
}

bool ReplyFuture::Cancel() const {
  if (!state_ || state_->runtime == nullptr) return false;
  return state_->runtime->requests().Fail(
      state_->id, Status::Cancelled("request " + std::to_string(state_->id) + " cancelled"));
}

// ---- Replier ----

Status Replier::Send(Buffer&& reply) {
  if (!state_) return Status::FailedPrecondition("Replier::Send on an empty Replier");
  if (state_->answered.exchange(true)) {
    return Status::FailedPrecondition("request " + std::to_string(state_->request) +
                                      " was answered already");
  }
  return state_->runtime->SendAnswer(*state_, reply.TakeBlock(), Status::Ok());
}

Status Replier::Fail(const Status& error) {
  if (!state_) return Status::FailedPrecondition("Replier::Fail on an empty Replier");
  if (error.ok()) return Status::InvalidArgument("Replier::Fail with an OK status");
  if (state_->answered.exchange(true)) {
    return Status::FailedPrecondition("request " + std::to_string(state_->request) +
                                      " was answered already");
  }
  return state_->runtime->SendAnswer(*state_, ByteBlock(), error);
}

// ---- Rsr ----

std::shared_ptr<Replier::State>& Rsr::ReplierState() {
  if (!replier_ && request_ != 0) {
    replier_ = std::make_shared<Replier::State>();
    replier_->runtime = runtime_->impl();
    replier_->to = source_;
    replier_->context = context_->id();
    replier_->endpoint = endpoint_->id();
    replier_->handler = handler_.value;
    replier_->request = request_;
  }
  return replier_;
}

Status Rsr::Reply(Buffer&& reply) {
  if (request_ == 0) return Status::FailedPrecondition("Rsr::Reply: this RSR is no request");
  return Replier(ReplierState()).Send(std::move(reply));
}

Status Rsr::Fail(const Status& error) {
  if (request_ == 0) return Status::FailedPrecondition("Rsr::Fail: this RSR is no request");
  return Replier(ReplierState()).Fail(error);
}

Replier Rsr::TakeReplier() {
  if (request_ == 0) return Replier();
  ReplierState()->taken = true;
  return Replier(ReplierState());
}

// ---- Runtime ----

ReplyFuture Runtime::Request(Buffer&& request, const Startpoint& target, HandlerId handler,
                             RequestOptions options) {
  Result<std::shared_ptr<internal::PendingRequest>> p =
      impl_->SendRequest(request.TakeBlock(), target, handler, nullptr, options);
  if (p.ok()) return ReplyFuture(std::move(*p));
  auto failed = std::make_shared<internal::PendingRequest>();
  failed->peer = target.runtime();
  failed->done = true;
  failed->reply = rt::Reply(p.status(), target.runtime(), ByteBlock(), {});
  return ReplyFuture(std::move(failed));
}

Status Runtime::RequestWithCallback(Buffer&& request, const Startpoint& target, HandlerId handler,
                                    ReplyCallback done, RequestOptions options) {
  if (!done) return Status::InvalidArgument("Request: empty ReplyCallback");
  return impl_->SendRequest(request.TakeBlock(), target, handler, std::move(done), options)
      .status();
}

}  // namespace ukai::rt
