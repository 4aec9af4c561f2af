// Builders with reductions: reduce, allreduce, reduce_scatter. Every combination names its
// operand order (Order): the contribution of the lower ranks is the left operand wherever
// the algorithm keeps rank order, so non-commutative operations and the floating-point
// results are the same on every member and every run.
#include <algorithm>
#include <vector>

#include "rt/coll/algorithms.h"

namespace ukai::rt::coll {
namespace {

// acc = x0 (op) x1 (op) ... (op) x(n-1): rank j's contribution arrives from j (tag `tag`) or,
// for j == rank, comes from `own`. Ordered, so the sum is the serial one.
void SerialAccumulate(const CollArgs& a, Region own, Region acc, uint32_t tag, ScheduleBuilder* b) {
  for (int j = 0; j < a.n; ++j) {
    const Order order = j == 0 ? Order::kCopy : Order::kDstFirst;
    if (j != a.rank) {
      b->Recv(j, tag, acc, order, /*ordered=*/true);
    } else if (order == Order::kCopy) {
      b->Copy(own, acc, /*ordered=*/true);
    } else {
      b->Combine(own, acc, order, /*ordered=*/true);
    }
  }
}

// The tree of a rooted reduction: commutative operations use ranks relative to the root;
// others rank 0 as the tree's root (rank order) and one more hop to the real root.
struct ReduceTree {
  int vroot, v;
  bool final_hop;
  int Abs(int x, int n) const { return (x + vroot) % n; }
};
ReduceTree TreeOf(const CollArgs& a) {
  ReduceTree t;
  t.vroot = a.commutative ? a.root : 0;
  t.v = Mod(a.rank - t.vroot, a.n);
  t.final_hop = t.vroot != a.root;
  return t;
}

// A combination waiting for the next round (recursive doubling and halving receive into
// the scratch, then combine at the start of the next round).
struct Pending {
  bool set = false;
  Region src, dst;
  Order order = Order::kDstFirst;
  void Flush(ScheduleBuilder* b) {
    if (set) b->Combine(src, dst, order);
    set = false;
  }
};

// Recursive doubling / halving fold non-powers of two: of the first 2 * rem ranks the even
// ones hand their data to the odd ones and take the result back at the end.
struct Fold {
  int p, rem, levels;
  int Core(int r) const { return r < 2 * rem ? r / 2 : r - rem; }
  int Actual(int c) const { return c < rem ? 2 * c + 1 : c + rem; }
  bool Extra(int r) const { return r < 2 * rem && r % 2 == 0; }
};
Fold FoldOf(int n) {
  Fold f;
  f.p = FloorPow2(n);
  f.rem = n - f.p;
  f.levels = 0;
  while ((1 << f.levels) < f.p) ++f.levels;
  return f;
}

// The reduce-scatter by recursive halving that Rabenseifner's allreduce and the halving
// reduce-scatter share. `own` (this rank's data) is copied to `acc` (the region of all
// parts); an odd rank of the fold first combines its even neighbour's data, received at
// scratch offset `scratch`. Then at level j core rank c swaps halves of its part range with
// core rank c ^ (p >> (j + 1)) and keeps its side's half; `part(lo, hi)` is the region of
// parts [lo, hi), and received halves land at `scratch`. Returns c; when it returns, every
// combination is scheduled and c's parts hold the reduction over all ranks.
template <typename PartRegion>
int HalvingReduceScatter(const Fold& f, int r, Region own, Region acc, uint64_t scratch,
                         PartRegion part, ScheduleBuilder* b) {
  Pending pending;
  b->Copy(own, acc);
  if (r < 2 * f.rem) {
    b->Recv(r - 1, 0, TmpBuf(scratch, acc.length));
    pending = {true, TmpBuf(scratch, acc.length), acc, Order::kSrcFirst};
  }
  const int c = f.Core(r);
  int lo = 0, hi = f.p;
  for (int j = 0; j < f.levels; ++j) {
    b->Round();
    pending.Flush(b);
    const int pc = c ^ (f.p >> (j + 1));
    const int partner = f.Actual(pc);
    const int mid = (lo + hi) / 2;
    const bool lower = c < pc;
    b->Send(partner, 1 + j, lower ? part(mid, hi) : part(lo, mid));
    if (lower) {
      hi = mid;
    } else {
      lo = mid;
    }
    const Region keep = part(lo, hi);
    b->Recv(partner, 1 + j, TmpBuf(scratch, keep.length));
    pending = {true, TmpBuf(scratch, keep.length), keep,
               partner < r ? Order::kSrcFirst : Order::kDstFirst};
  }
  b->Round();
  pending.Flush(b);
  return c;
}

}  // namespace

Status ReduceDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  if (a.rank != a.root) {
    b->Send(a.root, 0, SendBuf(0, s));
    return Status::Ok();
  }
  SerialAccumulate(a, SendBuf(0, s), RecvBuf(0, s), 0, b);
  return Status::Ok();
}

// Binomial reduce: each member combines its children's subtree sums into its own, nearest
// child (lowest ranks) first, and passes the result to its parent.
Status ReduceBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const ReduceTree t = TreeOf(a);
  const std::vector<int> kids = Children(t.v, a.n);
  const bool final_recv = t.final_hop && a.rank == a.root;
  if (t.v != 0 && kids.empty()) {
    b->Send(t.Abs(TreeParent(t.v), a.n), 0, SendBuf(0, s));
    if (final_recv) b->Recv(t.vroot, 1, RecvBuf(0, s));
    return Status::Ok();
  }
  Region acc = RecvBuf(0, s);
  if (t.v != 0 || t.final_hop) {
    b->NeedTmp(s);
    acc = TmpBuf(0, s);
  }
  b->Copy(SendBuf(0, s), acc, /*ordered=*/true);
  for (int c : kids) b->Recv(t.Abs(c, a.n), 0, acc, Order::kDstFirst, true);
  b->Round();
  if (t.v != 0) {
    b->Send(t.Abs(TreeParent(t.v), a.n), 0, acc);
    if (final_recv) b->Recv(t.vroot, 1, RecvBuf(0, s));
  } else if (t.final_hop) {
    b->Send(a.root, 1, acc);
  }
  return Status::Ok();
}

// Pipelined chain n-1 -> n-2 -> ... -> 0 (tree ranks): member v adds its own chunk c to the
// partial sum of v+1..n-1 and passes it on while the next chunk arrives.
Status ReduceChain(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), chunk = ChunkBytes(a);
  const uint64_t chunks = s == 0 ? 1 : (s + chunk - 1) / chunk;
  const ReduceTree t = TreeOf(a);
  const uint32_t final_tag = static_cast<uint32_t>(chunks);
  const bool final_recv = t.final_hop && a.rank == a.root;
  auto part = [&](Region (*buf)(uint64_t, uint64_t), uint64_t c) {
    const uint64_t begin = c * chunk;
    return buf(begin, std::min(s, begin + chunk) - begin);
  };
  if (a.n == 1) {
    b->Copy(SendBuf(0, s), RecvBuf(0, s));
    return Status::Ok();
  }
  if (t.v == a.n - 1) {
    for (uint64_t c = 0; c < chunks; ++c) {
      b->Send(t.Abs(t.v - 1, a.n), static_cast<uint32_t>(c), part(&SendBuf, c));
    }
    if (final_recv) b->Recv(t.vroot, final_tag, RecvBuf(0, s));
    return Status::Ok();
  }
  Region (*acc)(uint64_t, uint64_t) = &RecvBuf;
  if (t.v != 0 || t.final_hop) {
    b->NeedTmp(s);
    acc = &TmpBuf;
  }
  const int from = t.Abs(t.v + 1, a.n);
  for (uint64_t c = 0; c <= chunks; ++c) {
    if (t.v != 0) b->Round();
    if (c < chunks) {
      b->Copy(part(&SendBuf, c), part(acc, c), /*ordered=*/true);
      b->Recv(from, static_cast<uint32_t>(c), part(acc, c), Order::kDstFirst, true);
    }
    if (c >= 1 && t.v != 0) {
      b->Send(t.Abs(t.v - 1, a.n), static_cast<uint32_t>(c - 1), part(acc, c - 1));
    }
  }
  if (final_recv) b->Recv(t.vroot, final_tag, RecvBuf(0, s));
  if (t.v == 0 && t.final_hop) {
    b->Round();
    b->Send(a.root, final_tag, acc(0, s));
  }
  return Status::Ok();
}

Status AllreduceDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  for (int i = 1; i < a.n; ++i) b->Send(Mod(a.rank + i, a.n), 0, SendBuf(0, s));
  SerialAccumulate(a, SendBuf(0, s), RecvBuf(0, s), 0, b);
  return Status::Ok();
}

// Binomial reduce to rank 0, then binomial broadcast from rank 0.
Status AllreduceBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const int v = a.rank;
  const std::vector<int> kids = Children(v, a.n);
  Region acc = SendBuf(0, s);
  if (v == 0 || !kids.empty()) {
    acc = RecvBuf(0, s);
    if (v != 0) {
      b->NeedTmp(s);
      acc = TmpBuf(0, s);
    }
    b->Copy(SendBuf(0, s), acc, /*ordered=*/true);
    for (int c : kids) b->Recv(c, 0, acc, Order::kDstFirst, true);
    b->Round();
  }
  if (v != 0) {
    b->Send(TreeParent(v), 0, acc);
    b->Recv(TreeParent(v), 1, RecvBuf(0, s));
    b->Round();
  }
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) b->Send(*it, 1, RecvBuf(0, s));
  return Status::Ok();
}

// Recursive doubling: in step k core member c exchanges its whole vector with c ^ 2^k and
// combines (lower ranks' operand first); the partial sums cover aligned blocks of ranks.
Status AllreduceRecursiveDoubling(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const Fold f = FoldOf(a.n);
  const int r = a.rank;
  const uint32_t unfold_tag = static_cast<uint32_t>(f.levels + 1);
  if (f.Extra(r)) {
    b->Send(r + 1, 0, SendBuf(0, s));
    b->Recv(r + 1, unfold_tag, RecvBuf(0, s));
    return Status::Ok();
  }
  Pending pending;
  b->Copy(SendBuf(0, s), RecvBuf(0, s));
  if (r < 2 * f.rem) {
    b->NeedTmp(s);
    b->Recv(r - 1, 0, TmpBuf(0, s));
    pending = {true, TmpBuf(0, s), RecvBuf(0, s), Order::kSrcFirst};
  }
  const int c = f.Core(r);
  for (int k = 0; k < f.levels; ++k) {
    b->Round();
    pending.Flush(b);
    const int partner = f.Actual(c ^ (1 << k));
    b->NeedTmp(s);
    b->Send(partner, 1 + k, RecvBuf(0, s));
    b->Recv(partner, 1 + k, TmpBuf(0, s));
    pending = {true, TmpBuf(0, s), RecvBuf(0, s),
               partner < r ? Order::kSrcFirst : Order::kDstFirst};
  }
  b->Round();
  pending.Flush(b);
  if (r < 2 * f.rem) b->Send(r - 1, unfold_tag, RecvBuf(0, s));
  return Status::Ok();
}

// Ring: reduce-scatter (block b's partial sum travels b+1 -> b+2 -> ... -> b), then the
// allgather ring. Blocks are n near-equal parts of the vector.
Status AllreduceRing(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), e = a.element;
  const int r = a.rank, n = a.n;
  auto blk = [&](int i) {
    const uint64_t lo = PartBegin(a.count, n, i), hi = PartBegin(a.count, n, i + 1);
    return RecvBuf(lo * e, (hi - lo) * e);
  };
  b->Copy(SendBuf(0, s), RecvBuf(0, s));
  if (n == 1) return Status::Ok();
  b->NeedTmp((a.count + n - 1) / n * e);
  Pending pending;
  for (int k = 0; k + 1 < n; ++k) {
    b->Round();
    pending.Flush(b);
    b->Send(Mod(r + 1, n), k, blk(Mod(r - 1 - k, n)));
    const Region in = blk(Mod(r - 2 - k, n));
    b->Recv(Mod(r - 1, n), k, TmpBuf(0, in.length));
    pending = {true, TmpBuf(0, in.length), in, Order::kSrcFirst};
  }
  b->Round();
  pending.Flush(b);
  for (int k = 0; k + 1 < n; ++k) {
    if (k > 0) b->Round();
    b->Send(Mod(r + 1, n), n - 1 + k, blk(Mod(r - k, n)));
    b->Recv(Mod(r - 1, n), n - 1 + k, blk(Mod(r - k - 1, n)));
  }
  return Status::Ok();
}

// Rabenseifner: reduce-scatter by recursive halving (core member c ends with part c of p),
// then allgather by recursive doubling; non-powers of two fold as above.
Status AllreduceRabenseifner(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), e = a.element;
  const Fold f = FoldOf(a.n);
  const int r = a.rank;
  const uint32_t unfold_tag = static_cast<uint32_t>(2 * f.levels + 1);
  if (f.Extra(r)) {
    b->Send(r + 1, 0, SendBuf(0, s));
    b->Recv(r + 1, unfold_tag, RecvBuf(0, s));
    return Status::Ok();
  }
  auto range = [&](int lo, int hi) {
    const uint64_t b0 = PartBegin(a.count, f.p, lo) * e, b1 = PartBegin(a.count, f.p, hi) * e;
    return RecvBuf(b0, b1 - b0);
  };
  b->NeedTmp(s);
  const int c = HalvingReduceScatter(f, r, SendBuf(0, s), RecvBuf(0, s), 0, range, b);
  for (int j = 0; j < f.levels; ++j) {
    if (j > 0) b->Round();
    const int mask = 1 << j;
    const int pc = c ^ mask;
    const int mine = c & ~(mask - 1), theirs = pc & ~(mask - 1);
    const int partner = f.Actual(pc);
    b->Send(partner, 1 + f.levels + j, range(mine, mine + mask));
    b->Recv(partner, 1 + f.levels + j, range(theirs, theirs + mask));
  }
  if (r < 2 * f.rem) {
    b->Round();
    b->Send(r - 1, unfold_tag, RecvBuf(0, s));
  }
  return Status::Ok();
}

Status ReduceScatterDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  for (int i = 1; i < a.n; ++i) {
    const int j = Mod(a.rank + i, a.n);
    b->Send(j, 0, SendBuf(j * s, s));
  }
  SerialAccumulate(a, SendBuf(a.rank * s, s), RecvBuf(0, s), 0, b);
  return Status::Ok();
}

// Ring reduce-scatter: the partial sum of block b starts at b + 1 and ends at b.
Status ReduceScatterRing(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const int r = a.rank, n = a.n;
  auto blk = [&](int j) { return SendBuf(static_cast<uint64_t>(j) * s, s); };
  if (n == 1) {
    b->Copy(blk(0), RecvBuf(0, s));
    return Status::Ok();
  }
  b->NeedTmp(2 * s);
  const Region in = TmpBuf(0, s), out = TmpBuf(s, s);
  b->Send(Mod(r + 1, n), 0, blk(Mod(r - 1, n)));
  b->Recv(Mod(r - 1, n), 0, in);
  for (int k = 1; k + 1 < n; ++k) {
    b->Round();
    b->Copy(blk(Mod(r - 1 - k, n)), out);
    b->Combine(in, out, Order::kSrcFirst);
    b->Send(Mod(r + 1, n), k, out);
    b->Recv(Mod(r - 1, n), k, in);
  }
  b->Round();
  b->Copy(blk(r), RecvBuf(0, s));
  b->Combine(in, RecvBuf(0, s), Order::kSrcFirst);
  return Status::Ok();
}

// Recursive halving over the work copy of the vector; core member c ends with virtual part
// c: actual blocks 2c and 2c+1 for c < rem (one for the folded even rank), else c + rem.
Status ReduceScatterHalving(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), total = s * static_cast<uint64_t>(a.n);
  const Fold f = FoldOf(a.n);
  const int r = a.rank;
  const uint32_t unfold_tag = static_cast<uint32_t>(f.levels + 1);
  if (f.Extra(r)) {
    b->Send(r + 1, 0, SendBuf(0, total));
    b->Recv(r + 1, unfold_tag, RecvBuf(0, s));
    return Status::Ok();
  }
  auto vb = [&](int v) { return static_cast<uint64_t>(v < f.rem ? 2 * v : v + f.rem); };
  auto work = [&](int lo, int hi) { return TmpBuf(vb(lo) * s, (vb(hi) - vb(lo)) * s); };
  b->NeedTmp(2 * total);
  const int c = HalvingReduceScatter(f, r, SendBuf(0, total), TmpBuf(0, total), total, work, b);
  if (c < f.rem) {
    b->Send(2 * c, unfold_tag, TmpBuf(2 * c * s, s));
    b->Copy(TmpBuf((2 * c + 1) * s, s), RecvBuf(0, s));
  } else {
    b->Copy(TmpBuf(static_cast<uint64_t>(c + f.rem) * s, s), RecvBuf(0, s));
  }
  return Status::Ok();
}

// Pairwise: in step k member r sends block r + k to r + k and adds what r - k sent.
Status ReduceScatterPairwise(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const int r = a.rank, n = a.n;
  b->Copy(SendBuf(static_cast<uint64_t>(r) * s, s), RecvBuf(0, s));
  b->NeedTmp(s);
  Pending pending;
  for (int k = 1; k < n; ++k) {
    b->Round();
    pending.Flush(b);
    const int to = Mod(r + k, n);
    b->Send(to, k, SendBuf(static_cast<uint64_t>(to) * s, s));
    b->Recv(Mod(r - k, n), k, TmpBuf(0, s));
    pending = {true, TmpBuf(0, s), RecvBuf(0, s), Order::kDstFirst};
  }
  b->Round();
  pending.Flush(b);
  return Status::Ok();
}

}  // namespace ukai::rt::coll
