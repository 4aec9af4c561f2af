// Builders without reductions: barrier, broadcast, scatter, gather, allgather, alltoall.
// S = a.count * a.element bytes; ranks relative to the root where a tree needs it
// (v = rank - root mod n).
#include <algorithm>
#include <vector>

#include "rt/coll/algorithms.h"

namespace ukai::rt::coll {
namespace {

int Abs(const CollArgs& a, int v) { return (v + a.root) % a.n; }
int Rel(const CollArgs& a) { return Mod(a.rank - a.root, a.n); }

}  // namespace

Status BarrierDirect(const CollArgs& a, ScheduleBuilder* b) {
  const Region none = RecvBuf(0, 0);
  if (a.rank == 0) {
    for (int j = 1; j < a.n; ++j) b->Recv(j, 0, none);
    b->Round();
    for (int j = 1; j < a.n; ++j) b->Send(j, 1, none);
  } else {
    b->Send(0, 0, none);
    b->Recv(0, 1, none);
  }
  return Status::Ok();
}

Status BarrierBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const Region none = RecvBuf(0, 0);
  const int v = a.rank;
  const std::vector<int> kids = Children(v, a.n);
  for (int c : kids) b->Recv(c, 0, none);
  b->Round();
  if (v != 0) {
    b->Send(TreeParent(v), 0, none);
    b->Recv(TreeParent(v), 1, none);
    b->Round();
  }
  for (int c : kids) b->Send(c, 1, none);
  return Status::Ok();
}

// Dissemination: in step k every member signals rank + 2^k and waits for rank - 2^k.
Status BarrierDissemination(const CollArgs& a, ScheduleBuilder* b) {
  const Region none = RecvBuf(0, 0);
  uint32_t k = 0;
  for (int dist = 1; dist < a.n; dist *= 2, ++k) {
    b->Round();
    b->Send(Mod(a.rank + dist, a.n), k, none);
    b->Recv(Mod(a.rank - dist, a.n), k, none);
  }
  return Status::Ok();
}

Status BcastDirect(const CollArgs& a, ScheduleBuilder* b) {
  const Region all = RecvBuf(0, Bytes(a));
  if (a.rank == a.root) {
    for (int i = 1; i < a.n; ++i) b->Send(Abs(a, i), 0, all);
  } else {
    b->Recv(a.root, 0, all);
  }
  return Status::Ok();
}

Status BcastBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const Region all = RecvBuf(0, Bytes(a));
  const int v = Rel(a);
  if (v != 0) {
    b->Recv(Abs(a, TreeParent(v)), 0, all);
    b->Round();
  }
  std::vector<int> kids = Children(v, a.n);
  std::reverse(kids.begin(), kids.end());  // the largest subtree first
  for (int c : kids) b->Send(Abs(a, c), 0, all);
  return Status::Ok();
}

// Pipelined chain root -> root+1 -> ... : member v receives chunk c and forwards chunk c - 1
// in the same round.
Status BcastChain(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), chunk = ChunkBytes(a);
  const uint64_t chunks = s == 0 ? 1 : (s + chunk - 1) / chunk;
  auto part = [&](uint64_t c) {
    const uint64_t begin = c * chunk;
    return RecvBuf(begin, std::min(s, begin + chunk) - begin);
  };
  const int v = Rel(a);
  const int next = v + 1 < a.n ? Abs(a, v + 1) : -1;
  if (v == 0) {
    for (uint64_t c = 0; c < chunks && next >= 0; ++c)
      b->Send(next, static_cast<uint32_t>(c), part(c));
    return Status::Ok();
  }
  const int prev = Abs(a, v - 1);
  for (uint64_t c = 0; c <= chunks; ++c) {
    b->Round();
    if (c < chunks) b->Recv(prev, static_cast<uint32_t>(c), part(c));
    if (c >= 1 && next >= 0) b->Send(next, static_cast<uint32_t>(c - 1), part(c - 1));
  }
  return Status::Ok();
}

Status ScatterDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  if (a.rank != a.root) {
    b->Recv(a.root, 0, RecvBuf(0, s));
    return Status::Ok();
  }
  for (int i = 1; i < a.n; ++i) {
    const int j = Abs(a, i);
    b->Send(j, 0, SendBuf(j * s, s));
  }
  b->Copy(SendBuf(a.root * s, s), RecvBuf(0, s));
  return Status::Ok();
}

// Binomial scatter: every member receives its subtree's blocks (in relative order) from its
// parent in one message and passes each child its part; the root first rotates its blocks
// into relative order when it is not rank 0.
Status ScatterBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), n = static_cast<uint64_t>(a.n), root = static_cast<uint64_t>(a.root);
  const int v = Rel(a);
  const int sub = Subtree(v, a.n);
  Region (*base)(uint64_t, uint64_t) = &TmpBuf;
  if (v == 0) {
    if (a.root == 0) {
      base = &SendBuf;
    } else {
      b->NeedTmp(n * s);
      b->Copy(SendBuf(root * s, (n - root) * s), TmpBuf(0, (n - root) * s));
      b->Copy(SendBuf(0, root * s), TmpBuf((n - root) * s, root * s));
    }
  } else if (sub == 1) {
    b->Recv(Abs(a, TreeParent(v)), 0, RecvBuf(0, s));
    return Status::Ok();
  } else {
    b->NeedTmp(sub * s);
    b->Recv(Abs(a, TreeParent(v)), 0, TmpBuf(0, sub * s));
    b->Round();
  }
  std::vector<int> kids = Children(v, a.n);
  std::reverse(kids.begin(), kids.end());
  for (int c : kids) {
    b->Send(Abs(a, c), 0, base(static_cast<uint64_t>(c - v) * s, Subtree(c, a.n) * s));
  }
  b->Copy(base(0, s), RecvBuf(0, s));
  return Status::Ok();
}

Status GatherDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  if (a.rank != a.root) {
    b->Send(a.root, 0, SendBuf(0, s));
    return Status::Ok();
  }
  for (int i = 1; i < a.n; ++i) {
    const int j = Abs(a, i);
    b->Recv(j, 0, RecvBuf(j * s, s));
  }
  b->Copy(SendBuf(0, s), RecvBuf(a.root * s, s));
  return Status::Ok();
}

// Binomial gather: the reverse of the binomial scatter.
Status GatherBinomial(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), n = static_cast<uint64_t>(a.n), root = static_cast<uint64_t>(a.root);
  const int v = Rel(a);
  const int sub = Subtree(v, a.n);
  const std::vector<int> kids = Children(v, a.n);
  if (v != 0 && kids.empty()) {
    b->Send(Abs(a, TreeParent(v)), 0, SendBuf(0, s));
    return Status::Ok();
  }
  Region (*base)(uint64_t, uint64_t) = &TmpBuf;
  if (v == 0 && a.root == 0) {
    base = &RecvBuf;
  } else {
    b->NeedTmp(static_cast<uint64_t>(sub) * s);
  }
  b->Copy(SendBuf(0, s), base(0, s));
  for (int c : kids) {
    b->Recv(Abs(a, c), 0, base(static_cast<uint64_t>(c - v) * s, Subtree(c, a.n) * s));
  }
  b->Round();
  if (v != 0) {
    b->Send(Abs(a, TreeParent(v)), 0, TmpBuf(0, sub * s));
  } else if (a.root != 0) {
    b->Copy(TmpBuf(0, (n - root) * s), RecvBuf(root * s, (n - root) * s));
    b->Copy(TmpBuf((n - root) * s, root * s), RecvBuf(0, root * s));
  }
  return Status::Ok();
}

Status AllgatherDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  b->Copy(SendBuf(0, s), RecvBuf(a.rank * s, s));
  for (int i = 1; i < a.n; ++i) {
    const int j = Mod(a.rank + i, a.n);
    b->Send(j, 0, SendBuf(0, s));
    b->Recv(j, 0, RecvBuf(j * s, s));
  }
  return Status::Ok();
}

// Ring: in step k member r passes block r - k to r + 1 and gets block r - k - 1 from r - 1.
Status AllgatherRing(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  const int r = a.rank, n = a.n;
  b->Copy(SendBuf(0, s), RecvBuf(r * s, s));
  for (int k = 0; k + 1 < n; ++k) {
    b->Round();
    b->Send(Mod(r + 1, n), k, RecvBuf(Mod(r - k, n) * s, s));
    b->Recv(Mod(r - 1, n), k, RecvBuf(Mod(r - k - 1, n) * s, s));
  }
  return Status::Ok();
}

// Bruck's allgather (recursive doubling for any n): the scratch holds blocks r, r + 1, ...;
// in step k member r sends its first min(2^k, n - 2^k) blocks to r - 2^k and receives as
// many from r + 2^k behind them; a final rotation puts them in rank order.
Status AllgatherBruck(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a), n = static_cast<uint64_t>(a.n), r = static_cast<uint64_t>(a.rank);
  b->NeedTmp(n * s);
  b->Copy(SendBuf(0, s), TmpBuf(0, s));
  uint32_t k = 0;
  for (int dist = 1; dist < a.n; dist *= 2, ++k) {
    const uint64_t cnt = std::min<uint64_t>(dist, n - dist);
    b->Round();
    b->Send(Mod(a.rank - dist, a.n), k, TmpBuf(0, cnt * s));
    b->Recv(Mod(a.rank + dist, a.n), k, TmpBuf(dist * s, cnt * s));
  }
  b->Round();
  b->Copy(TmpBuf(0, (n - r) * s), RecvBuf(r * s, (n - r) * s));
  b->Copy(TmpBuf((n - r) * s, r * s), RecvBuf(0, r * s));
  return Status::Ok();
}

Status AlltoallDirect(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  b->Copy(SendBuf(a.rank * s, s), RecvBuf(a.rank * s, s));
  for (int i = 1; i < a.n; ++i) {
    const int j = Mod(a.rank + i, a.n);
    b->Send(j, 0, SendBuf(j * s, s));
    b->Recv(j, 0, RecvBuf(j * s, s));
  }
  return Status::Ok();
}

// Pairwise: in step k member r sends block r + k to r + k and receives from r - k.
Status AlltoallPairwise(const CollArgs& a, ScheduleBuilder* b) {
  const uint64_t s = Bytes(a);
  b->Copy(SendBuf(a.rank * s, s), RecvBuf(a.rank * s, s));
  for (int k = 1; k < a.n; ++k) {
    const int to = Mod(a.rank + k, a.n), from = Mod(a.rank - k, a.n);
    b->Round();
    b->Send(to, k, SendBuf(to * s, s));
    b->Recv(from, k, RecvBuf(from * s, s));
  }
  return Status::Ok();
}

}  // namespace ukai::rt::coll
