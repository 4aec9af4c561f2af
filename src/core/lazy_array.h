// LazyArray<T>: a fixed-size array of trivially copyable T whose memory is reserved as
// address space (an anonymous private mapping with MAP_NORESERVE) and backed by the kernel
// only page by page, when first written. Every element reads as all-zero bytes until it is
// written, and pages never written add nothing to the resident set.
//
// This is what lets a simulator partition (sim/engine/partition.h) index router and node
// state by global numbers while holding only its own part in memory: an MPI rank touches
// the pages of its own routers and PEs and of the boundary slots it writes, so its peak
// RSS is its share of the network, not the whole.
//
// Ownership: owns the mapping (unmapped by the destructor); move-only. Sizes up to the
// address space; an allocation failure throws std::bad_alloc like a std::vector.
// Thread safety: none beyond that of a plain array (distinct elements may be written by
// distinct threads).
#ifndef UKAI_CORE_LAZY_ARRAY_H_
#define UKAI_CORE_LAZY_ARRAY_H_

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace ukai {

template <typename T>
class LazyArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "LazyArray holds plain data only");

 public:
  LazyArray() = default;
  // `size` zero-filled elements; no page is touched.
  explicit LazyArray(size_t size) { Reset(size); }
  ~LazyArray() { Unmap(); }
  LazyArray(const LazyArray&) = delete;
  LazyArray& operator=(const LazyArray&) = delete;
  LazyArray(LazyArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  LazyArray& operator=(LazyArray&& o) noexcept {
    if (this != &o) {
      Unmap();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  // Drops the contents and reserves `size` zero elements.
  void Reset(size_t size) {
    Unmap();
    if (size == 0) return;
    void* p = mmap(nullptr, size * sizeof(T), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    size_ = size;
  }
  // Sets elements [begin, end) to `value` (touching their pages).
  void Fill(size_t begin, size_t end, const T& value) {
    for (size_t i = begin; i < end; ++i) data_[i] = value;
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  void Unmap() {
    if (data_ != nullptr) munmap(data_, size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ukai

#endif  // UKAI_CORE_LAZY_ARRAY_H_
