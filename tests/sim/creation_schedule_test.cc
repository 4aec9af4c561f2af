// CreationSchedule against a plain heap ordered by (cycle, node): same nodes, same order,
// same Next(), with gaps both inside and far beyond the timing wheel, and clock jumps.
#include "sim/engine/creation_schedule.h"

#include <gtest/gtest.h>

#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "core/rng.h"

namespace ukai::sim {
namespace {

TEST(CreationScheduleTest, MatchesHeapOrder) {
  using Event = std::pair<int64_t, int32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap;
  CreationSchedule schedule;
  Rng rng = Rng::Stream(42, 0);
  const int kNodes = 300;
  auto gap = [&rng]() -> int64_t {
    switch (rng.Uniform(4)) {
      case 0:
        return 1 + static_cast<int64_t>(rng.Uniform(3));  // same or next buckets
      case 1:
        return 1 + static_cast<int64_t>(rng.Uniform(1023));  // within the wheel
      case 2:
        return 1000 + static_cast<int64_t>(rng.Uniform(50));  // around its edge
      default:
        return 1 + static_cast<int64_t>(rng.Uniform(100000));  // far beyond
    }
  };
  int64_t now = 0;
  for (int32_t n = 0; n < kNodes; ++n) {
    const int64_t t = gap() - 1;
    heap.emplace(t, n);
    schedule.Push(t, n, now);
  }
  std::vector<int32_t> due;
  int64_t popped = 0;
  while (popped < 200000) {
    ASSERT_FALSE(schedule.empty());
    // Jump like SkipIdle: straight to the next event (sometimes), else one cycle on.
    const int64_t next = schedule.Next(now);
    ASSERT_EQ(next, heap.top().first) << "at cycle " << now;
    if (rng.Uniform(2) == 0) now = next;
    schedule.PopDue(now, &due);
    std::vector<int32_t> want;
    while (!heap.empty() && heap.top().first <= now) {
      ASSERT_EQ(heap.top().first, now) << "an event was skipped";
      want.push_back(heap.top().second);
      heap.pop();
    }
    ASSERT_EQ(due, want) << "at cycle " << now;
    for (int32_t n : due) {
      const int64_t t = now + gap();
      heap.emplace(t, n);
      schedule.Push(t, n, now);
      ++popped;
    }
    ++now;
  }
}

}  // namespace
}  // namespace ukai::sim
