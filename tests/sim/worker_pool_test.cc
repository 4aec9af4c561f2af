// WorkerPool (engine/worker_pool.h): every task of every phase runs exactly once per run,
// the phases in order with `after` between them on the calling thread, and the calling
// thread runs the tasks of workers that are asleep (the stealing path) instead of waiting
// for them.
#include "sim/engine/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ukai::sim {
namespace {

// Waits (up to 10 s) until every worker of `pool` sleeps, then 200 ms more so that each is
// inside its futex wait, not just counted.
bool WaitUntilAsleep(const WorkerPool& pool) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.asleep() != pool.size() - 1) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return pool.asleep() == pool.size() - 1;
}

TEST(WorkerPoolTest, EveryTaskOncePerRunPhasesInOrder) {
  constexpr int kThreads = 3, kPhases = 3, kRuns = 3000;
  WorkerPool pool(kThreads);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::atomic<int>> runs(kThreads * kPhases);
  std::atomic<int> started[kPhases], finished[kPhases];
  std::atomic<int> order_errors{0};
  int afters = 0, after_errors = 0;
  const WorkerPool::Task task = [&](int phase, int i) {
    started[phase].fetch_add(1);
    // Every task of the phase before has finished; none of the next has started.
    if (phase > 0 && finished[phase - 1].load() != kThreads) order_errors.fetch_add(1);
    if (phase + 1 < kPhases && started[phase + 1].load() != 0) order_errors.fetch_add(1);
    runs[static_cast<size_t>(phase * kThreads + i)].fetch_add(1);
    finished[phase].fetch_add(1);
  };
  const WorkerPool::After after = [&](int phase) {
    ++afters;
    if (std::this_thread::get_id() != caller || finished[phase].load() != kThreads ||
        started[phase + 1].load() != 0) {
      ++after_errors;
    }
  };
  for (int r = 0; r < kRuns; ++r) {
    for (int p = 0; p < kPhases; ++p) started[p] = finished[p] = 0;
    pool.Run(kPhases, task, r % 2 == 0 ? &after : nullptr);
    for (int p = 0; p < kPhases; ++p) ASSERT_EQ(finished[p].load(), kThreads) << "run " << r;
  }
  for (const std::atomic<int>& n : runs) EXPECT_EQ(n.load(), kRuns);
  EXPECT_EQ(order_errors.load(), 0);
  EXPECT_EQ(afters, kRuns / 2 * (kPhases - 1));
  EXPECT_EQ(after_errors, 0);
}

// With its worker asleep, the caller runs every task itself: Run() wakes sleeping workers
// at most every kWakeEvery runs, and the run after a wake-up is the 1st of such a span.
TEST(WorkerPoolTest, CallerRunsTheTasksOfSleepingWorkers) {
  WorkerPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  const WorkerPool::Task task = [&](int, int) {
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  };
  ASSERT_TRUE(WaitUntilAsleep(pool));
  pool.Run(2, task);  // the 1st run: wakes the worker
  ASSERT_TRUE(WaitUntilAsleep(pool));
  elsewhere = 0;
  const int64_t stolen = pool.stolen();
  constexpr int kRuns = 5;  // < kWakeEvery: no wake-up
  static_assert(kRuns + 1 < WorkerPool::kWakeEvery);
  for (int r = 0; r < kRuns; ++r) pool.Run(2, task);
  EXPECT_EQ(elsewhere.load(), 0);
  EXPECT_EQ(pool.stolen() - stolen, 2 * kRuns);  // task 1 of both phases, every run
  EXPECT_EQ(pool.asleep(), 1);
}

// The destructor ends workers that sleep and workers that spin.
TEST(WorkerPoolTest, DestroysWithWorkersAsleepOrSpinning) {
  {
    WorkerPool pool(3);
    ASSERT_TRUE(WaitUntilAsleep(pool));
  }
  {
    WorkerPool pool(3);
    pool.Run(1, [](int, int) {});
  }
  WorkerPool one(1);
  int n = 0;
  one.Run(2, [&](int, int i) { n += 1 + i; });
  EXPECT_EQ(n, 2);
}

}  // namespace
}  // namespace ukai::sim
