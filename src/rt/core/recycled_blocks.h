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
// Huge pages (`huge_min_bytes` > 0): a block whose class is at least that size is its own
// anonymous mapping, 2 MiB aligned and a whole number of 2 MiB long (its capacity rounded
// up to that), advised MADV_HUGEPAGE, so that the kernel backs it with transparent huge
// pages where it can (/sys/kernel/mm/transparent_hugepage/enabled "madvise" or "always";
// else 4 KiB pages, as before). Cross-memory attach (process_vm_readv: Open MPI vader's
// single copy) reads such a block 2-5x faster than 4 KiB-page blocks, and a packing
// memcpy misses the TLB less (docs/performance.md, "Issue 22: the mpi module"). Up to
// half of such a block is beyond what was asked (a 1 MiB request takes 2 MiB); the bound
// on the memory kept counts the whole mapping.
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
  // min_bytes); keeps at most `keep_bytes` bytes of free blocks; blocks of a class of at
  // least `huge_min_bytes` are huge-page mappings (0: none). One reference, the caller's.
  static RecycledBlocks* Create(size_t min_bytes, size_t max_bytes, size_t keep_bytes,
                                size_t huge_min_bytes = 0);
  // Alignment and length granule of the huge-page blocks.
  static constexpr size_t kHugeBytes = size_t{2} << 20;

  uint8_t* Allocate(size_t bytes, size_t* capacity) noexcept override;
  void Free(uint8_t* data, size_t capacity) noexcept override;

  // The capacity a request of `bytes` gets (its class; for a huge-page block, rounded up
  // to a multiple of kHugeBytes, itself a class), or 0 when it is refused.
  size_t ClassBytes(size_t bytes) const;

  struct Stats {
    uint64_t allocated = 0;  // blocks taken from the heap (or mapped: huge pages)
    uint64_t mapped = 0;     // of those, huge-page mappings
    uint64_t reused = 0;     // requests served from a kept block
    uint64_t released = 0;   // blocks given back and deleted (over keep_bytes)
    size_t blocks_in_use = 0;
    size_t kept_bytes = 0;  // capacities of the free blocks kept
  };
  Stats stats() const;

 private:
  RecycledBlocks(size_t min_bytes, size_t max_bytes, size_t keep_bytes, size_t huge_min_bytes);
  ~RecycledBlocks() override;  // via Unref(): deletes the kept blocks

  // Class index of a capacity ClassBytes() returned, and back.
  static int ClassOf(size_t capacity);
  static size_t CapacityOf(int class_index);
  // A block of a class of `capacity` bytes is a huge-page mapping.
  bool Huge(size_t capacity) const { return huge_min_bytes_ != 0 && capacity >= huge_min_bytes_; }
  // New storage of `capacity` bytes (nullptr when the heap or mmap refuses), and its end.
  uint8_t* NewStorage(size_t capacity) const;
  void DeleteStorage(uint8_t* data, size_t capacity) const;

  const size_t min_bytes_, max_bytes_, keep_bytes_, huge_min_bytes_;
  mutable std::mutex mu_;
  std::vector<std::vector<uint8_t*>> free_;  // per class, LIFO (mu_)
  Stats stats_;                              // (mu_)
};

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_RECYCLED_BLOCKS_H_
