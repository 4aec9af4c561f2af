#include "rt/core/recycled_blocks.h"

#include <sys/mman.h>

#include <bit>
#include <cstdint>
#include <new>

namespace ukai::rt {
namespace {

// Four classes per power of two: class 4 (k - kMinShift) + q holds blocks of
// (4 + q) << (k - 2) bytes, q in 0..3, k >= kMinShift (64-byte blocks and up).
constexpr int kMinShift = 6;
constexpr int kClasses = 4 * (64 - kMinShift);

}  // namespace

RecycledBlocks* RecycledBlocks::Create(size_t min_bytes, size_t max_bytes, size_t keep_bytes,
                                       size_t huge_min_bytes) {
  return new RecycledBlocks(min_bytes < 64 ? 64 : min_bytes, max_bytes, keep_bytes, huge_min_bytes);
}

RecycledBlocks::RecycledBlocks(size_t min_bytes, size_t max_bytes, size_t keep_bytes,
                               size_t huge_min_bytes)
    : min_bytes_(min_bytes),
      max_bytes_(max_bytes),
      keep_bytes_(keep_bytes),
      huge_min_bytes_(huge_min_bytes),
      free_(kClasses) {}

RecycledBlocks::~RecycledBlocks() {
  for (int c = 0; c < kClasses; ++c) {
    for (uint8_t* p : free_[c]) DeleteStorage(p, CapacityOf(c));
  }
}

size_t RecycledBlocks::CapacityOf(int class_index) {
  const int k = class_index / 4 + kMinShift;
  return static_cast<size_t>(4 + class_index % 4) << (k - 2);
}

uint8_t* RecycledBlocks::NewStorage(size_t capacity) const {
  if (!Huge(capacity)) return new (std::nothrow) uint8_t[capacity];  // uninitialised
  // Map one granule more than needed and cut the ends so that the block starts on a
  // 2 MiB boundary (a huge page needs its whole aligned range inside the mapping).
  const size_t span = capacity + kHugeBytes;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(m);
  const uintptr_t start = (base + kHugeBytes - 1) & ~(uintptr_t{kHugeBytes} - 1);
  if (start > base) munmap(m, start - base);
  if (const uintptr_t end = start + capacity; end < base + span) {
    munmap(reinterpret_cast<void*>(end), base + span - end);
  }
  auto* p = reinterpret_cast<uint8_t*>(start);
  madvise(p, capacity, MADV_HUGEPAGE);  // advice: 4 KiB pages where the kernel says no
  return p;
}

void RecycledBlocks::DeleteStorage(uint8_t* data, size_t capacity) const {
  if (Huge(capacity)) {
    munmap(data, capacity);
  } else {
    delete[] data;
  }
}

int RecycledBlocks::ClassOf(size_t capacity) {
  const int k = std::bit_width(capacity) - 1;  // 2^k <= capacity < 2^(k+1)
  const int q = static_cast<int>((capacity >> (k - 2)) - 4);
  return 4 * (k - kMinShift) + q;
}

size_t RecycledBlocks::ClassBytes(size_t bytes) const {
  if (bytes < min_bytes_ || bytes > max_bytes_ || bytes > (size_t{1} << 62)) return 0;
  const int k = std::bit_width(bytes - 1) - 1;        // 2^k < bytes <= 2^(k+1) (bytes >= 64)
  const size_t step = size_t{1} << (k - 2);           // a quarter of 2^k
  const size_t c = (bytes + step - 1) / step * step;  // 5, 6, 7 or 8 quarters of 2^k
  // Whole granules, each itself a class: 2, 4, 6 and 8 MiB are classes, and from 8 MiB on
  // every class is a multiple of 2 MiB.
  return Huge(c) ? (c + kHugeBytes - 1) / kHugeBytes * kHugeBytes : c;
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
    if (Huge(cap)) ++stats_.mapped;
  }
  uint8_t* p = NewStorage(cap);
  if (p == nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    --stats_.blocks_in_use;
    --stats_.allocated;
    if (Huge(cap)) --stats_.mapped;
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
  DeleteStorage(data, capacity);
}

RecycledBlocks::Stats RecycledBlocks::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace ukai::rt
