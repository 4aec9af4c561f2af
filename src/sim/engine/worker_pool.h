// WorkerPool: the threads that evaluate a Network's partitions (network.h). Run() runs one
// simulated cycle as `phases` phases of size() tasks each (evaluate every partition, then
// commit every partition): task(phase, i) for every i in [0, size()), each exactly once,
// by whichever thread claims it first. Thread t (0: the calling thread) tries task t
// first, then takes the tasks no one has started (work stealing). Phase p + 1 opens once
// every task of phase p has finished (and, when `after` is given, after(p) has run on the
// calling thread: the MPI exchange); Run() returns when every task has finished.
//
// Why tasks and not one job per thread: a simulated cycle of a small network lasts a few
// microseconds, less than a futex wake-up on the development VM (4-10 us). With one job per
// thread, a hand-off to a worker that had gone to sleep (or lost its core to another
// process) cost that wake-up every cycle, so a 2-thread run of a 10x10 torus was slower
// than the serial one. Here the calling thread never waits for a worker to wake up: it
// does the tasks nobody took, and a worker joins in whenever it is running. The calling
// thread waits only for a task some running thread has started.
//
// Waiting: a worker spins (pause instruction) for the next run or phase up to 50 us (2 us
// with more threads than cores), then sleeps; Run() wakes sleeping workers at most every
// kWakeEvery runs (a wake-up costs the caller a system call). The calling thread spins for
// a started task, then yields, then sleeps until the task's thread wakes it.
//
// The results do not depend on which thread runs a task: a task touches only its
// partition's state (its Fabric and MessagePool lane, its Part), and the release-acquire
// chain through the claim and completion counters orders every task after what ran before
// it on other threads.
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
  using Task = std::function<void(int phase, int index)>;
  using After = std::function<void(int phase)>;

  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }
  // `phases` in [1, kMaxPhases]; `after` may be null.
  void Run(int phases, const Task& task, const After* after = nullptr);

  // For tests: tasks run by a thread other than the one of their index so far, and the
  // workers asleep now.
  int64_t stolen() const { return stolen_.load(std::memory_order_relaxed); }
  int asleep() const { return static_cast<int>(workers_asleep_.load(std::memory_order_relaxed)); }

  static constexpr int kMaxPhases = 8;
  static constexpr uint32_t kWakeEvery = 16;

 private:
  // A claim slot per task: the number of the last run that claimed it.
  struct alignas(64) Slot {
    std::atomic<uint32_t> run{0};
  };
  // The published run: its number (high 32 bits), whether the caller opens the phases
  // (bit 31: an `after` was given), its phase count (bits 16-30) and its open phase (low
  // 16 bits).
  static uint64_t Pack(uint32_t run, bool after, int phases, int open) {
    return uint64_t{run} << 32 | uint64_t{after} << 31 | uint64_t(phases) << 16 |
           static_cast<uint64_t>(open);
  }
  static uint32_t RunOf(uint64_t s) { return static_cast<uint32_t>(s >> 32); }
  static bool AfterOf(uint64_t s) { return (s >> 31 & 1) != 0; }
  static int PhasesOf(uint64_t s) { return static_cast<int>(s >> 16 & 0x7fff); }
  static int OpenOf(uint64_t s) { return static_cast<int>(s & 0xffff); }

  // Claims and runs the tasks of the open phase of `s` that are still free, task `index`
  // first (none when the run is no longer `s`'s).
  void Work(int index, uint64_t s);
  bool TryClaim(int slot, uint32_t run);
  void Finish(uint64_t s, int phase);
  // The calling thread: until `finished_` reaches `count` (spin, yield, sleep).
  void WaitFinished(uint32_t count);
  // A worker: until the published state differs from `s` (spin, then sleep); false on stop.
  bool WaitState(uint64_t s);
  void Worker(int index);

  const int size_;
  const int64_t spin_ns_;  // a worker's spin before it sleeps
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  const Task* task_ = nullptr;  // the running Run()'s (read after a successful claim)
  uint32_t run_ = 0;            // the calling thread's count of runs
  uint32_t last_wake_ = 0;      // the run that last woke the workers
  alignas(64) std::atomic<uint64_t> state_{0};
  alignas(64) std::atomic<uint32_t> finished_{0};  // tasks of this run finished
  alignas(64) std::atomic<uint32_t> caller_asleep_{0};
  std::atomic<uint32_t> caller_event_{0};  // futex word of the sleeping caller
  alignas(64) std::atomic<uint32_t> workers_asleep_{0};
  std::atomic<uint32_t> workers_event_{0};  // futex word of the sleeping workers
  std::atomic<int64_t> stolen_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_WORKER_POOL_H_
