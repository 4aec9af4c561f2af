#include "rt/modules/sim/sim_module.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "rt/core/virtual_time.h"
#include "rt/modules/sim/sim_fabric.h"
#include "rt/modules/sim/sim_link.h"
#include "rt/modules/sim/sim_remote.h"

namespace ukai::rt {
namespace {

class SimModule;
// The module whose Kick runs on this thread (its dispatcher's pass).
thread_local const SimModule* tls_kicking = nullptr;

// The machine in this process.
class LocalSimLink final : public SimLink {
 public:
  explicit LocalSimLink(std::shared_ptr<SimFabric> f) : f_(std::move(f)) {}
  uint64_t machine_id() const override { return f_->id(); }
  double clock_mhz() const override { return f_->clock_mhz(); }
  Result<int> Join(RuntimeId rt, SimMember* m) override { return f_->Join(rt, m); }
  void Leave(RuntimeId rt) override { f_->Leave(rt); }
  bool Has(RuntimeId rt) override { return f_->Has(rt); }
  Status Post(RuntimeId from, RuntimeId to, ByteBlock&& frame,
              std::shared_ptr<SimInFlight> in_flight) override {
    return f_->Post(from, to, std::move(frame), std::move(in_flight));
  }
  void Dispatched(RuntimeId rt, int n) override { f_->Dispatched(rt, n); }
  void ThreadIdle(RuntimeId rt, const char* call) override { f_->ThreadIdle(rt, call); }
  void ThreadCall(RuntimeId rt, const char* call) override { f_->ThreadCall(rt, call); }
  int64_t NowCycles(RuntimeId rt) override { return f_->NowCycles(rt); }
  void HandlerQueued(RuntimeId rt) override { f_->HandlerQueued(rt); }
  void HandlerBegin(RuntimeId rt) override { f_->HandlerBegin(rt); }
  void HandlerEnd(RuntimeId rt) override { f_->HandlerEnd(rt); }
  std::map<std::string, uint64_t> Counters() override { return f_->Counters(); }

 private:
  std::shared_ptr<SimFabric> f_;
};

class SimObject final : public CommObject {
 public:
  SimObject(std::shared_ptr<SimLink> fabric, RuntimeId self, RuntimeId peer)
      : fabric_(std::move(fabric)), self_(self), peer_(peer) {}
  Status Send(ByteBlock&& frame) override {
    if (state_.load() != CommState::kOk) {
      return Status::Unavailable("sim: connection to the peer is closed or failed");
    }
    Status st = fabric_->Post(self_, peer_, std::move(frame), in_flight_);
    if (!st.ok()) state_.store(CommState::kFailed);
    return st;
  }
  void Close() override { state_.store(CommState::kClosed); }
  CommState state() const override { return state_.load(); }
  RuntimeId peer() const override { return peer_; }
  // Frames in the simulated network or the peer's inbox (held in this process's memory).
  size_t QueuedBytes() const override {
    return static_cast<size_t>(in_flight_->bytes.load(std::memory_order_relaxed));
  }
  Unconfirmed Outstanding() override {
    return {in_flight_->frames.load(std::memory_order_acquire),
            in_flight_->bytes.load(std::memory_order_acquire)};
  }

 private:
  std::shared_ptr<SimLink> fabric_;
  RuntimeId self_, peer_;
  std::shared_ptr<SimInFlight> in_flight_ = std::make_shared<SimInFlight>();
  std::atomic<CommState> state_{CommState::kOk};
};

class SimModule final : public Module, public SimMember, public internal::VirtualTime {
 public:
  explicit SimModule(std::shared_ptr<SimFabric> fabric)
      : fabric_(fabric ? std::make_shared<LocalSimLink>(std::move(fabric)) : nullptr) {}
  ~SimModule() override { Close(); }

  std::string_view name() const override { return "sim"; }
  Status Init(ModuleHost* host) override {
    host_ = host;
    if (!fabric_ && !host->Param("sim.fd").empty()) {  // under `ukai launch --sim`
      Result<std::shared_ptr<SimLink>> remote =
          NewRemoteSimLink(host->Param("sim.fd"), host->Param("sim.rank"));
      if (!remote.ok()) return remote.status();
      fabric_ = std::move(*remote);
      remote_ = true;
    }
    if (!fabric_) {
      return Status::FailedPrecondition(
          "sim: no simulated machine (run under `ukai launch --sim MACHINE.toml`, or set "
          "RuntimeOptions::sim_fabric)");
    }
    // With a progress thread, the machine's own thread (the driver in one process, the
    // channel's reader under launch --sim) dispatches every frame and peer event, standing in
    // for the progress thread (Kick): one thread runs the non-threaded handlers, as usual.
    // (Under launch --sim the channel's reader only hands frames over: the progress thread
    // dispatches them.)
    dispatcher_ = !remote_ && host->has_progress_thread();
    Result<int> process = fabric_->Join(host->runtime_id(), this);
    if (!process.ok()) return process.status();
    joined_ = true;
    host->SetVirtualTime(this);
    fabric_->ThreadCall(host->runtime_id(), "Init");
    return Status::Ok();
  }
  ModuleCaps Query() const override {
    ModuleCaps c;
    c.reach = remote_ ? Reach::kSameHost : Reach::kSameProcess;
    c.latency_us = 1;
    c.bandwidth_gbytes_s = 1;
    c.max_payload_bytes = wire::kMaxPayloadBytes;
    c.detects_peer_failure = true;
    c.multi_process = remote_;
    c.virtual_time = true;  // Arrive, PeerGone and Stopped wake the progress thread
    return c;
  }
  Result<std::vector<uint8_t>> MakeDescriptor() override {
    std::vector<uint8_t> d(8);
    wire::PutLe64(d.data(), fabric_->machine_id());
    return d;
  }
  bool CanReach(std::span<const uint8_t> d) const override {
    return fabric_ && d.size() == 8 && wire::GetLe64(d.data()) == fabric_->machine_id();
  }
  std::string Unreachable(std::span<const uint8_t>) const override {
    return "the peer runs on another simulated machine";
  }
  Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer, std::span<const uint8_t> d) override {
    if (!CanReach(d)) return Status::Unavailable("sim: peer is on another simulated machine");
    if (!fabric_->Has(peer)) return Status::Unavailable("sim: peer is not on the machine");
    return std::shared_ptr<CommObject>(
        std::make_shared<SimObject>(fabric_, host_->runtime_id(), peer));
  }
  int Progress() override;
  bool PrepareToBlock() override {
    Release();
    return !pending_.load(std::memory_order_acquire) || !MayTake();
  }
  std::map<std::string, uint64_t> Counters() const override {
    return fabric_ ? fabric_->Counters() : std::map<std::string, uint64_t>{};
  }
  void Close() override {
    if (!joined_) return;
    Release();
    // Barrier frames are not the connections' (Finalize's flush does not see them): a rank
    // that left the last barrier first waits, in the runtime, until its last rounds were
    // taken (else a peer still waiting for them would see it leave instead).
    while (barrier_in_flight_->frames.load(std::memory_order_acquire) > 0 && Running()) {
      fabric_->ThreadIdle(host_->runtime_id(), "Finalize (a barrier's last rounds)");
      std::this_thread::yield();
    }
    fabric_->Leave(host_->runtime_id());
    joined_ = false;
  }

  // SimMember (fabric lock held; Kick follows without it).
  void Arrive(ByteBlock&& frame, std::shared_ptr<SimInFlight> in_flight) override {
    bool was_pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back({std::move(frame), std::move(in_flight)});
      was_pending = pending_.exchange(true, std::memory_order_acq_rel);
    }
    // Without a dispatcher (Kick) the progress thread takes them: wake it (once: a wake-up
    // for the inbox is on its way while it is pending), unless a thread waiting in the
    // runtime takes them (its wait polls Progress; the progress thread looks every 10 ms).
    if (!dispatcher_ && !was_pending && !fabric_->ThreadWaits()) host_->Wake();
  }
  void Kick() override {
    tls_kicking = this;
    const bool ran = host_->RunProgressPass();
    tls_kicking = nullptr;
    if (ran) return Release();
    // Not running (starting, finalizing) or no progress thread: whoever progresses next.
    missed_.store(true);
    host_->Wake();
  }
  void PeerGone(RuntimeId peer, bool orderly, const Status& why) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      gone_.push_back({peer, orderly, why});
      departed_.insert(peer);
      pending_.store(true, std::memory_order_release);
    }
    host_->Wake();
  }
  void Stopped(const Status& why) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = why;
      pending_.store(true, std::memory_order_release);
    }
    host_->Wake();
  }

  // VirtualTime.
  void ThreadIdle(const char* call) override { fabric_->ThreadIdle(host_->runtime_id(), call); }
  void ThreadCall(const char* call) override { fabric_->ThreadCall(host_->runtime_id(), call); }
  std::chrono::nanoseconds Now() override {
    const int64_t cycles = fabric_->NowCycles(host_->runtime_id());
    return std::chrono::nanoseconds(
        static_cast<int64_t>(static_cast<double>(cycles) * 1000.0 / fabric_->clock_mhz()));
  }
  Status BarrierSend(RuntimeId to, uint64_t seq, int round) override {
    wire::FrameHeader h;
    h.kind = wire::FrameKind::kBarrier;
    h.source = host_->runtime_id();
    h.target = to;
    h.handler = static_cast<uint32_t>(round);
    h.flags = wire::kFlagHasAddress;
    h.address = seq;
    ByteBlock frame(wire::kHeaderSize);
    frame.Resize(wire::kHeaderSize);
    wire::EncodeHeader(h, std::span<uint8_t>(frame.data(), wire::kHeaderSize));
    return fabric_->Post(host_->runtime_id(), to, std::move(frame), barrier_in_flight_);
  }
  Result<bool> BarrierArrived(RuntimeId from, uint64_t seq, int round) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (barrier_rounds_.erase({from, seq, round}) > 0) return true;
    if (!stopped_.ok()) return stopped_;
    if (departed_.contains(from)) {
      return Status::Unavailable("sim: runtime " + RuntimeIdString(from) +
                                 " failed or left during the barrier");
    }
    return false;
  }
  void HandlerQueued() override { fabric_->HandlerQueued(host_->runtime_id()); }
  void HandlerBegin() override { fabric_->HandlerBegin(host_->runtime_id()); }
  void HandlerEnd() override { fabric_->HandlerEnd(host_->runtime_id()); }

 private:
  bool Running() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_.ok();
  }
  // A barrier round (wire::FrameKind::kBarrier) is the module's own: noted, not delivered.
  bool TakeBarrierRound(std::span<const uint8_t> frame) {
    if (frame.size() <= 5 || frame[5] != static_cast<uint8_t>(wire::FrameKind::kBarrier)) {
      return false;
    }
    Result<wire::FrameView> v = wire::DecodeFrame(frame);
    if (!v.ok() || v->header.target != host_->runtime_id()) return false;  // the runtime says why
    std::lock_guard<std::mutex> lock(mu_);
    barrier_rounds_.insert(
        {v->header.source, v->header.address, static_cast<int>(v->header.handler)});
    return true;
  }
  // Whether this thread may take the inbox and peer events: the dispatcher's pass (Kick), or
  // any pass when there is no dispatcher or it missed them.
  bool MayTake() const {
    return !dispatcher_ || tls_kicking == this || missed_.load(std::memory_order_acquire);
  }
  // Tells the fabric that what the last Progress() delivered has been dispatched.
  void Release() {
    const int n = taken_.exchange(0);
    if (n > 0 && joined_) {
      fabric_->Dispatched(host_->runtime_id(), n);
    } else if (remote_ && joined_) {
      fabric_->FlushHeld();
    }
  }

  std::shared_ptr<SimLink> fabric_;
  bool remote_ = false;
  bool dispatcher_ = false;          // frames are dispatched by the machine's thread (Kick)
  std::atomic<bool> missed_{false};  // a Kick could not run a pass: any pass takes them
  ModuleHost* host_ = nullptr;
  bool joined_ = false;
  std::mutex mu_;
  std::atomic<bool> pending_{false};
  struct Posted {
    ByteBlock frame;
    std::shared_ptr<SimInFlight> in_flight;
  };
  struct Gone {
    RuntimeId peer;
    bool orderly;
    Status why;
  };
  std::vector<Posted> inbox_;
  std::vector<Gone> gone_;
  Status stopped_;            // why this runtime's node failed or the run stopped (OK: it runs)
  std::vector<Posted> work_;  // progress thread only
  std::atomic<int> taken_{0};
  // Barrier rounds arrived and not yet taken (source, sequence, round); peers gone.
  std::set<std::tuple<RuntimeId, uint64_t, int>> barrier_rounds_;
  std::set<RuntimeId> departed_;
  std::shared_ptr<SimInFlight> barrier_in_flight_ = std::make_shared<SimInFlight>();
};

int SimModule::Progress() {
  Release();
  if (!pending_.load(std::memory_order_acquire) || !MayTake()) return 0;
  missed_.store(false, std::memory_order_relaxed);
  std::vector<Gone> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.store(false, std::memory_order_relaxed);
    work_.swap(inbox_);
    gone.swap(gone_);
  }
  int n = 0;
  for (Posted& p : work_) {
    ByteBlock& b = p.frame;
    const size_t size = b.size();
    if (TakeBarrierRound(b.span())) {
      ++n;
    } else if (host_->DeliverFrame(b.span(), &b).ok()) {
      ++n;
    }
    p.in_flight->bytes.fetch_sub(size, std::memory_order_relaxed);
    p.in_flight->frames.fetch_sub(1, std::memory_order_release);
  }
  taken_.fetch_add(static_cast<int>(work_.size()));
  work_.clear();
  for (const Gone& g : gone) host_->PeerFailed(g.peer, "sim", g.orderly, g.why);
  return n + static_cast<int>(gone.size());
}

}  // namespace

std::unique_ptr<Module> NewSimModule(const ModuleEnv& env) {
  return std::make_unique<SimModule>(env.sim_fabric);
}

}  // namespace ukai::rt
