#include "sim/engine/worker_pool.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "sim/engine/partition.h"

namespace ukai::sim {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A waiter spins (pause instructions) for up to its budget of time, then yields the core
// kYields times, then sleeps on a futex. Sleeping is what a hand-off must avoid while every
// thread has a core: on the development VM a futex wake-up costs 4-10 us and more (the
// syscall, the other vCPU's wake-up through the hypervisor), about a whole cycle of a 10x10
// torus, and a thread whose partner sleeps waits that long itself. The full budget,
// kSpinNs, is longer than a wake-up plus a cycle's work. After a wait that had to yield
// the budget drops to kShortSpinNs (under load the thread waited for is often not running,
// and spinning only burns the core it could use), but every kProbeEvery-th wait spins the
// full budget again, and a wait that ends within it restores it: so a pair that fell
// asleep (another process took a core for a while) is spinning again soon after it has its
// cores back. (The earlier budget, halved after every failed wait and doubled only after a
// wait shorter than itself, stayed at its minimum once waits were long, and from then on
// every hand-off slept.) With more threads than cores the budget is kShortSpinNs always.
constexpr int64_t kSpinNs = 50'000;
constexpr int64_t kShortSpinNs = 2'000;
constexpr uint32_t kProbeEvery = 64;
constexpr int kYields = 50;
// Pauses between two looks at the clock (a pause is 20-80 ns on the development VM).
constexpr int kPausesPerClockRead = 16;

}  // namespace

WorkerPool::WorkerPool(int threads)
    : size_(threads < 1 ? 1 : threads),
      full_ns_(size_ <= CoresOfThisProcess() ? kSpinNs : kShortSpinNs),
      budgets_(static_cast<size_t>(size_), Budget{full_ns_, 0}) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { Worker(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::WaitChange(const std::atomic<uint32_t>& word, uint32_t seen, Budget* b) const {
  if (word.load(std::memory_order_acquire) != seen) return;
  using Clock = std::chrono::steady_clock;
  const int64_t spin = ++b->waits % kProbeEvery == 0 ? full_ns_ : b->spin_ns;
  const Clock::time_point limit = Clock::now() + std::chrono::nanoseconds(spin);
  do {
    for (int i = 0; i < kPausesPerClockRead; ++i) {
      if (word.load(std::memory_order_acquire) != seen) {
        if (spin == full_ns_) b->spin_ns = full_ns_;
        return;
      }
      Pause();
    }
  } while (Clock::now() < limit);
  b->spin_ns = std::min(full_ns_, kShortSpinNs);
  for (int i = 0; i < kYields; ++i) {
    if (word.load(std::memory_order_acquire) != seen) return;
    sched_yield();
  }
  while (word.load(std::memory_order_acquire) == seen) word.wait(seen, std::memory_order_acquire);
}

void WorkerPool::Run(const std::function<void(int)>& job) {
  if (size_ == 1) {
    job(0);
    return;
  }
  job_ = &job;
  const uint32_t done = done_gen_.load(std::memory_order_relaxed);
  pending_.store(static_cast<uint32_t>(size_ - 1), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  job(0);
  WaitChange(done_gen_, done, &budgets_[0]);
}

void WorkerPool::Barrier(int index) {
  if (size_ == 1) return;
  const uint32_t gen = barrier_gen_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(size_)) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_gen_.fetch_add(1, std::memory_order_release);
    barrier_gen_.notify_all();
    return;
  }
  WaitChange(barrier_gen_, gen, &budgets_[static_cast<size_t>(index)]);
}

void WorkerPool::Worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    WaitChange(generation_, seen, &budgets_[static_cast<size_t>(index)]);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    (*job_)(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      done_gen_.fetch_add(1, std::memory_order_release);
      done_gen_.notify_all();
    }
  }
}

}  // namespace ukai::sim
