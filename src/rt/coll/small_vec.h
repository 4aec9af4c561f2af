// SmallVec<T, N>: a push-only sequence whose first N elements live inside the object (no heap
// allocation for the usual few messages of one collective step), the rest in a vector.
// Thread safety: none (a value).
#ifndef UKAI_RT_COLL_SMALL_VEC_H_
#define UKAI_RT_COLL_SMALL_VEC_H_

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace ukai::rt::coll {

template <class T, size_t N>
class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(const SmallVec&) = delete;
  SmallVec& operator=(const SmallVec&) = delete;
  ~SmallVec() {
    for (size_t i = 0; i < size_ && i < N; ++i) At(i)->~T();
  }
  void push_back(T v) {
    if (size_ < N) {
      new (At(size_)) T(std::move(v));
    } else {
      more_.push_back(std::move(v));
    }
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return i < N ? *At(i) : more_[i - N]; }

 private:
  T* At(size_t i) { return std::launder(reinterpret_cast<T*>(storage_ + i * sizeof(T))); }
  alignas(T) unsigned char storage_[N * sizeof(T)];
  std::vector<T> more_;
  size_t size_ = 0;
};

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_SMALL_VEC_H_
