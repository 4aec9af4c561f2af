// ByteBlock: an owned, growable, move-only byte array whose growth does not zero-fill
// (a 64 MiB message is not written twice). It is the unit of ownership that travels from a
// Buffer through a communication module to the receiving handler without copies where the
// module allows (inproc hands the block over as is).
//
// Storage: the heap (new[]/delete[]) by default, or a BlockSource: registered memory such
// as the shm module's shared-memory pool (Runtime::NewBuffer). A block from a source holds
// a reference to it, so the source (and its mapping) lives as long as any of its blocks,
// whichever thread drops the last one. Growth past the capacity allocates from the same
// source when it can, else from the heap (the block then no longer refers to the source).
//
// Thread safety: a ByteBlock is a plain value (one thread at a time); a BlockSource must
// be thread safe (blocks are freed by whichever thread drops them).
#ifndef UKAI_RT_BYTE_BLOCK_HPP_
#define UKAI_RT_BYTE_BLOCK_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace ukai::rt {

// Where a ByteBlock's storage comes from (when not the heap). Intrusively reference
// counted: created with one reference (its creator's); each block from it holds one more.
// Allocate/Free are called from any thread.
class BlockSource {
 public:
  BlockSource(const BlockSource&) = delete;
  BlockSource& operator=(const BlockSource&) = delete;

  void Ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the source with its last reference.
  void Unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  // Storage for at least `bytes` bytes, its real size in *capacity; nullptr when the
  // source cannot serve it now (exhausted, too large).
  virtual uint8_t* Allocate(size_t bytes, size_t* capacity) noexcept = 0;
  // Returns storage from Allocate (`capacity` as Allocate reported it).
  virtual void Free(uint8_t* data, size_t capacity) noexcept = 0;

 protected:
  BlockSource() = default;
  virtual ~BlockSource() = default;

 private:
  std::atomic<uint64_t> refs_{1};
};

class ByteBlock {
 public:
  ByteBlock() = default;
  // An empty heap block with room for `capacity` bytes.
  explicit ByteBlock(size_t capacity) { Reserve(capacity); }
  // An empty block with room for `capacity` bytes from `source`, or an empty block without
  // storage (capacity() == 0) when the source cannot serve it.
  static ByteBlock FromSource(BlockSource* source, size_t capacity) {
    ByteBlock b;
    size_t got = 0;
    uint8_t* d = source->Allocate(capacity, &got);
    if (d == nullptr) return b;
    source->Ref();
    b.data_ = d;
    b.capacity_ = got;
    b.source_ = source;
    return b;
  }
  ~ByteBlock() { Release(); }
  ByteBlock(ByteBlock&& o) noexcept
      : data_(o.data_), size_(o.size_), capacity_(o.capacity_), source_(o.source_) {
    o.data_ = nullptr;
    o.source_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  ByteBlock& operator=(ByteBlock&& o) noexcept {
    if (this != &o) {
      Release();
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      source_ = o.source_;
      o.data_ = nullptr;
      o.source_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  ByteBlock(const ByteBlock&) = delete;
  ByteBlock& operator=(const ByteBlock&) = delete;

  // A deep copy, from the same source when it can serve it (else the heap).
  ByteBlock Clone() const {
    ByteBlock b;
    if (source_ != nullptr && size_ != 0) b = FromSource(source_, size_);
    if (b.capacity_ < size_) b.Reserve(size_);
    if (size_ != 0) std::memcpy(b.data_, data_, size_);
    b.size_ = size_;
    return b;
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> span() const { return {data_, size_}; }
  // The source of the storage, nullptr for the heap.
  BlockSource* source() const { return source_; }

  // Ensures capacity >= n, keeping the contents (from the same source when it can).
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    uint8_t* d = nullptr;
    size_t cap = n;
    if (source_ != nullptr) d = source_->Allocate(n, &cap);
    BlockSource* src = d != nullptr ? source_ : nullptr;
    if (d == nullptr) {
      d = new uint8_t[n];  // uninitialised on purpose
      cap = n;
    }
    if (size_ != 0) std::memcpy(d, data_, size_);
    if (src != nullptr) src->Ref();  // before Release() may drop the last reference
    Release();
    data_ = d;
    capacity_ = cap;
    source_ = src;
  }
  // Sets the size to n; new bytes are uninitialised. Grows geometrically.
  void Resize(size_t n) {
    if (n > capacity_) Reserve(n > 2 * capacity_ ? n : 2 * capacity_);
    size_ = n;
  }
  // Appends n bytes and returns a pointer to them (to be written by the caller).
  uint8_t* Extend(size_t n) {
    size_t old = size_;
    Resize(size_ + n);
    return data_ + old;
  }
  void Clear() { size_ = 0; }

 private:
  // Frees the storage (size and capacity are left to the caller).
  void Release() noexcept {
    if (source_ != nullptr) {
      source_->Free(data_, capacity_);
      source_->Unref();
      source_ = nullptr;
    } else {
      delete[] data_;
    }
    data_ = nullptr;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  BlockSource* source_ = nullptr;  // nullptr: heap
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_BYTE_BLOCK_HPP_
