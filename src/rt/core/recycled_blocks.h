// RecycledBlocks: a BlockSource of plain heap storage that keeps the blocks given back for
// the next request of their size, instead of returning them to the allocator. The mpi
// module puts it behind Runtime::NewBuffer when asked (mpi.recycle_bytes): a sender packing
// one new Buffer per message then writes into a block a completed send gave back (its
// pages resident) rather than into whatever malloc returns.
//
// Size classes: four per power of two (2^k, 1.25, 1.5, 1.75 x 2^k), so a block is at most
// 25 % larger than asked; requests below `min_bytes` or above `max_bytes` are refused
// (nullptr: the ByteBlock takes the heap). Each class keeps a LIFO list of free blocks (the
// most recently given back first); a block given back while `keep_bytes` are already kept
// is deleted at once, so the memory kept idle stays bounded. Blocks are never split or
// merged.
//
// Ownership: reference counted (BlockSource): created with one reference for the creator;
// every block holds one more, so the source outlives its last block (a Buffer may outlive
// the Runtime). Thread safety: Allocate/Free/stats from any thread (one mutex).
#ifndef UKAI_RT_CORE_RECYCLED_BLOCKS_H_
#define UKAI_RT_CORE_RECYCLED_BLOCKS_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ukai/rt/byte_block.hpp"

namespace ukai::rt {

class RecycledBlocks final : public BlockSource {
 public:
  // Serves requests of [min_bytes, max_bytes] bytes (min_bytes >= 64, max_bytes >=
  // min_bytes); keeps at most `keep_bytes` bytes of free blocks. One reference, the caller's.
  static RecycledBlocks* Create(size_t min_bytes, size_t max_bytes, size_t keep_bytes);

  uint8_t* Allocate(size_t bytes, size_t* capacity) noexcept override;
  void Free(uint8_t* data, size_t capacity) noexcept override;

  // The capacity a request of `bytes` gets (its class), or 0 when it is refused.
  size_t ClassBytes(size_t bytes) const;

  struct Stats {
    uint64_t allocated = 0;  // blocks taken from the heap
    uint64_t reused = 0;     // requests served from a kept block
    uint64_t released = 0;   // blocks given back and deleted (over keep_bytes)
    size_t blocks_in_use = 0;
    size_t kept_bytes = 0;  // capacities of the free blocks kept
  };
  Stats stats() const;

 private:
  RecycledBlocks(size_t min_bytes, size_t max_bytes, size_t keep_bytes);
  ~RecycledBlocks() override;  // via Unref(): deletes the kept blocks

  // Class index of a capacity ClassBytes() returned.
  static int ClassOf(size_t capacity);

  const size_t min_bytes_, max_bytes_, keep_bytes_;
  mutable std::mutex mu_;
  std::vector<std::vector<uint8_t*>> free_;  // per class, LIFO (mu_)
  Stats stats_;                              // (mu_)
};

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_RECYCLED_BLOCKS_H_
