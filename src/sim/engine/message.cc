#include "sim/engine/message.h"

#include <algorithm>

namespace ukai::sim {

MessagePool::MessagePool(int lanes, int64_t capacity)
    : items_(static_cast<size_t>(std::clamp<int64_t>(capacity, kChunk, Flit::kMaxMessages))),
      lanes_(static_cast<size_t>(std::max(1, lanes))),
      capacity_(static_cast<int64_t>(items_.size())) {}

void MessagePool::ClaimChunk(Lane* lane) {
  std::lock_guard<std::mutex> lock(mu_);
  if (claimed_ + kChunk > capacity_) {
    // As many messages alive at once as the memory limit allows (2^30 at most): a run far
    // past saturation (the source-queue backlog bound normally stops it long before).
    std::fprintf(stderr,
                 "ukai sim: more than %lld live messages (source queues of a saturated "
                 "network); lower traffic.rate or measure.max_cycles\n",
                 static_cast<long long>(capacity_));
    std::abort();
  }
  lane->bump = static_cast<int32_t>(claimed_);
  lane->bump_end = static_cast<int32_t>(claimed_ + kChunk);
  claimed_ += kChunk;
}

int64_t MessagePool::live() const {
  int64_t n = 0;
  for (const Lane& l : lanes_) n += l.live;
  return n;
}

}  // namespace ukai::sim
