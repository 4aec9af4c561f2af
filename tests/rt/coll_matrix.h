// The collectives' correctness matrix (coll_matrix_test.cc, coll_matrix_itest.cc) over inproc
// (several runtimes in this process, one thread each): every collective x algorithm x type x
// reduction x size x group size, each result checked against the reference computed here. Sizes are
// element counts 0, 1, 7 (odd) and 4097 (4 Ki + 1) for every type and operation; at 1 MiB of data
// every collective x algorithm x group size runs with one type of each element size (1, 4, 8 bytes)
// and one operation of each kernel family (arithmetic, comparison, bitwise, user function), the
// sizes where segmentation, rendezvous and chunking change.
#ifndef UKAI_TESTS_RT_COLL_MATRIX_H_
#define UKAI_TESTS_RT_COLL_MATRIX_H_

#include <cmath>
#include <sstream>

#include "coll_test_util.h"

namespace ukai::rt::testing {

inline constexpr auto kWait = std::chrono::seconds(120);

struct Case {
  Collective coll;
  Algorithm alg;
  DataType type;
  ReduceOp op = ReduceOp::kSum;  // kUser: the affine composition (uint64), non-commutative
  uint64_t count = 0;
  std::string Name() const {
    std::ostringstream s;
    s << CollectiveName(coll) << "/" << AlgorithmName(alg) << "/" << DataTypeName(type);
    if (coll == Collective::kReduce || coll == Collective::kAllreduce ||
        coll == Collective::kReduceScatter) {
      s << "/" << ReduceOpName(op);
    }
    s << "/count=" << count;
    return s.str();
  }
};

inline bool Reduces(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllreduce || c == Collective::kReduceScatter;
}

template <class T>
T In(int r, uint64_t i, int salt, ReduceOp op) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (op == ReduceOp::kUser) return AffineValue(r, i, salt);
  }
  return ValueFor<T>(r, i, salt, op);
}

template <class T>
T Fold(int n, uint64_t i, int salt, ReduceOp op) {
  T acc = In<T>(0, i, salt, op);
  for (int j = 1; j < n; ++j) {
    if constexpr (std::is_same_v<T, uint64_t>) {
      if (op == ReduceOp::kUser) {
        acc = Compose(acc, In<T>(j, i, salt, op));
        continue;
      }
    }
    acc = Combine<T>(op, acc, In<T>(j, i, salt, op));
  }
  return acc;
}

template <class T>
void Check(const Case& c, int rank, const char* what, const std::vector<T>& got, uint64_t at,
           T want) {
  if (got[at] == want ||
      (std::is_floating_point_v<T> && std::isnan(double(want)) && std::isnan(double(got[at])))) {
    return;
  }
  ADD_FAILURE() << c.Name() << " rank " << rank << ": " << what << "[" << at << "] = " << +got[at]
                << ", expected " << +want;
}

// One member's part of case `c` (wrong elements and errors are reported as failures).
template <class T>
void RunTyped(Group& g, const Case& c, const Reduction& red) {
  const int n = g.size(), r = g.rank();
  const uint64_t count = c.count, nc = count * n;
  const int root = n == 1 ? 0 : static_cast<int>((count + static_cast<int>(c.alg)) % n);
  CollOptions o;
  o.algorithm = c.alg;
  // Small messages pipeline in 1 KiB chunks; 1 MiB ones take the default chunks, which are
  // over the rendezvous size.
  if ((c.alg == Algorithm::kChain || c.alg == Algorithm::kRelay) &&
      count * sizeof(T) < (1u << 20)) {
    o.chunk_bytes = 1024;
  }
  auto wait = [&](CollRequest req) {
    const Status st = req.WaitFor(kWait);
    if (!st.ok()) ADD_FAILURE() << c.Name() << " rank " << r << ": " << st.ToString();
    return st.ok();
  };
  std::vector<T> send, recv;
  switch (c.coll) {
    case Collective::kBarrier:
      wait(g.IBarrier(o));
      return;
    case Collective::kBroadcast:
      recv.assign(count, T{});
      if (r == root) {
        for (uint64_t i = 0; i < count; ++i) recv[i] = In<T>(root, i, 1, ReduceOp::kSum);
      }
      if (!wait(g.IBroadcast(recv, root, o))) return;
      for (uint64_t i = 0; i < count; ++i)
        Check(c, r, "buf", recv, i, In<T>(root, i, 1, ReduceOp::kSum));
      return;
    case Collective::kScatter:
      if (r == root) {
        for (uint64_t i = 0; i < nc; ++i) send.push_back(In<T>(root, i, 2, ReduceOp::kSum));
      }
      recv.assign(count, T{});
      if (!wait(g.IScatter(send, recv, root, o))) return;
      for (uint64_t i = 0; i < count; ++i)
        Check(c, r, "recv", recv, i, In<T>(root, r * count + i, 2, ReduceOp::kSum));
      return;
    case Collective::kGather:
    case Collective::kAllgather: {
      for (uint64_t i = 0; i < count; ++i) send.push_back(In<T>(r, i, 3, ReduceOp::kSum));
      const bool all = c.coll == Collective::kAllgather;
      if (all || r == root) recv.assign(nc, T{});
      if (!wait(all ? g.IAllgather(send, recv, o) : g.IGather(send, recv, root, o))) return;
      if (!all && r != root) return;
      for (int j = 0; j < n; ++j) {
        for (uint64_t i = 0; i < count; ++i)
          Check(c, r, "recv", recv, j * count + i, In<T>(j, i, 3, ReduceOp::kSum));
      }
      return;
    }
    case Collective::kReduce:
    case Collective::kAllreduce: {
      for (uint64_t i = 0; i < count; ++i) send.push_back(In<T>(r, i, 4, c.op));
      const bool all = c.coll == Collective::kAllreduce;
      if (all || r == root) recv.assign(count, T{});
      if (!wait(all ? g.IAllreduce(send, recv, red, o) : g.IReduce(send, recv, red, root, o)))
        return;
      if (!all && r != root) return;
      for (uint64_t i = 0; i < count; ++i) Check(c, r, "recv", recv, i, Fold<T>(n, i, 4, c.op));
      return;
    }
    case Collective::kReduceScatter:
      for (uint64_t i = 0; i < nc; ++i) send.push_back(In<T>(r, i, 5, c.op));
      recv.assign(count, T{});
      if (!wait(g.IReduceScatter(send, recv, red, o))) return;
      for (uint64_t i = 0; i < count; ++i)
        Check(c, r, "recv", recv, i, Fold<T>(n, r * count + i, 5, c.op));
      return;
    case Collective::kAlltoall:
      for (uint64_t i = 0; i < nc; ++i) send.push_back(In<T>(r, i, 6, ReduceOp::kSum));
      recv.assign(nc, T{});
      if (!wait(g.IAlltoall(send, recv, o))) return;
      for (int j = 0; j < n; ++j) {
        for (uint64_t i = 0; i < count; ++i)
          Check(c, r, "recv", recv, j * count + i, In<T>(j, r * count + i, 6, ReduceOp::kSum));
      }
      return;
    case Collective::kSendRecv:
      return;
  }
}

inline void RunCase(Group& g, const Case& c) {
  const Reduction red = c.op == ReduceOp::kUser ? AffineCompose() : Reduction(c.op);
  switch (c.type) {
    case DataType::kByte:
      return RunTyped<uint8_t>(g, c, red);
    case DataType::kInt32:
      return RunTyped<int32_t>(g, c, red);
    case DataType::kInt64:
      return RunTyped<int64_t>(g, c, red);
    case DataType::kUint32:
      return RunTyped<uint32_t>(g, c, red);
    case DataType::kUint64:
      return RunTyped<uint64_t>(g, c, red);
    case DataType::kFloat:
      return RunTyped<float>(g, c, red);
    case DataType::kDouble:
      return RunTyped<double>(g, c, red);
  }
}

inline constexpr DataType kAllTypes[] = {DataType::kByte,   DataType::kInt32,  DataType::kInt64,
                                         DataType::kUint32, DataType::kUint64, DataType::kFloat,
                                         DataType::kDouble};
inline constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin,
                                       ReduceOp::kMax, ReduceOp::kBand, ReduceOp::kBor,
                                       ReduceOp::kBxor};
inline constexpr Collective kAllCollectives[] = {
    Collective::kBarrier,   Collective::kBroadcast,     Collective::kScatter,
    Collective::kGather,    Collective::kAllgather,     Collective::kReduce,
    Collective::kAllreduce, Collective::kReduceScatter, Collective::kAlltoall};

inline bool Defined(DataType t, ReduceOp op) {
  const bool integer = t != DataType::kFloat && t != DataType::kDouble && t != DataType::kByte;
  if (t == DataType::kByte) return false;
  return integer || op < ReduceOp::kBand;
}

// The small sizes: everything.
inline std::vector<Case> SmallCases() {
  std::vector<Case> out;
  for (Collective c : kAllCollectives) {
    for (Algorithm alg : AlgorithmsFor(c)) {
      for (uint64_t count : {0, 1, 7, 4097}) {
        if (c == Collective::kBarrier) {
          if (count == 0) out.push_back({c, alg, DataType::kByte, ReduceOp::kSum, 0});
          continue;
        }
        for (DataType t : kAllTypes) {
          if (!Reduces(c)) {
            out.push_back({c, alg, t, ReduceOp::kSum, count});
            continue;
          }
          for (ReduceOp op : kAllOps) {
            if (Defined(t, op)) out.push_back({c, alg, t, op, count});
          }
          if (t == DataType::kUint64) out.push_back({c, alg, t, ReduceOp::kUser, count});
        }
      }
    }
  }
  return out;
}

// 1 MiB of data: one type per element size, one operation per kernel family.
inline std::vector<Case> LargeCases() {
  std::vector<Case> out;
  for (Collective c : kAllCollectives) {
    if (c == Collective::kBarrier) continue;
    for (Algorithm alg : AlgorithmsFor(c)) {
      if (!Reduces(c)) {
        for (DataType t : {DataType::kByte, DataType::kFloat, DataType::kDouble}) {
          out.push_back({c, alg, t, ReduceOp::kSum, (uint64_t{1} << 20) / DataTypeSize(t)});
        }
        continue;
      }
      out.push_back({c, alg, DataType::kDouble, ReduceOp::kSum, (1u << 20) / 8});
      out.push_back({c, alg, DataType::kInt32, ReduceOp::kBxor, (1u << 20) / 4});
      out.push_back({c, alg, DataType::kFloat, ReduceOp::kMax, (1u << 20) / 4});
      out.push_back({c, alg, DataType::kUint64, ReduceOp::kUser, (1u << 20) / 8});
    }
  }
  return out;
}

// Non-commutative operations with algorithms that cannot keep rank order are refused.
inline bool Refused(const Case& c) {
  if (c.op != ReduceOp::kUser || !Reduces(c.coll)) return false;
  return (c.coll == Collective::kAllreduce &&
          (c.alg == Algorithm::kRing || c.alg == Algorithm::kRecursiveHalving)) ||
         (c.coll == Collective::kReduceScatter && c.alg != Algorithm::kDirect);
}

inline void RunAll(CollWorld& w, const std::vector<Case>& cases) {
  w.Run([&](int r, Group* g) {
    for (const Case& c : cases) {
      if (Refused(c)) {
        std::vector<uint64_t> in(c.count * w.size() + 1, 1), out(c.count * w.size() + 1);
        CollOptions o;
        o.algorithm = c.alg;
        const Status st = c.coll == Collective::kAllreduce
                              ? g->Allreduce(std::span(in).first(c.count),
                                             std::span(out).first(c.count), AffineCompose(), o)
                              : g->ReduceScatter(std::span(in).first(c.count * w.size()),
                                                 std::span(out).first(c.count), AffineCompose(), o);
        EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.Name() << " rank " << r;
        EXPECT_NE(st.message().find("commutative"), std::string::npos) << st.ToString();
        continue;
      }
      RunCase(*g, c);
    }
  });
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_COLL_MATRIX_H_
