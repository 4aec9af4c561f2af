#include "sim/engine/worker_pool.h"

#include <sched.h>

#include <chrono>

#include "sim/engine/partition.h"

namespace ukai::sim {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How long a waiting thread spins before it yields or sleeps: longer than a cycle of a
// small network plus a wake-up on the development VM (4-10 us), so that while both threads
// have cores no wait ever sleeps; with more threads than cores, only 2 us (the thread
// waited for needs the core).
constexpr int64_t kSpinNs = 50'000;
constexpr int64_t kShortSpinNs = 2'000;
// The calling thread yields this many times before it sleeps (a worker holding a task
// may have lost its core).
constexpr int kYields = 50;
// Pauses between two looks at the clock (a pause is 20-80 ns on the development VM).
constexpr int kPausesPerClockRead = 16;

// Spins until `done()` or `ns` nanoseconds have passed; returns done().
template <typename Done>
bool Spin(int64_t ns, Done done) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point limit = Clock::now() + std::chrono::nanoseconds(ns);
  do {
    for (int i = 0; i < kPausesPerClockRead; ++i) {
      if (done()) return true;
      Pause();
    }
  } while (Clock::now() < limit);
  return done();
}

}  // namespace

WorkerPool::WorkerPool(int threads)
    : size_(threads < 1 ? 1 : threads),
      spin_ns_(size_ <= CoresOfThisProcess() ? kSpinNs : kShortSpinNs),
      slots_(static_cast<size_t>(size_ * kMaxPhases)),
      last_wake_(0u - kWakeEvery) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { Worker(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_seq_cst);
  state_.store(Pack(run_ + 1, false, 1, 0), std::memory_order_seq_cst);
  workers_event_.fetch_add(1, std::memory_order_seq_cst);
  workers_event_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Run(int phases, const Task& task, const After* after) {
  if (size_ == 1) {
    for (int p = 0; p < phases; ++p) {
      task(p, 0);
      if (after != nullptr && p + 1 < phases) (*after)(p);
    }
    return;
  }
  task_ = &task;
  finished_.store(0, std::memory_order_relaxed);
  const uint32_t run = ++run_;
  uint64_t s = Pack(run, after != nullptr, phases, 0);
  state_.store(s, std::memory_order_seq_cst);
  if (workers_asleep_.load(std::memory_order_seq_cst) != 0 && run - last_wake_ >= kWakeEvery) {
    last_wake_ = run;
    workers_event_.fetch_add(1, std::memory_order_seq_cst);
    workers_event_.notify_all();
  }
  for (int p = 0; p < phases; ++p) {
    if (p > 0) {
      s = Pack(run, after != nullptr, phases, p);
      // Without `after`, the thread that finished phase p - 1 opened p (Finish()).
      if (after != nullptr) state_.store(s, std::memory_order_seq_cst);
    }
    Work(0, s);
    WaitFinished(static_cast<uint32_t>((p + 1) * size_));
    if (after != nullptr && p + 1 < phases) (*after)(p);
  }
}

bool WorkerPool::TryClaim(int slot, uint32_t run) {
  std::atomic<uint32_t>& a = slots_[static_cast<size_t>(slot)].run;
  uint32_t v = a.load(std::memory_order_relaxed);
  // Claimed in this run already (or, seen by a thread late for its run, in a later one).
  if (static_cast<int32_t>(run - v) <= 0) return false;
  return a.compare_exchange_strong(v, run, std::memory_order_acq_rel, std::memory_order_relaxed);
}

void WorkerPool::Work(int index, uint64_t s) {
  const uint32_t run = RunOf(s);
  const int phase = OpenOf(s);
  for (int k = 0; k < size_; ++k) {
    const int i = index + k < size_ ? index + k : index + k - size_;
    if (!TryClaim(phase * size_ + i, run)) continue;
    (*task_)(phase, i);
    if (i != index) stolen_.fetch_add(1, std::memory_order_relaxed);
    Finish(s, phase);
  }
}

void WorkerPool::Finish(uint64_t s, int phase) {
  const uint32_t f = finished_.fetch_add(1, std::memory_order_seq_cst) + 1;
  if (f != static_cast<uint32_t>((phase + 1) * size_)) return;
  if (phase + 1 < PhasesOf(s) && !AfterOf(s)) {
    // Opens the next phase unless the run has moved on (this thread may have been
    // descheduled since its increment; the caller goes on without this store).
    uint64_t expected = s;
    state_.compare_exchange_strong(expected, Pack(RunOf(s), false, PhasesOf(s), phase + 1),
                                   std::memory_order_seq_cst);
  }
  if (caller_asleep_.load(std::memory_order_seq_cst) != 0) {
    caller_event_.fetch_add(1, std::memory_order_seq_cst);
    caller_event_.notify_all();
  }
}

void WorkerPool::WaitFinished(uint32_t count) {
  auto done = [&] { return finished_.load(std::memory_order_acquire) >= count; };
  if (done() || Spin(spin_ns_, done)) return;
  for (int i = 0; i < kYields; ++i) {
    if (done()) return;
    sched_yield();
  }
  caller_asleep_.store(1, std::memory_order_seq_cst);
  for (;;) {
    const uint32_t seen = caller_event_.load(std::memory_order_seq_cst);
    if (finished_.load(std::memory_order_seq_cst) >= count) break;
    caller_event_.wait(seen, std::memory_order_seq_cst);
  }
  caller_asleep_.store(0, std::memory_order_relaxed);
}

bool WorkerPool::WaitState(uint64_t s) {
  auto changed = [&] { return state_.load(std::memory_order_acquire) != s; };
  if (!Spin(spin_ns_, changed)) {
    workers_asleep_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      const uint32_t seen = workers_event_.load(std::memory_order_seq_cst);
      if (stop_.load(std::memory_order_seq_cst)) break;
      // A new run wakes sleeping workers only every kWakeEvery runs (Run()).
      if (state_.load(std::memory_order_seq_cst) != s) break;
      workers_event_.wait(seen, std::memory_order_seq_cst);
    }
    workers_asleep_.fetch_sub(1, std::memory_order_seq_cst);
  }
  return !stop_.load(std::memory_order_acquire);
}

void WorkerPool::Worker(int index) {
  uint64_t s = 0;  // the state this worker last acted on
  while (WaitState(s)) {
    s = state_.load(std::memory_order_acquire);
    Work(index, s);
  }
}

}  // namespace ukai::sim
