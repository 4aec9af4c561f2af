// One remote atomic operation on a word, shared by the target's software path
// (rma_target.cc) and the initiator's direct path over mapped shared memory (rma_direct.cc):
// std::atomic_ref on the word, so it is atomic with respect to every other remote op and to
// local std::atomic_ref code on the same word, whichever process runs it (lock-free 32/64-bit
// atomics are address-free). Thread safety: pure.
#ifndef UKAI_RT_RMA_RMA_ATOMICS_H_
#define UKAI_RT_RMA_RMA_ATOMICS_H_

#include <atomic>
#include <cstdint>

#include "ukai/rt/rma.hpp"

namespace ukai::rt::internal {

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free &&
              std::atomic_ref<uint64_t>::is_always_lock_free);

// Applies `op` to `*word` and returns the old value.
template <typename T>
T ApplyOp(T* word, const AtomicOp& op) {
  std::atomic_ref<T> ref(*word);
  const T v = static_cast<T>(op.operand);
  switch (op.code) {
    case AtomicOpcode::kAdd:
      return ref.fetch_add(v);
    case AtomicOpcode::kAnd:
      return ref.fetch_and(v);
    case AtomicOpcode::kOr:
      return ref.fetch_or(v);
    case AtomicOpcode::kXor:
      return ref.fetch_xor(v);
    case AtomicOpcode::kSwap:
      return ref.exchange(v);
    case AtomicOpcode::kMin:
    case AtomicOpcode::kMax: {
      T old = ref.load();
      const bool min = op.code == AtomicOpcode::kMin;
      while ((min ? v < old : v > old) && !ref.compare_exchange_weak(old, v)) {
      }
      return old;
    }
    case AtomicOpcode::kCas: {
      T expected = static_cast<T>(op.compare);
      ref.compare_exchange_strong(expected, v);
      return expected;  // the old value either way
    }
  }
  return 0;
}

// Applies `op` at base + op.offset with its width; returns the old value.
inline uint64_t ApplyAt(uint8_t* base, const AtomicOp& op) {
  return op.width == 4 ? ApplyOp(reinterpret_cast<uint32_t*>(base + op.offset), op)
                       : ApplyOp(reinterpret_cast<uint64_t*>(base + op.offset), op);
}

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_RMA_RMA_ATOMICS_H_
