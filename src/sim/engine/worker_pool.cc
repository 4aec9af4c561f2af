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

// A waiter spins (pause instructions) for up to kSpinNs of time, then yields the core
// kYields times, then sleeps on a futex. Sleeping is what a hand-off must avoid while every
// thread has a core: on the development VM a futex wake-up costs 4-10 us and more (the
// syscall, the other vCPU's wake-up through the hypervisor), about a whole cycle of a 10x10
// torus, and a thread whose partner sleeps waits that long itself. kSpinNs is longer than
// a wake-up plus a cycle's work, so a pair that fell asleep (another process took a core
// for a while) is spinning again one cycle after it has its cores back. (The earlier
// budget, halved after every wait that had to yield, stayed at its minimum once waits
// were long, and from then on every hand-off slept.) It is not longer, because under load
// the thread waited for is often not running, and the spinning only burns the core it
// could use. With more threads than cores a waiter spins kOversubscribedSpinNs only.
constexpr int64_t kSpinNs = 50'000;
constexpr int64_t kOversubscribedSpinNs = 2'000;
constexpr int kYields = 50;
// Pauses between two looks at the clock (a pause is 20-80 ns on the development VM).
constexpr int kPausesPerClockRead = 16;

}  // namespace

WorkerPool::WorkerPool(int threads)
    : size_(threads < 1 ? 1 : threads),
      spin_ns_(size_ <= CoresOfThisProcess() ? kSpinNs : kOversubscribedSpinNs) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { Worker(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::WaitChange(const std::atomic<uint32_t>& word, uint32_t seen) const {
  if (word.load(std::memory_order_acquire) != seen) return;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point limit = Clock::now() + std::chrono::nanoseconds(spin_ns_);
  do {
    for (int i = 0; i < kPausesPerClockRead; ++i) {
      if (word.load(std::memory_order_acquire) != seen) return;
      Pause();
    }
  } while (Clock::now() < limit);
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
  WaitChange(done_gen_, done);
}

void WorkerPool::Barrier() {
  if (size_ == 1) return;
  const uint32_t gen = barrier_gen_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(size_)) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_gen_.fetch_add(1, std::memory_order_release);
    barrier_gen_.notify_all();
    return;
  }
  WaitChange(barrier_gen_, gen);
}

void WorkerPool::Worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    WaitChange(generation_, seen);
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
