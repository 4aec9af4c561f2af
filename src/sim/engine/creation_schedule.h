// CreationSchedule: which node creates its next message in which cycle (the synthetic
// traffic's event list). A timing wheel of kSlots one-cycle buckets covers the next kSlots
// cycles, a heap holds the later events; the nodes due in a cycle come out in ascending
// order, exactly as from one heap ordered by (cycle, node), at O(1) per event instead of
// O(log nodes).
//
// Contract: events are never earlier than the cycle they are pushed in, and PopDue() is
// called for every cycle that has events (the clock never jumps past Next()).
// Thread safety: none; owned by one Network.
#ifndef UKAI_SIM_ENGINE_CREATION_SCHEDULE_H_
#define UKAI_SIM_ENGINE_CREATION_SCHEDULE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace ukai::sim {

class CreationSchedule {
 public:
  CreationSchedule() : wheel_(kSlots) {}

  // Schedules `node` to create a message in `cycle` (>= now).
  void Push(int64_t cycle, int32_t node, int64_t now) {
    ++size_;
    if (cycle - now < kSlots) {
      wheel_[static_cast<size_t>(cycle & kMask)].push_back(node);
    } else {
      far_.emplace(cycle, node);
    }
  }

  // Replaces `due` by the nodes scheduled for `now`, in ascending order.
  void PopDue(int64_t now, std::vector<int32_t>* due) {
    while (!far_.empty() && far_.top().first - now < kSlots) {
      wheel_[static_cast<size_t>(far_.top().first & kMask)].push_back(far_.top().second);
      far_.pop();
    }
    std::vector<int32_t>& bucket = wheel_[static_cast<size_t>(now & kMask)];
    due->swap(bucket);
    bucket.clear();
    size_ -= static_cast<int64_t>(due->size());
    if (due->size() > 1) std::sort(due->begin(), due->end());
  }

  bool empty() const { return size_ == 0; }

  // The earliest scheduled cycle (>= now); empty() must be false.
  int64_t Next(int64_t now) const {
    const int64_t far = far_.empty() ? std::numeric_limits<int64_t>::max() : far_.top().first;
    for (int64_t t = now; t < now + kSlots && t < far; ++t) {
      if (!wheel_[static_cast<size_t>(t & kMask)].empty()) return t;
    }
    return far;
  }

 private:
  static constexpr int64_t kSlots = 1024;
  static constexpr int64_t kMask = kSlots - 1;
  using Event = std::pair<int64_t, int32_t>;  // (cycle, node)

  std::vector<std::vector<int32_t>> wheel_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> far_;
  int64_t size_ = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_CREATION_SCHEDULE_H_
