// Delivery and the progress engine: modules hand frames to Deliver() from inside their
// Progress(); right after each module's Progress() returns, the frames are dispatched —
// non-threaded handlers run here, on the progress thread, reading the module's memory in
// place; threaded handlers are queued on the pool with owned bytes.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "rt/core/runtime_impl.h"

namespace ukai::rt::internal {
namespace {

// RunProgressPass waits at most this long for another thread's pass to end.
constexpr auto kRunPassWait = std::chrono::milliseconds(50);

thread_local ContextState* tls_handler_context = nullptr;
// The runtime whose non-threaded handler runs on this thread (inside its progress pass).
thread_local const RuntimeImpl* tls_pass_runtime = nullptr;

// Marks the current thread as running a handler of `cs` for the scope.
// Marks the current thread as running a handler of `cs` for the scope (`pass`: the runtime
// whose progress pass runs it, for non-threaded handlers).
class HandlerScope {
 public:
  explicit HandlerScope(ContextState* cs, const RuntimeImpl* pass = nullptr)
      : prev_(tls_handler_context), prev_pass_(tls_pass_runtime) {
    tls_handler_context = cs;
    tls_pass_runtime = pass;
  }
  ~HandlerScope() {
    tls_handler_context = prev_;
    tls_pass_runtime = prev_pass_;
  }

 private:
  ContextState* prev_;
  const RuntimeImpl* prev_pass_;
};

class HandlerTask final : public Task {
 public:
  HandlerTask(Runtime* rt, std::shared_ptr<ContextState> cs, EndpointState* es,
              const HandlerEntry* h, const wire::FrameHeader& header, ByteBlock storage,
              std::span<const uint8_t> payload)
      : rt_(rt),
        cs_(std::move(cs)),
        es_(es),
        h_(h),
        header_(header),
        storage_(std::move(storage)),
        payload_(payload) {}
  void Run() override {
    internal::VirtualTime* vt = rt_->impl()->virtual_time();
    if (vt != nullptr) vt->HandlerBegin();
    {
      HandlerScope scope(cs_.get());
      std::optional<uint64_t> addr;
      if (header_.has_address()) addr = header_.address;
      std::span<const uint8_t> payload = payload_;
      const uint64_t request = SplitRequest(header_, &payload);
      Rsr rsr(rt_, cs_->context.get(), es_->endpoint.get(), header_.source,
              HandlerId{header_.handler}, addr, payload, request);
      rt_->impl()->InvokeHandler(h_, rsr);
    }
    if (vt != nullptr) vt->HandlerEnd();
    cs_->running.fetch_sub(1);
  }

 private:
  Runtime* rt_;
  std::shared_ptr<ContextState> cs_;
  EndpointState* es_;
  const HandlerEntry* h_;
  wire::FrameHeader header_;
  ByteBlock storage_;
  std::span<const uint8_t> payload_;
};

}  // namespace

ContextState* CurrentHandlerContext() { return tls_handler_context; }
bool RuntimeImpl::InOwnProgressPass() const { return tls_pass_runtime == this; }

void RuntimeImpl::RejectFrame(const Status& why) {
  ++frames_rejected_;
  Trace("rejected frame: " + why.ToString());
}

Status RuntimeImpl::DeliverFrame(std::span<const uint8_t> frame, ByteBlock* owned) {
  Result<wire::FrameView> v = wire::DecodeFrame(frame);
  if (!v.ok()) {
    RejectFrame(v.status());
    return v.status();
  }
  Deliver(v->header, v->payload, owned);
  return Status::Ok();
}

void RuntimeImpl::Deliver(const wire::FrameHeader& header, std::span<const uint8_t> payload,
                          ByteBlock* owned) {
  if (header.kind != wire::FrameKind::kRsr) return;  // control frames are the module's
  if (header.target != id_) {
    RejectFrame(Status::InvalidArgument("frame for runtime " + Hex(header.target) + " arrived at " +
                                        Hex(id_)));
    return;
  }
  if ((header.flags & (wire::kFlagRequest | wire::kFlagReply)) != 0 &&
      !CheckServiceFrame(header, payload)) {
    return;
  }
  Delivered& d = delivered_.emplace_back(header, payload);
  if (owned != nullptr) d.storage = std::move(*owned);  // payload's bytes do not move
}

inline void RuntimeImpl::RunNonThreaded(ContextState* cs, EndpointState* es, const HandlerEntry* h,
                                        const wire::FrameHeader& header,
                                        std::span<const uint8_t> payload) {
  HandlerScope scope(cs, this);
  std::optional<uint64_t> addr;
  if (header.has_address()) addr = header.address;
  const uint64_t request = SplitRequest(header, &payload);
  Rsr rsr(self_, cs->context.get(), es->endpoint.get(), header.source, HandlerId{header.handler},
          addr, payload, request);
  InvokeHandler(h, rsr);
}

bool RuntimeImpl::DispatchRouted(const Delivered& d) {
  const wire::FrameHeader& h = d.header;
  if (has_reinject_.load(std::memory_order_acquire) || (h.flags & wire::kFlagReply) != 0) {
    return false;
  }
  for (const Route& r : routes_) {
    if (r.context != h.context || r.endpoint != h.endpoint || r.handler != h.handler || !r.cs) {
      continue;
    }
    // The same checks as Dispatch's; anything else (threaded, context not ready) goes there.
    ContextState* rcs = r.cs.get();
    if (r.he->kind != HandlerKind::kNonThreaded ||
        rcs->phase.load(std::memory_order_acquire) != ContextState::Phase::kReady) {
      return false;
    }
    CountDelivered();
    RunNonThreaded(rcs, r.es, r.he, h, d.payload);
    return true;
  }
  return false;
}

void RuntimeImpl::DispatchDelivered() {
  for (Delivered& d : delivered_) {
    if (!DispatchRouted(d)) Dispatch(d);
  }
  delivered_.clear();
}

void RuntimeImpl::Dispatch(Delivered& d) {
  if (has_reinject_.load(std::memory_order_acquire)) DrainReinjected();
  const wire::FrameHeader& h = d.header;
  if ((h.flags & wire::kFlagReply) != 0) {  // a reply or refusal for this runtime (service.cc)
    HandleReply(d);
    return;
  }
  for (Route& r : routes_) {
    if (!r.cs || r.context != h.context || r.endpoint != h.endpoint || r.handler != h.handler) {
      continue;
    }
    // No shared_ptr copy: routes_ keeps the context alive, and only this thread changes
    // routes_ (a handler's own Progress() call returns 0 here: the flag is held).
    ContextState* rcs = r.cs.get();
    if (r.he->kind == HandlerKind::kNonThreaded) {
      // Not counted in `running`: DestroyContextState, after marking the context closing,
      // waits until it held the progress flag once, i.e. until this pass ended.
      if (rcs->phase.load(std::memory_order_acquire) == ContextState::Phase::kReady) {
        CountDelivered();
        RunNonThreaded(rcs, r.es, r.he, d.header, d.payload);
        return;
      }
    } else {
      rcs->running.fetch_add(1);
      if (rcs->phase.load() == ContextState::Phase::kReady) {
        Run(r.cs, r.es, r.he, d);
        return;
      }
      rcs->running.fetch_sub(1);
    }
    r = Route();  // the context is closing: forget it and take the slow path
    break;
  }
  std::shared_ptr<ContextState> cs;
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mu_);
    auto it = contexts_.find(h.context);
    if (it != contexts_.end()) cs = it->second;
  }
  if (!cs) {
    Refuse(h, d.payload);
    ++rsr_dropped_;  // after the refusal is queued: who sees the count may expect it
    return;
  }
  cs->running.fetch_add(1);
  ContextState::Phase phase = cs->phase.load();
  if (phase != ContextState::Phase::kReady) {
    cs->running.fetch_sub(1);
    std::lock_guard<std::mutex> lock(cs->mu);
    if (cs->phase.load() == ContextState::Phase::kBooting) {
      HeldFrame& f = cs->held.emplace_back();
      f.header = h;
      if (d.storage.empty()) {
        f.storage.Resize(d.payload.size());
        if (!d.payload.empty()) std::memcpy(f.storage.data(), d.payload.data(), d.payload.size());
        f.payload = f.storage.span();
      } else {
        f.storage = std::move(d.storage);
        f.payload = d.payload;
      }
      return;
    }
    if (cs->phase.load() == ContextState::Phase::kClosing) {
      Refuse(h, d.payload);
      ++rsr_dropped_;
      return;
    }
    cs->running.fetch_add(1);  // became ready meanwhile: go on
  }
  EndpointState* es = cs->FindEndpoint(h.endpoint);
  const HandlerEntry* he = es != nullptr ? es->Find(h.handler) : nullptr;
  if (he == nullptr) {
    cs->running.fetch_sub(1);
    Refuse(h, d.payload);
    ++rsr_dropped_;  // after the refusal is queued: who sees the count may expect it
    return;
  }
  Route& r = routes_[next_route_++ % kRoutes];  // replace the oldest
  r = Route{h.context, h.endpoint, h.handler, cs, es, he};
  Run(cs, es, he, d);
}

// Runs or queues the handler; `cs->running` was incremented by the caller.
void RuntimeImpl::Run(const std::shared_ptr<ContextState>& cs, EndpointState* es,
                      const HandlerEntry* he, Delivered& d) {
  CountDelivered();
  if (he->kind == HandlerKind::kNonThreaded) {
    RunNonThreaded(cs.get(), es, he, d.header, d.payload);
    cs->running.fetch_sub(1);
    return;
  }
  ByteBlock storage = std::move(d.storage);
  std::span<const uint8_t> payload = d.payload;
  if (storage.empty() && !payload.empty()) {  // module memory: copy for the pool thread
    storage.Resize(payload.size());
    std::memcpy(storage.data(), payload.data(), payload.size());
    payload = storage.span();
  }
  if (vt_ != nullptr) vt_->HandlerQueued();
  pool_->Submit(
      std::make_unique<HandlerTask>(self_, cs, es, he, d.header, std::move(storage), payload));
}

void RuntimeImpl::DrainReinjected() {
  std::vector<HeldFrame> frames;
  {
    std::lock_guard<std::mutex> lock(reinject_mu_);
    frames.swap(reinject_);
    has_reinject_.store(false);
  }
  for (HeldFrame& f : frames) {
    Delivered d;
    d.header = f.header;
    d.payload = f.payload;
    d.storage = std::move(f.storage);
    Dispatch(d);
  }
}

void RuntimeImpl::AdoptIncoming(RuntimeId peer, std::shared_ptr<CommObject> object) {
  std::lock_guard<std::mutex> lock(peers_mu_);
  Peer& p = peers_[peer];
  if (p.object) return;  // keep the working object (order per sender stays per connection)
  p.object = std::move(object);
  p.module = modules_[current_module_].get();
  p.max_payload = caps_[current_module_].max_payload_bytes;
  Trace("peer " + Hex(peer) + " adopted incoming " + std::string(p.module->name()) + " connection");
}

void RuntimeImpl::PeerFailed(RuntimeId peer, std::string_view module, bool orderly,
                             const Status& why) {
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    Peer& p = peers_[peer];
    if (p.module != nullptr && p.module->name() != module) return;  // another module's object
    if (p.notified) return;
    p.failed = true;
    p.notified = true;
  }
  Trace("peer " + Hex(peer) + (orderly ? " left" : " failed") + " (" + std::string(module) +
        "): " + why.ToString());
  std::lock_guard<std::mutex> lock(events_mu_);
  events_.push_back(PeerEvent{peer, std::string(module), orderly, why});
  has_events_.store(true);
}

void RuntimeImpl::DrainEvents() {
  std::vector<PeerEvent> events;
  {
    std::lock_guard<std::mutex> lock(events_mu_);
    events.swap(events_);
    has_events_.store(false);
  }
  for (const PeerEvent& e : events) {  // requests to a failed or departed peer fail
    requests_.FailPeer(e.peer, Status::Unavailable("peer runtime " + Hex(e.peer) +
                                                   (e.orderly ? " left" : " failed") + ": " +
                                                   e.reason.ToString()));
  }
  std::vector<std::function<void(const PeerEvent&)>> listeners;
  {
    std::lock_guard<std::mutex> lock(listeners_mu_);
    for (const auto& l : listeners_) listeners.push_back(l.second);
  }
  if (options_.on_peer_event || !listeners.empty()) {
    HandlerScope scope(nullptr, this);  // runs inside our pass (QuiesceProgress must know)
    TraceScope trace(recorder_ ? ProgressLocation() : nullptr);  // its sends (OTF2)
    for (const PeerEvent& e : events) {
      for (const auto& l : listeners) l(e);
      if (options_.on_peer_event) options_.on_peer_event(e);
    }
  }
}

void RuntimeImpl::Wake() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping_.load() && wake_fd_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }
}

bool RuntimeImpl::RunProgressPass() {
  if (!passes_by_modules_.load() || stop_.load()) return false;
  if (!TryEnterProgress()) {
    progress_wanted_.fetch_add(1);  // the progress thread steps aside (as for QuiesceProgress)
    const auto give_up = std::chrono::steady_clock::now() + kRunPassWait;
    while (!TryEnterProgress()) {
      if (stop_.load() || std::chrono::steady_clock::now() > give_up) {
        progress_wanted_.fetch_sub(1);
        return false;
      }
      std::this_thread::yield();
    }
    progress_wanted_.fetch_sub(1);
  }
  // Checked again inside: Finalize joins the progress thread after setting stop_, and that
  // thread cannot leave before this pass did (it needs progressing_ to see stop_).
  if (stop_.load()) {
    LeaveProgress();
    return false;
  }
  ProgressPass(/*all=*/true);
  LeaveProgress();
  return true;
}

bool RuntimeImpl::TryEnterProgress() {
  // Test first: a caller spinning on Progress() while the thread progresses reads a shared
  // line instead of bouncing it with a read-modify-write.
  if (progressing_.load(std::memory_order_relaxed) ||
      progressing_.exchange(true, std::memory_order_acquire)) {
    return false;
  }
  return true;
}

void RuntimeImpl::LeaveProgress() { progressing_.store(false, std::memory_order_release); }

void RuntimeImpl::QuiesceProgress() {
  // Called from a handler inside a pass of ours (destroying another context): no other
  // pass can run meanwhile.
  if (tls_pass_runtime == this) return;
  progress_wanted_.fetch_add(1);
  while (!TryEnterProgress()) std::this_thread::yield();
  LeaveProgress();
  progress_wanted_.fetch_sub(1);
}

int RuntimeImpl::Progress() {
  NoteCallerProgress();
  int n = 0;
  // A thread that must run a pass (QuiesceProgress, a module's RunProgressPass) goes first.
  const bool entered = progress_wanted_.load(std::memory_order_relaxed) == 0 && TryEnterProgress();
  if (entered) {
    n = ProgressPass(/*all=*/true);
    LeaveProgress();
  }
  if (vt_ != nullptr && (entered || !InOwnProgressPass())) [[unlikely]] {
    // An idle pass is a wait: the simulated machine may advance until something arrives.
    n == 0 ? vt_->ThreadIdle("Progress") : vt_->ThreadCall("Progress");
  }
  return CallerIdle(n);
}

// Slow modules (estimated latency above kSlowModuleUs, e.g. tcp) are polled only every
// kSlowEvery-th pass while spinning: their poll is a system call (epoll_wait) that would
// otherwise add ~0.3 us to every pass of the fast ones (shm), while it costs them a few
// passes (well under 1 us) of their ~10 us latency.
constexpr double kSlowModuleUs = 2.0;
// Under `ukai launch --sim` the progress thread sleeps at most this long (ms): the sim
// module wakes it when no program thread waiting in the runtime takes its arrivals; the
// look catches a thread that left its wait just as they came.
constexpr int kVirtualTimeLookMs = 10;
constexpr uint64_t kSlowEvery = 8;

int RuntimeImpl::ProgressPass(bool all) {
  int n = 0;
  const bool slow_too = all || (++passes_ % kSlowEvery) == 0;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (!slow_too && caps_[i].latency_us > kSlowModuleUs) continue;
    current_module_ = i;
    n += modules_[i]->Progress();
    if (!delivered_.empty()) DispatchDelivered();
  }
  if (has_reinject_.load(std::memory_order_acquire)) {
    DrainReinjected();
    ++n;
  }
  if (has_events_.load(std::memory_order_acquire)) {
    DrainEvents();
    ++n;
  }
  return n;
}

void RuntimeImpl::ProgressLoop() {
  using Clock = std::chrono::steady_clock;
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  bool all_have_fds = true;
  for (const auto& m : modules_) {
    if (m->WaitFd() >= 0) {
      fds.push_back({m->WaitFd(), POLLIN, 0});
    } else if (m->name() != "inproc") {  // inproc wakes us through Wake()
      all_have_fds = false;
    }
  }
  // A module that keeps virtual time wakes us for everything it has (ModuleCaps).
  const bool virtual_time =
      std::any_of(caps_.begin(), caps_.end(), [](const ModuleCaps& c) { return c.virtual_time; });
  const auto spin = std::chrono::microseconds(virtual_time ? 0 : options_.spin_us);
  // Virtual time across processes (`ukai launch --sim`): the module wakes this thread for
  // whatever no waiting program thread takes, so it neither steps aside in timed sleeps
  // nor polls every millisecond (in one process the fabric's driver dispatches instead).
  const bool woken_for_all = std::any_of(caps_.begin(), caps_.end(), [](const ModuleCaps& c) {
    return c.virtual_time && c.multi_process;
  });
  auto last_active = Clock::now();
  while (!TryEnterProgress()) std::this_thread::yield();  // an explicit Progress() caller
  while (!stop_.load(std::memory_order_relaxed)) {
    if (progress_wanted_.load(std::memory_order_relaxed) != 0) {  // DestroyContext waits
      LeaveProgress();
      std::this_thread::yield();
      while (!TryEnterProgress()) std::this_thread::yield();
    }
    // Under `launch --sim` a program thread that waits polls Progress() itself and the
    // module wakes this thread only when none does: no timed stepping aside, whose sleeps
    // would cost more wake-ups than the deliveries.
    if (!woken_for_all && StepAsideForCallers()) last_active = Clock::now();
    if (ProgressPass(/*all=*/false) > 0) {
      last_active = Clock::now();
      continue;
    }
    if (Clock::now() - last_active < spin) {
      YieldWhileSpinning();
      continue;
    }
    sleeping_.store(true);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    size_t armed = 0;  // modules told PrepareToBlock (in order)
    while (armed < modules_.size() && modules_[armed]->PrepareToBlock()) ++armed;
    const bool block = armed == modules_.size();
    if (!block || ProgressPass(/*all=*/true) > 0 || stop_.load()) {
      for (size_t i = 0; i < armed + (block ? 0 : 1); ++i) modules_[i]->Unblocked();
      sleeping_.store(false);
      last_active = Clock::now();
      continue;
    }
    LeaveProgress();  // let explicit Progress() callers in while we sleep
    ::poll(fds.data(), fds.size(), woken_for_all ? kVirtualTimeLookMs : all_have_fds ? 100 : 1);
    while (!TryEnterProgress()) std::this_thread::yield();
    for (auto& m : modules_) m->Unblocked();
    sleeping_.store(false);
    uint64_t drained;
    [[maybe_unused]] ssize_t r = ::read(wake_fd_, &drained, sizeof drained);
    ProgressPass(/*all=*/true);  // whichever fd woke us, poll every module once
    last_active = Clock::now();
  }
  LeaveProgress();
}

}  // namespace ukai::rt::internal
