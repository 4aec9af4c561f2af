// The built-in reduction kernels: one loop per (type, operation), operands in rank order.
#include "rt/coll/reduce_kernels.h"

#include <string>
#include <type_traits>

namespace ukai::rt::coll {
namespace {

struct Sum {
  template <class T>
  static T F(T a, T b) {
    return a + b;
  }
};
struct Prod {
  template <class T>
  static T F(T a, T b) {
    return a * b;
  }
};
// b < a ? b : a keeps the lower rank's operand `a` on ties and on NaN.
struct Min {
  template <class T>
  static T F(T a, T b) {
    return b < a ? b : a;
  }
};
struct Max {
  template <class T>
  static T F(T a, T b) {
    return a < b ? b : a;
  }
};
struct Band {
  template <class T>
  static T F(T a, T b) {
    return a & b;
  }
};
struct Bor {
  template <class T>
  static T F(T a, T b) {
    return a | b;
  }
};
struct Bxor {
  template <class T>
  static T F(T a, T b) {
    return a ^ b;
  }
};

// Unsigned arithmetic for the signed sums and products: wraps instead of overflowing (UB).
template <class T, bool = std::is_integral_v<T>>
struct ArithOf {
  using type = T;
};
template <class T>
struct ArithOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

template <class Op, class T>
void Kernel(const void* lhs, const void* rhs, void* out, size_t count) {
  const T* a = static_cast<const T*>(lhs);
  const T* b = static_cast<const T*>(rhs);
  T* o = static_cast<T*>(out);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<Op, Sum> || std::is_same_v<Op, Prod>) {
      o[i] = static_cast<T>(Op::F(static_cast<Arith<T>>(a[i]), static_cast<Arith<T>>(b[i])));
    } else {
      o[i] = Op::F(a[i], b[i]);
    }
  }
}

template <class T>
CombineFn ForType(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return &Kernel<Sum, T>;
    case ReduceOp::kProd:
      return &Kernel<Prod, T>;
    case ReduceOp::kMin:
      return &Kernel<Min, T>;
    case ReduceOp::kMax:
      return &Kernel<Max, T>;
    case ReduceOp::kBand:
      if constexpr (std::is_integral_v<T>) return &Kernel<Band, T>;
      return nullptr;
    case ReduceOp::kBor:
      if constexpr (std::is_integral_v<T>) return &Kernel<Bor, T>;
      return nullptr;
    case ReduceOp::kBxor:
      if constexpr (std::is_integral_v<T>) return &Kernel<Bxor, T>;
      return nullptr;
    case ReduceOp::kUser:
      break;
  }
  return nullptr;
}

CombineFn Builtin(ReduceOp op, DataType type) {
  switch (type) {
    case DataType::kInt32:
      return ForType<int32_t>(op);
    case DataType::kInt64:
      return ForType<int64_t>(op);
    case DataType::kUint32:
      return ForType<uint32_t>(op);
    case DataType::kUint64:
      return ForType<uint64_t>(op);
    case DataType::kFloat:
      return ForType<float>(op);
    case DataType::kDouble:
      return ForType<double>(op);
    case DataType::kByte:
      break;
  }
  return nullptr;
}

}  // namespace

Result<Combiner> Combiner::Make(const Reduction& op, DataType type) {
  Combiner c;
  c.type_ = type;
  c.element_ = DataTypeSize(type);
  if (op.op() == ReduceOp::kUser) {
    if (!op.function()) {
      return Status::InvalidArgument("reduction '" + op.name() + "' has no function");
    }
    c.user_ = &op.function();
    return c;
  }
  if (op.op() < ReduceOp::kSum || op.op() > ReduceOp::kBxor) {
    return Status::InvalidArgument("unknown reduction operation " +
                                   std::to_string(static_cast<int>(op.op())));
  }
  c.fn_ = Builtin(op.op(), type);
  if (c.fn_ == nullptr) {
    const bool bitwise = op.op() >= ReduceOp::kBand;
    return Status::InvalidArgument(
        "reduction " + std::string(ReduceOpName(op.op())) + " is not defined on " +
        std::string(DataTypeName(type)) +
        (bitwise ? " (bitwise operations take integer types)"
                 : " (built-in reductions take int32, int64, uint32, uint64, float, double)"));
  }
  return c;
}

void Combiner::Apply(const void* lhs, const void* rhs, void* out, size_t bytes) const {
  const size_t count = bytes / element_;
  if (count == 0) return;
  if (fn_ != nullptr) {
    fn_(lhs, rhs, out, count);
  } else {
    (*user_)(lhs, rhs, out, count, type_);
  }
}

}  // namespace ukai::rt::coll
