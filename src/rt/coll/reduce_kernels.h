// Element-wise combining of reduction operands: the built-in operations on every supported
// type, and user functions, behind one Combiner.
//
// Combiner::Apply(lhs, rhs, out, bytes) computes out[i] = lhs[i] (op) rhs[i] for the whole
// elements in `bytes`, where `out` is `lhs` or `rhs` (in place). The operand order is the
// rank order of the contributions: lhs holds lower ranks'. Built-in kernels keep that order
// too, so that min/max of floats (NaN, -0 against +0) and the NaN payloads of sums come out
// bitwise the same on every member. Thread safety: plain values; Apply is reentrant.
#ifndef UKAI_RT_COLL_REDUCE_KERNELS_H_
#define UKAI_RT_COLL_REDUCE_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "ukai/rt/group.hpp"

namespace ukai::rt::coll {

using CombineFn = void (*)(const void* lhs, const void* rhs, void* out, size_t count);

class Combiner {
 public:
  Combiner() = default;
  // Checks that `op` applies to `type`: built-in operations need a numeric type, the bitwise
  // ones an integer type, a user operation a function. kInvalidArgument naming both.
  static Result<Combiner> Make(const Reduction& op, DataType type);
  void Apply(const void* lhs, const void* rhs, void* out, size_t bytes) const;
  bool valid() const { return fn_ != nullptr || user_ != nullptr; }
  size_t element() const { return element_; }

 private:
  CombineFn fn_ = nullptr;
  const ReduceFunction* user_ = nullptr;  // owned by the operation's Reduction copy
  DataType type_ = DataType::kByte;
  size_t element_ = 1;
};

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_REDUCE_KERNELS_H_
