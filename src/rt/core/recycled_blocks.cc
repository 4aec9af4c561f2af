#include "rt/core/recycled_blocks.h"

#include <bit>
#include <new>

namespace ukai::rt {
namespace {

// Four classes per power of two: class 4 (k - kMinShift) + q holds blocks of
// (4 + q) << (k - 2) bytes, q in 0..3, k >= kMinShift (64-byte blocks and up).
constexpr int kMinShift = 6;
constexpr int kClasses = 4 * (64 - kMinShift);

}  // namespace

RecycledBlocks* RecycledBlocks::Create(size_t min_bytes, size_t max_bytes, size_t keep_bytes) {
  return new RecycledBlocks(min_bytes < 64 ? 64 : min_bytes, max_bytes, keep_bytes);
}

RecycledBlocks::RecycledBlocks(size_t min_bytes, size_t max_bytes, size_t keep_bytes)
    : min_bytes_(min_bytes), max_bytes_(max_bytes), keep_bytes_(keep_bytes), free_(kClasses) {}

RecycledBlocks::~RecycledBlocks() {
  for (auto& list : free_) {
    for (uint8_t* p : list) delete[] p;
  }
}

int RecycledBlocks::ClassOf(size_t capacity) {
  const int k = std::bit_width(capacity) - 1;  // 2^k <= capacity < 2^(k+1)
  const int q = static_cast<int>((capacity >> (k - 2)) - 4);
  return 4 * (k - kMinShift) + q;
}

size_t RecycledBlocks::ClassBytes(size_t bytes) const {
  if (bytes < min_bytes_ || bytes > max_bytes_ || bytes > (size_t{1} << 62)) return 0;
  const int k = std::bit_width(bytes - 1) - 1;  // 2^k < bytes <= 2^(k+1) (bytes >= 64)
  const size_t step = size_t{1} << (k - 2);     // a quarter of 2^k
  return (bytes + step - 1) / step * step;      // 5, 6, 7 or 8 quarters of 2^k
}

uint8_t* RecycledBlocks::Allocate(size_t bytes, size_t* capacity) noexcept {
  const size_t cap = ClassBytes(bytes);
  if (cap == 0) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint8_t*>& list = free_[ClassOf(cap)];
    ++stats_.blocks_in_use;
    if (!list.empty()) {
      uint8_t* p = list.back();
      list.pop_back();
      stats_.kept_bytes -= cap;
      ++stats_.reused;
      *capacity = cap;
      return p;
    }
    ++stats_.allocated;
  }
  uint8_t* p = new (std::nothrow) uint8_t[cap];  // uninitialised on purpose
  if (p == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    --stats_.blocks_in_use;
    --stats_.allocated;
    return nullptr;
  }
  *capacity = cap;
  return p;
}

void RecycledBlocks::Free(uint8_t* data, size_t capacity) noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --stats_.blocks_in_use;
    if (stats_.kept_bytes + capacity <= keep_bytes_) {
      try {
        free_[ClassOf(capacity)].push_back(data);
        stats_.kept_bytes += capacity;
        return;
      } catch (const std::bad_alloc&) {
        // the list could not grow: the block is deleted below
      }
    }
    ++stats_.released;
  }
  delete[] data;
}

RecycledBlocks::Stats RecycledBlocks::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ukai::rt
