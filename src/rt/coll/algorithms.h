// The schedule builders, one function per (collective, algorithm), and the helpers they
// share. BuildSchedule (schedule.cc) picks them from its table. Each appends the steps of
// member a.rank to `b`; a.n >= 1, a.root in range, a.algorithm applies to a.coll (checked by
// the caller). Thread safety: pure functions.
#ifndef UKAI_RT_COLL_ALGORITHMS_H_
#define UKAI_RT_COLL_ALGORITHMS_H_

#include <cstdint>
#include <vector>

#include "rt/coll/schedule.h"

namespace ukai::rt::coll {

using Builder = Status (*)(const CollArgs& a, ScheduleBuilder* b);

// ---- helpers ----
// Element index where part i of `count` elements cut into `parts` begins (parts near equal).
inline uint64_t PartBegin(uint64_t count, uint64_t parts, uint64_t i) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(count) * i / parts);
}
// The lowest set bit of v (v > 0).
inline int LowBit(int v) { return v & -v; }
// The largest power of two <= n (n >= 1).
inline int FloorPow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
inline int Mod(int a, int n) { return ((a % n) + n) % n; }
// Binomial tree over relative ranks 0..n-1 rooted at 0: the parent of v > 0 and how many
// ranks v's subtree holds ([v, v + Subtree(v))).
inline int TreeParent(int v) { return v - LowBit(v); }
inline int Subtree(int v, int n) { return v == 0 ? n : (LowBit(v) < n - v ? LowBit(v) : n - v); }
// The children of v in the binomial tree over 0..n-1, nearest first.
inline std::vector<int> Children(int v, int n) {
  std::vector<int> out;
  const int limit = v == 0 ? n : LowBit(v);
  for (int m = 1; m < limit && v + m < n; m <<= 1) out.push_back(v + m);
  return out;
}
// The bytes of the collective's vector.
inline uint64_t Bytes(const CollArgs& a) { return a.count * a.element; }
// The chain's pipeline unit: whole elements, 64 KiB by default.
inline uint64_t ChunkBytes(const CollArgs& a) {
  uint64_t c = a.chunk_bytes == 0 ? uint64_t{64} << 10 : a.chunk_bytes;
  c -= c % a.element;
  return c == 0 ? a.element : c;
}

// ---- builders (alg_basic.cc) ----
Status BarrierDirect(const CollArgs& a, ScheduleBuilder* b);
Status BarrierBinomial(const CollArgs& a, ScheduleBuilder* b);
Status BarrierDissemination(const CollArgs& a, ScheduleBuilder* b);
Status BcastDirect(const CollArgs& a, ScheduleBuilder* b);
Status BcastBinomial(const CollArgs& a, ScheduleBuilder* b);
Status BcastChain(const CollArgs& a, ScheduleBuilder* b);
Status ScatterDirect(const CollArgs& a, ScheduleBuilder* b);
Status ScatterBinomial(const CollArgs& a, ScheduleBuilder* b);
Status GatherDirect(const CollArgs& a, ScheduleBuilder* b);
Status GatherBinomial(const CollArgs& a, ScheduleBuilder* b);
Status AllgatherDirect(const CollArgs& a, ScheduleBuilder* b);
Status AllgatherRing(const CollArgs& a, ScheduleBuilder* b);
Status AllgatherBruck(const CollArgs& a, ScheduleBuilder* b);
Status AlltoallDirect(const CollArgs& a, ScheduleBuilder* b);
Status AlltoallPairwise(const CollArgs& a, ScheduleBuilder* b);

// ---- builders (alg_reduce.cc) ----
Status ReduceDirect(const CollArgs& a, ScheduleBuilder* b);
Status ReduceBinomial(const CollArgs& a, ScheduleBuilder* b);
Status ReduceChain(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceDirect(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceBinomial(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceRecursiveDoubling(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceRing(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceRabenseifner(const CollArgs& a, ScheduleBuilder* b);
Status ReduceScatterDirect(const CollArgs& a, ScheduleBuilder* b);
Status ReduceScatterRing(const CollArgs& a, ScheduleBuilder* b);
Status ReduceScatterHalving(const CollArgs& a, ScheduleBuilder* b);
Status ReduceScatterPairwise(const CollArgs& a, ScheduleBuilder* b);

// ---- the full-mesh patent's relay algorithms (alg_relay.cc) ----
// The relays of a relay collective in part order (part i -> relays[i]), or an error naming
// the allowed range of K: broadcast K = n (the root relays its own part, embodiment 3) or
// 1..n-1 (the root does not relay, embodiment 6); reduce K = n or 1..n-1 without the root
// (Fig. 41A); allreduce 1..n. Lower part index -> lower rank ([0108]).
Result<std::vector<int>> RelaySet(Collective c, int n, int root, int k);
Status BcastRelay(const CollArgs& a, ScheduleBuilder* b);
Status ReduceRelay(const CollArgs& a, ScheduleBuilder* b);
Status AllreduceRelay(const CollArgs& a, ScheduleBuilder* b);

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_ALGORITHMS_H_
