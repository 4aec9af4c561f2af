#include "sim/engine/worker_pool.h"

#include <sched.h>

namespace ukai::sim {
namespace {

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spin this many pauses (a few microseconds), then yield this many times, then sleep.
constexpr int kSpins = 2000;
constexpr int kYields = 50;

}  // namespace

WorkerPool::WorkerPool(int threads) : size_(threads < 1 ? 1 : threads) {
  for (int i = 1; i < size_; ++i) threads_.emplace_back([this, i] { Worker(i); });
}

WorkerPool::~WorkerPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::WaitChange(const std::atomic<uint32_t>& word, uint32_t seen) {
  for (int i = 0; i < kSpins; ++i) {
    if (word.load(std::memory_order_acquire) != seen) return;
    Pause();
  }
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
