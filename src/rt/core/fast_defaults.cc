// Fast defaults: the progress thread steps aside while a program thread drives progress
// (Runtime::Progress() in its own wait loop), so that one thread per process polls instead
// of two fighting for the cores; pollers yield the core now and then while idle; processes
// started by `ukai launch` are pinned one per core. docs/runtime.md, "Fast by default".
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rt/core/runtime_impl.h"

namespace ukai::rt::internal {
namespace {

// How long the progress thread sleeps at a time while a program thread drives progress;
// it resumes polling within this time once the program stopped calling Progress().
constexpr auto kStepAside = std::chrono::microseconds(500);
// Idle spinning passes between two sched_yield() calls of the progress thread.
constexpr unsigned kSpinsPerYield = 64;
// A program thread polling Progress() in a job that does not oversubscribe this host yields
// only once it has found nothing for this long: a yield costs ~2.5 us on this VM (more
// when another session's process takes the core), so yielding every 64 idle polls (each
// ~0.1 us) added ~40 ns to every idle poll and to the detection of every message, while
// the processes it would let run have cores of their own.
constexpr auto kIdleBeforeYield = std::chrono::microseconds(50);

}  // namespace

int PinCpu(std::string_view pin, std::string_view bootstrap, int rank, int size,
           const std::vector<int>& allowed) {
  if (pin == "off" || rank < 0 || allowed.empty()) return -1;
  const bool launched = bootstrap == "launcher";
  if (pin == "auto" && (!launched || size > static_cast<int>(allowed.size()))) return -1;
  return allowed[static_cast<size_t>(rank) % allowed.size()];
}

Status RuntimeImpl::ApplyPinning() {
  const std::string& pin = options_.pin;
  if (pin != "auto" && pin != "core" && pin != "off") {
    return Status::InvalidArgument("pin: expected auto, core or off, got '" + pin + "'");
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return Status::Ok();  // leave it alone
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) allowed.push_back(c);
  }
  const int cpu = PinCpu(pin, bootstrap_->name(), rank(), size(), allowed);
  if (cpu < 0) return Status::Ok();
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // The calling thread; the progress and handler threads created afterwards inherit it.
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return Status::IoError("pin: sched_setaffinity to cpu " + std::to_string(cpu) + " failed");
  }
  Trace("pinned rank " + std::to_string(rank()) + " to cpu " + std::to_string(cpu));
  return Status::Ok();
}

void RuntimeImpl::NoteCallerProgress() {
  if (!options_.progress_thread || InOwnProgressPass()) return;
  // Any change is what counts: a plain load + store (no read-modify-write) suffices.
  caller_calls_.store(caller_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

bool RuntimeImpl::StepAsideForCallers() {
  uint64_t seen = caller_calls_.load(std::memory_order_relaxed);
  if (seen == caller_seen_) return false;
  LeaveProgress();
  do {
    caller_seen_ = seen;
    std::this_thread::sleep_for(kStepAside);
    seen = caller_calls_.load(std::memory_order_relaxed);
  } while (seen != caller_seen_ && !stop_.load(std::memory_order_relaxed));
  while (!TryEnterProgress()) std::this_thread::yield();
  return true;
}

bool Oversubscribed(bool one_host, int size) {
  // The host's online CPUs, as the collectives' groups count them (coll/group.cc), not the
  // affinity mask: mpirun --bind-to core leaves each process one CPU of its own.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus <= 0) return true;  // unknown: yield as a loaded host needs
  return one_host && size > cpus;
}

int RuntimeImpl::CallerIdle(int n) {
  thread_local unsigned idle_calls = 0;
  thread_local std::chrono::steady_clock::time_point idle_since;
  if (n != 0) {
    idle_calls = 0;
    return n;
  }
  if (++idle_calls % kSpinsPerYield != 0) return n;
  if (oversubscribed_) {  // our own processes share cores: let them run within microseconds
    sched_yield();
    return n;
  }
  const auto now = std::chrono::steady_clock::now();
  if (idle_calls == kSpinsPerYield) {
    idle_since = now;  // the first look in this idle stretch
  } else if (now - idle_since >= kIdleBeforeYield) {
    sched_yield();
  }
  return n;
}

void RuntimeImpl::YieldWhileSpinning() {
  if (++idle_spins_ % kSpinsPerYield == 0) sched_yield();
}

}  // namespace ukai::rt::internal
