// SimFabric's driver side (sim_fabric.h): stepping the network up to the conservative
// horizon, handing arrivals and peer events to the members, node failures, the stall check,
// and the figures.
#include <algorithm>
#include <chrono>
#include <thread>
#include <tuple>

#include "rt/modules/sim/sim_fabric.h"
#include "rt/modules/sim/sim_fabric_records.h"

namespace ukai::rt {

using sim_fabric_internal::HexId;
using sim_fabric_internal::kInfinity;

// ---- the driver ----

int64_t SimFabric::Horizon() const {
  int64_t h = kInfinity;
  for (const auto& [id, m] : members_) {
    if (!m->failed && (m->pending_dispatch > 0 || m->handlers > 0)) h = std::min(h, m->clock);
  }
  for (const auto& t : threads_) {
    if (Waits(*t)) continue;
    for (RuntimeId r : t->holds) {
      auto it = members_.find(r);
      if (it == members_.end() || it->second->failed) continue;
      h = std::min(h, std::max(it->second->clock, t->clock));
    }
  }
  return h;
}

void SimFabric::Drop(InFlightFrame& f, bool lost) {
  lost ? ++frames_lost_ : ++frames_dropped_;
  f.in_flight->bytes.fetch_sub(f.frame.size(), std::memory_order_relaxed);
  f.in_flight->frames.fetch_sub(1, std::memory_order_release);
}

void SimFabric::Deliver(InFlightFrame& f, int64_t cycle) {
  Member* dst = FindMember(f.to);
  if (dst == nullptr || dst->failed) return Drop(f, false);
  ++frames_delivered_;
  dst->clock = std::max(dst->clock, cycle);
  ++dst->pending_dispatch;
  dst->module->Arrive(std::move(f.frame), std::move(f.in_flight));
  NoteKick(*dst);
}

void SimFabric::NoteKick(Member& m) {
  if (m.to_kick) return;
  m.to_kick = true;
  kick_.push_back(m.id);
}

void SimFabric::KickMembers(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<RuntimeId, SimMember*>> kicks;
  for (RuntimeId id : kick_) {
    Member* m = FindMember(id);
    if (m == nullptr) continue;
    m->to_kick = false;
    ++m->kicking;
    kicks.emplace_back(id, m->module);
  }
  kick_.clear();
  ++kicks_running_;
  lock.unlock();
  for (auto& [id, module] : kicks) module->Kick();
  lock.lock();
  --kicks_running_;
  for (auto& [id, module] : kicks) {
    if (Member* m = FindMember(id)) --m->kicking;
  }
  Activity();        // a thread that polls its runtime itself may now find the frames
  cv_.notify_all();  // a Leave may wait for the kicks
}

void SimFabric::WakeDriver() {
  // The driver waits with the lock held from its last look on; a stepping thread looks
  // again before it stops; callers step under `launch --sim` (StepOn).
  if (callers_step_ || stepping_) return;
  if (!kick_.empty() || (Work() && net_->now() < Horizon())) cv_.notify_all();
}

void SimFabric::HandleArrivals(const std::vector<SimArrival>& arrivals) {
  for (const SimArrival& a : arrivals) {
    auto it = frames_.find(a.user);
    if (it == frames_.end()) continue;
    auto f = std::make_unique<InFlightFrame>(std::move(it->second));
    frames_.erase(it);
    Channel& ch = channels_[{f->from, f->to}];
    const uint64_t seq = f->pair_seq;
    if (a.lost) {
      Drop(*f, true);
      f.reset();  // a gap the later frames need not wait for
    }
    ch.held[seq] = std::move(f);
    // Hand over every frame that now follows the last one delivered, in order.
    while (!ch.held.empty() && ch.held.begin()->first == ch.next_deliver) {
      if (ch.held.begin()->second) Deliver(*ch.held.begin()->second, a.cycle);
      ch.held.erase(ch.held.begin());
      ++ch.next_deliver;
    }
  }
}

void SimFabric::FailNode(int node, int64_t cycle) {
  const Status why = Status::Unavailable("sim: node " + std::to_string(node) + " failed at cycle " +
                                         std::to_string(cycle) + " (faults.events)");
  std::vector<RuntimeId> failed;
  for (auto& [id, m] : members_) {
    if (m->node != node || m->failed) continue;
    m->failed = true;
    m->clock = std::max(m->clock, cycle);
    m->module->Stopped(why);
    NoteKick(*m);
    failed.push_back(id);
  }
  // A node without a process changes nothing a runtime sees (the network handles its
  // messages); bumping the epochs would make every waiting thread look again, and a
  // launched process is only told to when something is handed to it.
  if (failed.empty()) return;
  FailMembers(failed, why);
}

void SimFabric::FailMembers(const std::vector<RuntimeId>& failed, const Status& why) {
  for (RuntimeId f : failed) {
    Member* dead = FindMember(f);
    for (auto& [id, m] : members_) {
      if (id == f) continue;
      // Its peers see a crashed process; it sees every peer gone (it can reach none).
      if (!m->failed) {
        m->module->PeerGone(f, /*orderly=*/false, why);
        NoteKick(*m);
      }
      dead->module->PeerGone(id, /*orderly=*/false, why);
      NoteKick(*dead);
    }
  }
  BumpEpochs();
}

void SimFabric::FailRuntime(RuntimeId rt, const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindMember(rt);
  if (m == nullptr || m->failed) return;
  m->failed = true;
  m->module->Stopped(why);
  NoteKick(*m);
  FailMembers({rt}, why);
  cv_.notify_all();
}

void SimFabric::StopRun(const Status& why) {
  status_ = why;
  Activity();
  for (auto& [id, m] : members_) {
    if (m->failed) continue;
    m->failed = true;
    m->module->Stopped(why);
    for (auto& [peer, other] : members_) {
      if (peer != id) m->module->PeerGone(peer, /*orderly=*/false, why);
    }
    NoteKick(*m);
  }
  cv_.notify_all();
}

std::string SimFabric::StallMessage(int64_t horizon) const {
  for (const auto& t : threads_) {
    if (Waits(*t)) continue;
    for (RuntimeId r : t->holds) {
      auto it = members_.find(r);
      if (it == members_.end() || std::max(it->second->clock, t->clock) != horizon) continue;
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t->last_wall)
                          .count();
      return "sim: process " + std::to_string(it->second->process) + " (runtime " + HexId(r) +
             ") made no runtime call for " + std::to_string(ms) +
             " ms of wall time while the simulation waited for it at cycle " +
             std::to_string(horizon) + " (sim.stall_ms = " + std::to_string(options_.stall_ms) +
             "); its last call: " + t->last_call;
    }
  }
  for (const auto& [id, m] : members_) {
    if (m->clock == horizon && (m->pending_dispatch > 0 || m->handlers > 0)) {
      return "sim: process " + std::to_string(m->process) + " (runtime " + HexId(id) +
             ") did not dispatch what was delivered to it for sim.stall_ms = " +
             std::to_string(options_.stall_ms) + " ms (" +
             (m->handlers > 0 ? "a threaded handler runs or waits outside the runtime"
                              : "no progress: call Runtime::Progress or use the progress thread") +
             ")";
    }
  }
  return "sim: the simulation waited sim.stall_ms = " + std::to_string(options_.stall_ms) + " ms";
}

bool SimFabric::EveryoneWaits() const {
  const bool running = std::any_of(members_.begin(), members_.end(),
                                   [](const auto& m) { return !m.second->failed; });
  return callers_step_ && running && joins_ >= expected_joins_ && kick_.empty() && !Work() &&
         Horizon() >= kInfinity;
}

std::string SimFabric::EveryoneWaitsMessage() const {
  std::vector<int> processes;
  for (const auto& [id, m] : members_) {
    if (!m->failed) processes.push_back(m->process);
  }
  std::sort(processes.begin(), processes.end());
  std::string waiting;
  for (int p : processes) waiting += (waiting.empty() ? "" : ", ") + std::to_string(p);
  return "sim: every process waits in the runtime (processes " + waiting +
         ") and nothing is in flight or due at cycle " + std::to_string(net_->now()) +
         ", unchanged for sim.stall_ms = " + std::to_string(options_.stall_ms) +
         " ms of wall time: the program cannot go on (" + std::to_string(frames_lost_) +
         " frames lost to faults so far; a program's own wall-clock timeout longer than "
         "sim.stall_ms would have ended the wait)";
}

Status SimFabric::Advance(std::unique_lock<std::mutex>& lock, int64_t horizon) {
  (void)lock;
  const int64_t now = net_->now();
  if (next_failure_ < failures_.size() && failures_[next_failure_].cycle <= now) {
    FailNode(failures_[next_failure_].node, failures_[next_failure_].cycle);
    ++next_failure_;
    return Status::Ok();
  }
  while (!ready_.empty() && std::get<0>(ready_.top()) <= now) {
    const uint64_t user = std::get<3>(ready_.top());
    ready_.pop();
    auto it = frames_.find(user);
    if (it == frames_.end()) continue;
    Member* dst = FindMember(it->second.to);
    const int dst_node = dst != nullptr ? dst->node : it->second.src_node;
    net_->Add(it->second.src_node, dst_node, static_cast<int64_t>(it->second.frame.size()), now,
              user);
  }
  if (!net_->Busy()) {
    int64_t next = horizon;
    if (!ready_.empty()) next = std::min(next, std::get<0>(ready_.top()));
    if (next_failure_ < failures_.size()) next = std::min(next, failures_[next_failure_].cycle);
    if (next >= kInfinity) return Status::Ok();
    return net_->Skip(next);
  }
  arrivals_.clear();
  UKAI_RETURN_IF_ERROR(net_->Step(&arrivals_));
  HandleArrivals(arrivals_);
  return Status::Ok();
}

bool SimFabric::Work() const {
  // Nothing happens before every expected process joined (the first one, in one process),
  // nor once no running process is left (the others left or their nodes failed: nothing
  // can observe the network any more, and what is in flight could only be lost): the
  // machine's time is its processes'.
  const bool running = std::any_of(members_.begin(), members_.end(),
                                   [](const auto& m) { return !m.second->failed; });
  return running && joins_ >= expected_joins_ &&
         (net_->Busy() || !ready_.empty() || next_failure_ < failures_.size());
}

void SimFabric::Step(std::unique_lock<std::mutex>& lock) {
  uint64_t steps = 0;
  for (;;) {
    // Frames and peer events handed to members are dispatched before anything else (a
    // Leave may note more while the lock is released for the kicks).
    while (!kick_.empty()) KickMembers(lock);
    if (stop_ || !status_.ok()) return;
    const int64_t horizon = Horizon();
    if (net_->now() >= horizon || !Work()) return;
    Status st = Advance(lock, horizon);
    if (!st.ok()) StopRun(st);
    if ((++steps & 63) == 0) {  // let senders and leavers in (std::mutex is not fair)
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
  }
}

void SimFabric::StepOn() {
  std::unique_lock<std::mutex> lock(mu_);
  if (stepping_ || stop_) return;  // the stepping thread looks again before it stops
  stepping_ = true;
  Step(lock);
  stepping_ = false;
}

void SimFabric::SetSteppedByCallers() {
  std::lock_guard<std::mutex> lock(mu_);
  callers_step_ = true;
  cv_.notify_all();  // the driver moves to its own condition variable
}

void SimFabric::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  auto progressed = std::chrono::steady_clock::now();
  int64_t last_now = -1;
  uint64_t last_seq = 0;
  auto waiting_since = progressed;  // EveryoneWaits() held since, with these counts
  std::tuple<int64_t, uint64_t, uint64_t> waited_counts{-1, 0, 0};
  while (!stop_) {
    if (!stepping_) {
      stepping_ = true;
      Step(lock);
      stepping_ = false;
      if (stop_) break;
    }
    // Callers step (the launcher's readers): look every 10 ms. Else every call that may
    // let the machine move on wakes this thread (cv_).
    std::condition_variable& cv = callers_step_ ? driver_cv_ : cv_;
    if (!status_.ok()) {
      // The run stopped: only the members' last events are left to hand over.
      if (callers_step_) {
        cv.wait_for(lock, std::chrono::milliseconds(1));
      } else {
        cv.wait(lock, [&] { return stop_ || !kick_.empty(); });
      }
      continue;
    }
    const int64_t now = net_->now();
    if (now != last_now || seq_ != last_seq || !Work() || Horizon() >= kInfinity) {
      last_now = now;
      last_seq = seq_;
      progressed = std::chrono::steady_clock::now();
    }
    // When callers step, this look is only the stall check's (and a safety net): every
    // 10 ms, not every millisecond (a wake-up of this thread costs the callers a core).
    cv.wait_for(lock, std::chrono::milliseconds(callers_step_ ? 10 : 1));
    if (stop_ || stepping_ || !status_.ok()) continue;
    const int64_t horizon = Horizon();
    // The simulation waits (the horizon holds it, something is left to simulate) and has
    // waited too long.
    const auto wall = std::chrono::steady_clock::now();
    const auto stall = std::chrono::milliseconds(options_.stall_ms);
    if (Work() && horizon < kInfinity && net_->now() >= horizon && net_->now() == last_now &&
        seq_ == last_seq && wall - progressed > stall) {
      StopRun(Status::Unavailable(StallMessage(horizon)));
      continue;
    }
    // Every launched process waits for something that cannot come (a frame lost to a
    // fault, a peer that never sends): stop instead of hanging the job.
    const std::tuple<int64_t, uint64_t, uint64_t> counts{net_->now(), frames_sent_,
                                                         frames_delivered_};
    if (!EveryoneWaits() || counts != waited_counts) {
      waiting_since = wall;
      waited_counts = counts;
    } else if (wall - waiting_since > stall) {
      StopRun(Status::Unavailable(EveryoneWaitsMessage()));
    }
  }
}

// ---- figures ----

Status SimFabric::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool SimFabric::Quiet() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!frames_.empty() || net_->Busy()) return false;
  for (const auto& [pair, ch] : channels_) {
    if (!ch.held.empty()) return false;
  }
  return std::none_of(members_.begin(), members_.end(), [](const auto& m) {
    return m.second->pending_dispatch > 0 || m.second->handlers > 0;
  });
}

int64_t SimFabric::network_cycle() {
  std::lock_guard<std::mutex> lock(mu_);
  return net_->now();
}

std::vector<SimProcessTimes> SimFabric::Processes() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SimProcessTimes> out = departed_;
  for (const auto& [id, m] : members_)
    out.push_back({m->process, m->node, id, m->clock, m->failed});
  std::sort(out.begin(), out.end(), [](const SimProcessTimes& a, const SimProcessTimes& b) {
    return a.process < b.process;
  });
  return out;
}

std::map<std::string, uint64_t> SimFabric::Counters() {
  std::lock_guard<std::mutex> lock(mu_);
  return {{"frames_sent", frames_sent_},       {"frames_delivered", frames_delivered_},
          {"frames_lost", frames_lost_},       {"frames_dropped", frames_dropped_},
          {"late_frames", late_frames_},       {"bytes_sent", bytes_sent_},
          {"frames_refused", frames_refused_}, {"network_cycle", uint64_t(net_->now())}};
}

}  // namespace ukai::rt
