// ShmPool: the shm module's registered memory (as UCX's ucp_mem_map, MPI_Alloc_mem or a
// GASNet segment): one sparse shared-memory area (memfd_create + ftruncate; a page costs
// memory only once touched) that Runtime::NewBuffer carves Buffers from. A frame whose
// storage lies in the pool crosses to a peer as a small record naming its offset: the peer
// maps the whole pool read-only (PeerPool, its fd passed over the set-up socket) and
// delivers the frame in place, so a large RSR costs one copy in all (the pack).
//
// Allocator: a buddy allocator over size classes of powers of two from kMinBlock (64 KiB)
// up to the pool size. Each class has a LIFO free list (the most recently freed block, warm
// in cache, is handed out first); a request with no free block of its class splits the
// smallest larger free block; freed blocks are not merged at once (that would hand out
// cold halves instead of the warm block just freed) but only when a request finds no block
// at all (then every pair of free buddies merges, and the request is retried). Exhaustion
// makes Allocate return nullptr; the caller (ByteBlock) then uses the heap. Book-keeping:
// a few bytes per 64 KiB unit (4096 units for the default 256 MiB).
//
// Ownership: reference counted (BlockSource); the module holds one reference and every
// block one more, so the mapping lives while any block does (a Buffer may outlive the
// Runtime). Thread safety: Allocate/Free/stats from any thread (a spin lock).
#ifndef UKAI_RT_MODULES_SHM_SHM_POOL_H_
#define UKAI_RT_MODULES_SHM_SHM_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "rt/core/spin_mutex.h"
#include "ukai/rt/byte_block.hpp"

namespace ukai::rt::shm {

class ShmPool final : public BlockSource {
 public:
  static constexpr size_t kMinBlock = size_t{64} << 10;
  static constexpr size_t kMaxBytes = size_t{64} << 30;

  // A pool of `bytes` bytes (rounded up to kMinBlock, in [kMinBlock, kMaxBytes]), with one
  // reference
  // owned by the caller (release it with Unref()).
  static Result<ShmPool*> Create(size_t bytes);

  uint8_t* Allocate(size_t bytes, size_t* capacity) noexcept override;
  void Free(uint8_t* data, size_t capacity) noexcept override;

  // The memfd (owned by the pool; dup or send it, do not close it).
  int fd() const { return fd_; }
  const uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  // True when [p, p + n) lies inside the pool.
  bool Contains(const uint8_t* p, size_t n) const {
    return p >= base_ && n <= size_ && static_cast<size_t>(p - base_) <= size_ - n;
  }

  struct Stats {
    size_t blocks_in_use = 0;
    size_t bytes_in_use = 0;   // capacities of the blocks in use
    size_t bytes_touched = 0;  // distinct memory ever handed out (pages it may have used)
    uint64_t allocations = 0;  // served
    uint64_t failures = 0;     // refused (caller fell back to the heap)
  };
  Stats stats() const;

 private:
  ShmPool(int fd, uint8_t* base, size_t size);
  ~ShmPool() override;
  static int ClassOf(size_t bytes);  // -1: larger than any class
  // With mu_ held; blocks are named by their first 64 KiB unit.
  void Push(int32_t unit, int k);  // onto class k's free list (front: LIFO)
  void Unlink(int32_t unit);       // off its free list
  int32_t Take(int k);             // a free block of class k (splitting), or -1
  void Coalesce();                 // merges all free buddies

  const int fd_;
  uint8_t* const base_;
  const size_t size_;
  mutable SpinMutex mu_;
  // Guarded by mu_. Per class: the first unit of its free list, -1 = empty.
  std::vector<int32_t> head_;
  // Per unit: the class of the free block that starts there, -1 = none; the free list links.
  std::vector<int8_t> free_class_;
  std::vector<int32_t> next_, prev_;
  std::vector<bool> touched_;  // per unit: ever handed out
  Stats stats_;
};

// A read-only mapping of a peer's pool (from the fd the peer sent at set-up). The fd must
// be sealed against shrinking and growing (ShmPool seals its memfd): a peer could otherwise
// shrink the file under our mapping and make reads fault.
class PeerPool {
 public:
  // Maps the whole of `fd` (its size from fstat). Does not take `fd`.
  static Result<std::unique_ptr<PeerPool>> Map(int fd);
  ~PeerPool();
  PeerPool(const PeerPool&) = delete;
  PeerPool& operator=(const PeerPool&) = delete;

  const uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  PeerPool(const uint8_t* base, size_t size) : base_(base), size_(size) {}
  const uint8_t* base_;
  size_t size_;
};

}  // namespace ukai::rt::shm

#endif  // UKAI_RT_MODULES_SHM_SHM_POOL_H_
