#include "sim/engine/worker_pool.h"

#include <sched.h>

#include <algorithm>

namespace ukai::sim {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A waiter spins at most this many pauses, then yields this many times, then sleeps. The
// spin budget adapts per thread: it doubles (up to kMaxSpins, about a millisecond) while
// the waits end during the spin (the other threads are running: a hand-off costs well
// under a microsecond, and a thread that never gives its core away keeps it on a busy
// machine) and halves when a wait had to yield (more threads than cores: spinning would
// only delay the thread being waited for).
constexpr int kMinSpins = 64;
constexpr int kMaxSpins = 1 << 17;
constexpr int kYields = 50;

}  // namespace

WorkerPool::WorkerPool(int threads)
    : size_(threads < 1 ? 1 : threads), spins_(static_cast<size_t>(size_), Budget{kMinSpins * 16}) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { Worker(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::WaitChange(const std::atomic<uint32_t>& word, uint32_t seen, int* spins) {
  for (int i = 0; i < *spins; ++i) {
    if (word.load(std::memory_order_acquire) != seen) {
      *spins = std::min(kMaxSpins, *spins * 2);
      return;
    }
    Pause();
  }
  *spins = std::max(kMinSpins, *spins / 2);
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
  WaitChange(done_gen_, done, &spins_[0].spins);
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
  WaitChange(barrier_gen_, gen, &spins_[static_cast<size_t>(index)].spins);
}

void WorkerPool::Worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    WaitChange(generation_, seen, &spins_[static_cast<size_t>(index)].spins);
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
