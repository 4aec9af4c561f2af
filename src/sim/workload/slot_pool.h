// TakeSlot: a slot of a pooled vector of records -- the last index released to `free`, or a
// new default-constructed element appended -- for the trace sources' records (packets,
// requests, transfers, collectives, RMA operations), which are named by their index and
// released by pushing the index back onto `free`. The caller resets a reused record.
//
// Thread safety: none (the caller's).
#ifndef UKAI_SIM_WORKLOAD_SLOT_POOL_H_
#define UKAI_SIM_WORKLOAD_SLOT_POOL_H_

#include <vector>

namespace ukai::sim {

template <typename T, typename Index>
Index TakeSlot(std::vector<T>* items, std::vector<Index>* free) {
  if (!free->empty()) {
    const Index i = free->back();
    free->pop_back();
    return i;
  }
  items->emplace_back();
  return static_cast<Index>(items->size() - 1);
}

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_SLOT_POOL_H_
