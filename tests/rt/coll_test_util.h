// Helpers for the collectives' tests: a world of N runtimes joined by one module (inproc: a
// shared fabric) with one context each and a Group over them, a member thread per runtime,
// typed test data and reference results computed directly.
#ifndef UKAI_TESTS_RT_COLL_TEST_UTIL_H_
#define UKAI_TESTS_RT_COLL_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::testing {

inline constexpr ContextId kCollCtx = 7;

// N runtimes over `module`, one context each (id kCollCtx), and the Group of those contexts
// (made by FromStartpoints, every member in its own thread).
class CollWorld {
 public:
  CollWorld(int n, const std::string& module, GroupOptions options = {}, RuntimeOptions base = {}) {
    auto fabric = NewInprocFabric();
    for (int r = 0; r < n; ++r) {
      RuntimeOptions o = ModuleOptions(module, fabric);
      o.on_peer_event = base.on_peer_event;
      o.progress_thread = base.progress_thread;
      auto rt = Runtime::Init(o);
      if (!rt.ok()) {
        ADD_FAILURE() << rt.status().ToString();
        return;
      }
      auto ctx = (*rt)->CreateContext({.name = "coll", .id = kCollCtx});
      if (!ctx.ok()) {
        ADD_FAILURE() << ctx.status().ToString();
        return;
      }
      contexts_.push_back(*ctx);
      members_.emplace_back((*rt)->shared_descriptors(), kCollCtx, 1);
      runtimes_.push_back(std::move(*rt));
    }
    groups_.resize(n);
    Run([&](int r, Group*) {
      auto g = Group::FromStartpoints(*contexts_[r], members_, options);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      groups_[r] = std::move(*g);
    });
  }
  ~CollWorld() {
    groups_.clear();
    for (auto& rt : runtimes_) (void)rt->Finalize();
  }
  bool ok() const {
    for (const auto& g : groups_) {
      if (g == nullptr) return false;
    }
    return !groups_.empty();
  }
  int size() const { return static_cast<int>(runtimes_.size()); }
  Runtime& runtime(int r) { return *runtimes_[r]; }
  Context& context(int r) { return *contexts_[r]; }
  Group& group(int r) { return *groups_[r]; }
  std::unique_ptr<Group>& group_ptr(int r) { return groups_[r]; }
  const std::vector<Startpoint>& members() const { return members_; }

  // Runs fn(rank, group) on one thread per member and joins them.
  void Run(const std::function<void(int, Group*)>& fn) {
    std::vector<std::thread> threads;
    for (int r = 0; r < size(); ++r) {
      threads.emplace_back(
          [&, r] { fn(r, r < static_cast<int>(groups_.size()) ? groups_[r].get() : nullptr); });
    }
    for (auto& t : threads) t.join();
  }

 private:
  std::vector<std::unique_ptr<Runtime>> runtimes_;
  std::vector<Context*> contexts_;
  std::vector<Startpoint> members_;
  std::vector<std::unique_ptr<Group>> groups_;
};

// ---- typed data ----

// Element i of rank r's input (salt: which buffer): small values, so that every sum and
// product of up to 8 of them is exact in float and double whatever the order.
inline int64_t SmallValue(int r, uint64_t i, int salt) {
  return static_cast<int64_t>((r * 7 + i * 13 + salt * 5) % 9) - 4;
}

template <class T>
T ValueFor(int r, uint64_t i, int salt, ReduceOp op) {
  int64_t v = SmallValue(r, i, salt);
  if (op == ReduceOp::kProd) v = (v % 2 == 0) ? 1 : (v > 0 ? 2 : -1);  // products stay small
  if constexpr (std::is_unsigned_v<T>) {
    if (op == ReduceOp::kBand || op == ReduceOp::kBor || op == ReduceOp::kBxor) {
      return static_cast<T>(0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(r * 1000003 + i + salt));
    }
    return static_cast<T>(v + 4);
  } else if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::kBand || op == ReduceOp::kBor || op == ReduceOp::kBxor) {
      return static_cast<T>(0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(r * 1000003 + i + salt));
    }
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// Affine maps x -> a*x + b (mod 2^32) packed in a uint64 (a high, b low); composition
// f(lhs, rhs) = lhs ∘ rhs is associative and not commutative: results show rank order.
inline uint64_t Compose(uint64_t l, uint64_t r) {
  const uint32_t la = static_cast<uint32_t>(l >> 32), lb = static_cast<uint32_t>(l);
  const uint32_t ra = static_cast<uint32_t>(r >> 32), rb = static_cast<uint32_t>(r);
  return (static_cast<uint64_t>(la * ra) << 32) | static_cast<uint32_t>(la * rb + lb);
}
inline Reduction AffineCompose() {
  return Reduction::User(
      [](const void* lhs, const void* rhs, void* out, size_t count, DataType) {
        const auto* a = static_cast<const uint64_t*>(lhs);
        const auto* b = static_cast<const uint64_t*>(rhs);
        auto* o = static_cast<uint64_t*>(out);
        for (size_t i = 0; i < count; ++i) o[i] = Compose(a[i], b[i]);
      },
      /*commutative=*/false, "affine");
}
inline uint64_t AffineValue(int r, uint64_t i, int salt) {
  return (static_cast<uint64_t>(2 * (r + i + salt) + 1) << 32) |
         static_cast<uint32_t>(r * 31 + i + salt);
}

template <class T>
T Combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::kSum:
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                              static_cast<std::make_unsigned_t<T>>(b));
      } else {
        return a + b;
      }
    case ReduceOp::kProd:
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) *
                              static_cast<std::make_unsigned_t<T>>(b));
      } else {
        return a * b;
      }
    case ReduceOp::kMin:
      return b < a ? b : a;
    case ReduceOp::kMax:
      return a < b ? b : a;
    default:
      if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::kBand) return a & b;
        if (op == ReduceOp::kBor) return a | b;
        return a ^ b;
      }
      return a;
  }
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_COLL_TEST_UTIL_H_
