#include "rt/modules/sim/sim_fabric.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "rt/core/virtual_time.h"
#include "rt/modules/sim/sim_fabric_records.h"

namespace ukai::rt {

using sim_fabric_internal::HexId;

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

namespace {

uint64_t RandomId() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ 0x51u;
}

// What a detached member's events go to (SimFabric::DetachMember).
class DetachedMember final : public SimMember {
 public:
  void Arrive(ByteBlock&&, std::shared_ptr<SimInFlight>) override {}
  void Kick() override {}
  void PeerGone(RuntimeId, bool, const Status&) override {}
  void Stopped(const Status&) override {}
};

}  // namespace

namespace {

// The calling thread's record in the fabric it last used; leaves the fabric with the thread.
struct ThreadSlot {
  std::shared_ptr<SimFabric::Anchor> anchor;
  void* record = nullptr;
  ~ThreadSlot() {
    if (!anchor || record == nullptr) return;
    std::lock_guard<std::mutex> lock(anchor->mu);
    if (anchor->fabric != nullptr) anchor->fabric->ForgetThread(record);
  }
};
thread_local ThreadSlot tls_slot;

}  // namespace

SimFabric::SimFabric(std::unique_ptr<SimNetwork> net, SimFabricOptions options)
    : id_(RandomId()),
      net_(std::move(net)),
      options_(std::move(options)),
      clock_mhz_(net_->clock_mhz()),
      failures_(net_->node_failures()) {
  anchor_ = std::make_shared<Anchor>();
  anchor_->fabric = this;
  detached_ = std::make_unique<DetachedMember>();
}

Result<std::shared_ptr<SimFabric>> SimFabric::Create(std::unique_ptr<SimNetwork> net,
                                                     SimFabricOptions options) {
  const int nodes = net->nodes();
  const std::string where =
      options.node_map_where.empty() ? "" : " (" + options.node_map_where + ")";
  for (size_t i = 0; i < options.node_map.size(); ++i) {
    if (options.node_map[i] >= nodes) {
      return Status::InvalidArgument("sim.node_map: process " + std::to_string(i) +
                                     " is mapped to node " + std::to_string(options.node_map[i]) +
                                     ", but the network has " + std::to_string(nodes) +
                                     " nodes (0.." + std::to_string(nodes - 1) + ")" + where)
          .WithKey("sim.node_map");
    }
  }
  if (options.processes > 0) {
    const int placed = options.node_map.empty() ? nodes : static_cast<int>(options.node_map.size());
    if (options.processes > placed) {
      return Status::InvalidArgument(
                 "sim.node_map: " + std::to_string(options.processes) + " processes, but " +
                 (options.node_map.empty()
                      ? "the machine has only " + std::to_string(nodes) +
                            " nodes (process i runs on node i; list several processes per "
                            "node in sim.node_map)"
                      : "sim.node_map places only " + std::to_string(placed)) +
                 where)
          .WithKey("sim.node_map");
    }
  }
  std::shared_ptr<SimFabric> f(new SimFabric(std::move(net), std::move(options)));
  {
    std::lock_guard<std::mutex> lock(f->mu_);
    f->driver_ = std::thread([p = f.get()] { p->Run(); });
    f->driver_id_ = f->driver_.get_id();
  }
  return f;
}

SimFabric::~SimFabric() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  driver_cv_.notify_all();
  idle_cv_.notify_all();
  if (driver_.joinable()) driver_.join();
  std::lock_guard<std::mutex> lock(anchor_->mu);
  anchor_->fabric = nullptr;
}

SimFabric::Member* SimFabric::FindMember(RuntimeId rt) {
  auto it = members_.find(rt);
  return it == members_.end() ? nullptr : it->second.get();
}

Result<int> SimFabric::Join(RuntimeId rt, SimMember* m, int process, const SimCaller* caller) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  const int p = process >= 0 ? process : next_process_;
  next_process_ = std::max(next_process_, p + 1);
  const int nodes = net_->nodes();
  int node = p;
  if (!options_.node_map.empty()) {
    if (p >= static_cast<int>(options_.node_map.size())) {
      return Status::InvalidArgument("sim.node_map places " +
                                     std::to_string(options_.node_map.size()) +
                                     " processes; process " + std::to_string(p) + " has no node")
          .WithKey("sim.node_map");
    }
    node = options_.node_map[p];
  } else if (p >= nodes) {
    return Status::InvalidArgument("sim: process " + std::to_string(p) + " has no node: the " +
                                   "machine has " + std::to_string(nodes) +
                                   " nodes (place several processes per node with sim.node_map)")
        .WithKey("sim.node_map");
  }
  auto member = std::make_unique<Member>();
  member->id = rt;
  member->module = m;
  member->process = p;
  member->node = node;
  member->clock = net_->now();
  members_[rt] = std::move(member);
  ++joins_;
  CallLocked(rt, "Init", caller);
  // A process that joins after its node failed (the machine ran on before it joined) is
  // stopped at once, as it would have been at the failure.
  for (size_t i = 0; i < next_failure_; ++i) {
    if (failures_[i].node == node) {
      FailNode(node, failures_[i].cycle);
      break;
    }
  }
  Activity();
  cv_.notify_all();
  return p;
}

void SimFabric::Leave(RuntimeId rt) {
  std::unique_lock<std::mutex> lock(mu_);
  Member* m = FindMember(rt);
  if (m == nullptr) return;
  cv_.wait(lock, [&] { return m->kicking == 0; });  // the driver is done with the module
  departed_.push_back({m->process, m->node, rt, m->clock, m->failed});
  members_.erase(rt);
  for (auto& t : threads_) std::erase(t->holds, rt);
  for (auto& [id, other] : members_) {
    if (other->failed) continue;
    other->module->PeerGone(rt, /*orderly=*/true,
                            Status::Unavailable("runtime left the simulated machine"));
    NoteKick(*other);
  }
  Activity();
  cv_.notify_all();
}

void SimFabric::DetachMember(RuntimeId rt, const Status& why) {
  std::unique_lock<std::mutex> lock(mu_);
  Member* m = FindMember(rt);
  if (m == nullptr) return;
  cv_.wait(lock, [&] { return m->kicking == 0; });  // the stepping thread is done with it
  if (!m->failed) {
    m->failed = true;
    m->module->Stopped(why);
    FailMembers({rt}, why);
  }
  m->module = detached_.get();
  cv_.notify_all();
}

bool SimFabric::Has(RuntimeId rt) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindMember(rt);
  return m != nullptr && !m->failed;
}

// ---- threads and clocks ----

SimFabric::Thread* SimFabric::ThreadRecord(bool create) {
  // The driver dispatches frames itself (KickMembers): a runtime call of a handler it runs
  // is the progress pass's, like one on the runtime's progress thread.
  if (std::this_thread::get_id() == driver_id_) return nullptr;
  ThreadSlot& slot = tls_slot;
  if (slot.anchor == anchor_ && slot.record != nullptr) return static_cast<Thread*>(slot.record);
  if (!create) return nullptr;
  if (slot.anchor && slot.record != nullptr && slot.anchor != anchor_) {
    // The thread moves to another fabric (tests run one after another): leave the old one.
    std::shared_ptr<Anchor> old = std::move(slot.anchor);
    void* record = slot.record;
    slot.record = nullptr;
    mu_.unlock();
    {
      std::lock_guard<std::mutex> lock(old->mu);
      if (old->fabric != nullptr) old->fabric->ForgetThread(record);
    }
    mu_.lock();
  }
  threads_.push_back(std::make_unique<Thread>());
  Thread* t = threads_.back().get();
  t->cpu_mark = CpuOf(*t, nullptr);
  t->seen = seq_;
  slot.anchor = anchor_;
  slot.record = t;
  internal::SetThreadInSimulation(true);
  return t;
}

SimFabric::Thread* SimFabric::Caller(const SimCaller* c, bool create) {
  if (c == nullptr || c->key == 0) return ThreadRecord(create);
  auto it = remote_threads_.find(c->key);
  if (it != remote_threads_.end()) return it->second;
  if (!create || (c->key & 0xffffffffu) == 0) return nullptr;
  threads_.push_back(std::make_unique<Thread>());
  Thread* t = threads_.back().get();
  t->key = c->key;
  t->cpu_mark = c->cpu_ns;
  t->seen = remote_epoch_[c->process()];
  remote_threads_[c->key] = t;
  return t;
}

uint64_t SimFabric::Epoch(const Thread& t) const {
  if (t.key == 0) return seq_;
  auto it = remote_epoch_.find(t.key >> 32);
  return it == remote_epoch_.end() ? 0 : it->second;
}

void SimFabric::BumpEpochs() {
  ++seq_;
  for (auto& [process, epoch] : remote_epoch_) ++epoch;
  Activity();
}

void SimFabric::Activity() {
  ++activity_;
  idle_cv_.notify_all();
}

void SimFabric::ForgetRemoteThread(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool whole = (key & 0xffffffffu) == 0;  // every thread of the process
  std::erase_if(threads_, [&](const std::unique_ptr<Thread>& p) {
    if (p->key == 0 || (whole ? (p->key >> 32) != (key >> 32) : p->key != key)) return false;
    remote_threads_.erase(p->key);
    return true;
  });
  cv_.notify_all();
}

void SimFabric::ExpectJoins(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  expected_joins_ = n;
  cv_.notify_all();
}

void SimFabric::AbandonJoin() {
  std::lock_guard<std::mutex> lock(mu_);
  --expected_joins_;
  cv_.notify_all();
}

void SimFabric::CountRefused() {
  std::lock_guard<std::mutex> lock(mu_);
  ++frames_refused_;
}

void SimFabric::ForgetThread(void* record) {
  Thread* t = static_cast<Thread*>(record);
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(threads_, [t](const std::unique_ptr<Thread>& p) { return p.get() == t; });
  cv_.notify_all();
}

// With cpu_scale = 0 no CPU time is charged: a local thread's is not read (0).
int64_t SimFabric::CpuOf(const Thread& t, const SimCaller* c) const {
  if (t.key != 0 && c != nullptr) return c->cpu_ns;
  return options_.cpu_scale > 0 ? ThreadCpuNs() : 0;
}

void SimFabric::ChargeCpu(Thread* t, const SimCaller* c) {
  const int64_t cpu = CpuOf(*t, c);
  if (!t->idle && options_.cpu_scale > 0 && cpu > t->cpu_mark) {
    const double cycles = double(cpu - t->cpu_mark) * options_.cpu_scale * clock_mhz_ / 1000.0;
    t->clock += static_cast<int64_t>(cycles);
  }
  t->cpu_mark = cpu;
}

void SimFabric::Looked(Thread* t, bool idle) {
  const uint64_t epoch = Epoch(*t);
  t->settled = idle && t->seen == epoch;
  t->seen = epoch;
  t->idle = idle;
  t->activity = activity_;
}

bool SimFabric::Waits(const Thread& t) const { return t.idle && t.settled && t.seen == Epoch(t); }

void SimFabric::ThreadIdle(RuntimeId rt, const char* call, const SimCaller* c, bool settled) {
  std::unique_lock<std::mutex> lock(mu_);
  Thread* t = Caller(c, true);
  if (t == nullptr) return;
  ChargeCpu(t, c);
  if (std::find(t->holds.begin(), t->holds.end(), rt) == t->holds.end() && FindMember(rt)) {
    t->holds.push_back(rt);
  }
  const uint64_t activity = t->activity;  // at its call before this round's check
  Looked(t, /*idle=*/true);
  if (settled) t->settled = true;
  t->last_call = call;
  t->last_wall = std::chrono::steady_clock::now();
  // The driver can only move on when this thread now waits (an unsettled round changes
  // nothing it could use): wake it only then.
  if (!Waits(*t)) return;
  WakeDriver();
  // A local thread that saw everything sleeps until something happens (a remote thread's
  // round is replayed by the launcher's reader, which must not block).
  if (t->key != 0 || activity != activity_) return;
  idle_cv_.wait_for(lock, kSimIdleSleep,
                    [&] { return activity_ != activity || stop_ || !status_.ok(); });
  // It looks again after this (its wait checks its condition between two rounds): it holds
  // from now until its next round, which is settled unless something is dispatched
  // meanwhile -- one round after a dispatch instead of two.
  if (t->seen != Epoch(*t)) {
    t->seen = Epoch(*t);
    t->settled = false;
  }
  t->activity = activity_;
}

void SimFabric::ThreadCall(RuntimeId rt, const char* call, const SimCaller* c) {
  std::lock_guard<std::mutex> lock(mu_);
  CallLocked(rt, call, c);
}

void SimFabric::CallLocked(RuntimeId rt, const char* call, const SimCaller* c) {
  Thread* t = Caller(c, true);
  if (t == nullptr) return;
  ChargeCpu(t, c);
  Looked(t, /*idle=*/false);
  t->program = t->program || t->handler_depth == 0;
  t->last_call = call;
  t->last_wall = std::chrono::steady_clock::now();
  Member* m = FindMember(rt);
  if (m == nullptr) return;
  if (std::find(t->holds.begin(), t->holds.end(), rt) == t->holds.end()) t->holds.push_back(rt);
  for (RuntimeId h : t->holds) {
    if (Member* o = FindMember(h)) t->clock = std::max(t->clock, o->clock);
  }
  m->clock = std::max(m->clock, t->clock);
}

int64_t SimFabric::NowCycles(RuntimeId rt, const SimCaller* c) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindMember(rt);
  Thread* t = Caller(c, false);
  // A program thread's call (its clock moves on); on a thread the fabric does not know
  // (the progress thread running a handler) only a read of the runtime's clock.
  if (t != nullptr && m != nullptr) {
    ChargeCpu(t, c);
    Looked(t, /*idle=*/false);
    t->last_call = "Now";
    t->last_wall = std::chrono::steady_clock::now();
    if (std::find(t->holds.begin(), t->holds.end(), rt) == t->holds.end()) t->holds.push_back(rt);
    for (RuntimeId h : t->holds) {
      if (Member* o = FindMember(h)) t->clock = std::max(t->clock, o->clock);
    }
    m->clock = std::max(m->clock, t->clock);
  }
  if (m != nullptr) return m->clock;
  for (const SimProcessTimes& d : departed_) {
    if (d.runtime == rt) return d.finish_cycle;
  }
  return t != nullptr ? t->clock : net_->now();
}

void SimFabric::HandlerQueued(RuntimeId rt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Member* m = FindMember(rt)) ++m->handlers;
}

void SimFabric::HandlerBegin(RuntimeId rt, const SimCaller* c) {
  std::lock_guard<std::mutex> lock(mu_);
  Thread* t = Caller(c, true);
  if (t == nullptr) return;
  ++t->handler_depth;
  Looked(t, /*idle=*/false);
  t->cpu_mark = CpuOf(*t, c);
  if (std::find(t->holds.begin(), t->holds.end(), rt) == t->holds.end()) t->holds.push_back(rt);
  if (Member* m = FindMember(rt)) {
    t->clock = std::max(t->clock, m->clock);
    if (m->handlers > 0) --m->handlers;
  }
  t->last_call = "a threaded handler";
}

void SimFabric::HandlerEnd(RuntimeId rt, const SimCaller* c) {
  std::lock_guard<std::mutex> lock(mu_);
  Thread* t = Caller(c, false);
  if (t == nullptr) return;
  ChargeCpu(t, c);
  if (Member* m = FindMember(rt)) m->clock = std::max(m->clock, t->clock);
  if (--t->handler_depth <= 0) {
    t->handler_depth = 0;
    // A pool thread holds nothing between handlers.
    if (!t->program) {
      t->holds.clear();
      t->idle = true;
    }
  }
  ++seq_;
  if (c != nullptr && c->key != 0) ++remote_epoch_[c->process()];
  Activity();
  WakeDriver();
}

void SimFabric::Dispatched(RuntimeId rt, int n, const SimCaller* c) {
  std::lock_guard<std::mutex> lock(mu_);
  ++seq_;  // first: a thread that looks after this sees what the dispatch did
  if (c != nullptr && c->key != 0) ++remote_epoch_[c->process()];
  if (kicks_running_ == 0) Activity();  // else once after the kicks (KickMembers)
  Member* m = FindMember(rt);
  if (m == nullptr || m->pending_dispatch == 0) return;
  m->pending_dispatch = std::max(0, m->pending_dispatch - n);
  if (m->pending_dispatch == 0) WakeDriver();  // it no longer holds the driver
}

void SimFabric::ThreadIdleAll(const char* call) {
  std::lock_guard<std::mutex> lock(mu_);
  Thread* t = ThreadRecord(false);
  if (t == nullptr) return;
  ChargeCpu(t, nullptr);
  Looked(t, /*idle=*/true);
  t->last_call = call;
  t->last_wall = std::chrono::steady_clock::now();
  if (Waits(*t)) WakeDriver();
}

}  // namespace ukai::rt

namespace ukai::rt::internal {

void ThreadWaitsOutsideRuntime() {
  std::shared_ptr<SimFabric::Anchor> anchor = tls_slot.anchor;
  if (!anchor) return;
  std::lock_guard<std::mutex> lock(anchor->mu);
  if (anchor->fabric != nullptr) anchor->fabric->ThreadIdleAll("a wait outside the runtime");
}

}  // namespace ukai::rt::internal

namespace ukai::rt {

// ---- frames ----

Status SimFabric::Post(RuntimeId from, RuntimeId to, ByteBlock&& frame,
                       std::shared_ptr<SimInFlight> in_flight, const SimCaller* c) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!status_.ok()) return status_;
  Member* src = FindMember(from);
  Member* dst = FindMember(to);
  if (src == nullptr || src->failed) {
    return Status::Unavailable("sim: this runtime's node failed or it left the machine");
  }
  if (dst == nullptr || dst->failed) {
    return Status::Unavailable("sim: runtime " + HexId(to) +
                               " is not on the simulated machine (finalized or failed)");
  }
  if (Thread* t = Caller(c, false); t != nullptr) {
    ChargeCpu(t, c);
    Looked(t, /*idle=*/false);
    t->last_call = "SendRsr";
    t->last_wall = std::chrono::steady_clock::now();
    if (std::find(t->holds.begin(), t->holds.end(), from) == t->holds.end()) {
      t->holds.push_back(from);
    }
    for (RuntimeId h : t->holds) {
      if (Member* o = FindMember(h)) t->clock = std::max(t->clock, o->clock);
    }
    src->clock = std::max(src->clock, t->clock);
  }
  const int64_t stamp = src->clock;
  if (stamp + 1 < net_->now()) ++late_frames_;
  const uint64_t user = next_user_++;
  const int64_t bytes = static_cast<int64_t>(frame.size());
  in_flight->frames.fetch_add(1, std::memory_order_relaxed);
  in_flight->bytes.fetch_add(frame.size(), std::memory_order_relaxed);
  const uint64_t pair_seq = channels_[{from, to}].next_send++;
  frames_.emplace(
      user, InFlightFrame{from, to, src->node, pair_seq, std::move(frame), std::move(in_flight)});
  ready_.emplace(stamp, src->process, src->sent++, user);
  ++frames_sent_;
  bytes_sent_ += static_cast<uint64_t>(bytes);
  WakeDriver();
  return Status::Ok();
}

}  // namespace ukai::rt
