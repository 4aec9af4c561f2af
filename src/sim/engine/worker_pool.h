// WorkerPool: the threads that evaluate a Network's partitions (network.h). Run(job) calls
// job(i) for every thread index i in [0, size()) — index 0 on the calling thread — and
// returns when all have finished; Barrier(), called by every job of a Run() once, holds
// each until all have reached it (the two-phase cycle: evaluate, barrier, commit).
//
// A simulated cycle lasts microseconds, so the hand-offs spin first (with a pause
// instruction, up to 50 us while the waits end within that, 2 us after one that did not,
// worker_pool.cc says why), then yield the core, and only then sleep on a futex
// (std::atomic::wait): while the threads have cores a hand-off costs well under a
// microsecond and never sleeps; with more threads than cores a waiting thread soon (2 us)
// gives its core to the one it waits for.
//
// Ownership: owns its threads (joined by the destructor). Thread safety: Run() from one
// thread at a time.
#ifndef UKAI_SIM_ENGINE_WORKER_POOL_H_
#define UKAI_SIM_ENGINE_WORKER_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace ukai::sim {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }
  void Run(const std::function<void(int)>& job);
  // Called by job(index), every job of a Run() the same number of times.
  void Barrier(int index);

 private:
  // A thread's spin budget (worker_pool.cc): how long its next wait spins before it
  // yields, and its waits so far.
  struct alignas(64) Budget {
    int64_t spin_ns;
    uint32_t waits;
  };
  // Waits until `word` differs from `seen`: spins, yields, sleeps; `b`: the waiting
  // thread's budget.
  void WaitChange(const std::atomic<uint32_t>& word, uint32_t seen, Budget* b) const;
  void Worker(int index);

  const int size_;
  const int64_t full_ns_;        // the full spin budget (worker_pool.cc)
  std::vector<Budget> budgets_;  // per thread index (each touched by its own thread only)
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};  // a new Run()
  alignas(64) std::atomic<uint32_t> pending_{0};     // jobs of this Run() not finished
  alignas(64) std::atomic<uint32_t> done_gen_{0};    // bumped when pending_ reaches 0
  alignas(64) std::atomic<uint32_t> barrier_count_{0};
  alignas(64) std::atomic<uint32_t> barrier_gen_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_WORKER_POOL_H_
