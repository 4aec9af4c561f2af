// ByteBlock: an owned, growable, move-only byte array whose growth does not zero-fill
// (a 64 MiB message is not written twice). It is the unit of ownership that travels from a
// Buffer through a communication module to the receiving handler without copies where the
// module allows (inproc hands the block over as is).
//
// Thread safety: a plain value; one thread at a time.
#ifndef UKAI_RT_BYTE_BLOCK_HPP_
#define UKAI_RT_BYTE_BLOCK_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace ukai::rt {

class ByteBlock {
 public:
  ByteBlock() = default;
  // An empty block with room for `capacity` bytes.
  explicit ByteBlock(size_t capacity) { Reserve(capacity); }
  ByteBlock(ByteBlock&& o) noexcept
      : data_(std::move(o.data_)), size_(o.size_), capacity_(o.capacity_) {
    o.size_ = o.capacity_ = 0;
  }
  ByteBlock& operator=(ByteBlock&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.size_ = o.capacity_ = 0;
    return *this;
  }
  ByteBlock(const ByteBlock&) = delete;
  ByteBlock& operator=(const ByteBlock&) = delete;

  // A deep copy.
  ByteBlock Clone() const {
    ByteBlock b(size_);
    if (size_ != 0) std::memcpy(b.data_.get(), data_.get(), size_);
    b.size_ = size_;
    return b;
  }

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> span() const { return {data_.get(), size_}; }

  // Ensures capacity >= n, keeping the contents.
  void Reserve(size_t n) {
    if (n <= capacity_) return;
    std::unique_ptr<uint8_t[]> d(new uint8_t[n]);  // uninitialised on purpose
    if (size_ != 0) std::memcpy(d.get(), data_.get(), size_);
    data_ = std::move(d);
    capacity_ = n;
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
    return data_.get() + old;
  }
  void Clear() { size_ = 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_BYTE_BLOCK_HPP_
