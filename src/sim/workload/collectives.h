// MPI collectives as point-to-point messages: for every collective operation OTF2 defines
// and each named algorithm (workload.collective_algorithm), the schedule of messages --
// who sends to whom, how many bytes, and which earlier messages the sender must have
// received first. The OTF2 replay (workload/otf2_replay.h) turns a schedule into workload
// messages as the members reach the collective.
//
// Ranks are the communicator's ranks 0..p-1; rooted operations run on ranks relative to the
// root (vr = (rank - root) mod p). The algorithms (docs/workloads.md has the table):
//   binomial            binomial tree: bcast/scatter fan out from the root (a rank sends to
//                       vr + m for each power of two m below its lowest set bit, largest
//                       first), reduce/gather fan in; allreduce = reduce + bcast; allgather =
//                       gather + bcast; barrier = fan-in + fan-out of empty messages;
//                       reduce_scatter = reduce + scatter; alltoall = linear (every pair at
//                       once: the tree has no alltoall form); scan = recursive doubling.
//   ring                bcast/scatter: a chain from the root (vr -> vr + 1, forwarding);
//                       reduce/gather: a chain towards the root; allgather and
//                       reduce_scatter: the ring of p - 1 steps; allreduce = ring
//                       reduce_scatter + ring allgather on p chunks; alltoall = pairwise
//                       exchange (step s: r -> r + s); barrier = a token twice around the
//                       ring; scan = a chain (linear).
//   recursive-doubling  allreduce/allgather/barrier: log2(p') rounds of pairwise exchange
//                       (partner r xor 2^k) among p' = the largest power of two <= p, the
//                       other p - p' ranks folded in before (their data to rank r - p') and
//                       out after; bcast = binomial scatter of p chunks + recursive-doubling
//                       allgather (van de Geijn); reduce = recursive-halving reduce_scatter +
//                       binomial gather to the root (Rabenseifner); reduce_scatter =
//                       recursive halving; alltoall = Bruck (ceil(log2 p) rounds);
//                       scan/exscan = rank r sends to r + 2^k in round k; gather/scatter =
//                       the binomial tree (it is the recursive-halving pattern).
//   auto                chosen by op, communicator size and bytes as Open MPI's coll/tuned
//                       fixed decision rules do, mapped onto the three above (AutoAlgorithm).
//
// Sizes (CollectiveSizes): `n` = the vector of reductions and bcast; `block[r]` = rank r's
// block (gather, scatter, allgather: its contribution; alltoall: what it sends to each
// other rank; reduce_scatter: the part of the result rank r gets). Messages without data
// (barrier, the handle operations) have 0 bytes.
//
// Thread safety: pure functions.
#ifndef UKAI_SIM_WORKLOAD_COLLECTIVES_H_
#define UKAI_SIM_WORKLOAD_COLLECTIVES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/workload/workload_config.h"

namespace ukai::sim {

// OTF2_CollectiveOp's values (OTF2_Events.h), so that an OTF2 record converts by a cast.
enum class CollectiveOp : uint8_t {
  kBarrier = 0,
  kBcast = 1,
  kGather = 2,
  kGatherv = 3,
  kScatter = 4,
  kScatterv = 5,
  kAllgather = 6,
  kAllgatherv = 7,
  kAlltoall = 8,
  kAlltoallv = 9,
  kAlltoallw = 10,
  kAllreduce = 11,
  kReduce = 12,
  kReduceScatter = 13,
  kScan = 14,
  kExscan = 15,
  kReduceScatterBlock = 16,
  kCreateHandle = 17,
  kDestroyHandle = 18,
  kAllocate = 19,
  kDeallocate = 20,
  kCreateHandleAndAllocate = 21,
  kDestroyHandleAndDeallocate = 22,
};
inline constexpr int kCollectiveOpCount = 23;

// "barrier", "bcast", ..., "destroy_handle_and_deallocate"; "?" out of range.
std::string_view CollectiveOpName(CollectiveOp op);
// Whether the operation has a root (bcast, gather(v), scatter(v), reduce).
bool IsRooted(CollectiveOp op);

struct CollectiveSizes {
  int64_t n = 0;               // bcast, reduce, allreduce, scan, exscan; reduce_scatter: total
  std::vector<int64_t> block;  // per rank (see above); empty where unused
};

// One message of a schedule. `need`: how many of the messages addressed to `from` (in
// schedule order) it must have received before it sends this one -- the algorithm's step
// order (a tree node forwards after its receipt, a ring step after the previous one).
struct CollMessage {
  int from = 0, to = 0;  // communicator ranks
  int64_t bytes = 0;     // from `sizes` (blocks: the sum of their sizes)
  int need = 0;
  std::vector<int> blocks;  // ranks whose blocks it carries (empty: data sized from n)
};

struct CollSchedule {
  std::vector<CollMessage> messages;
  int64_t total_bytes() const;
};

// The algorithm `auto` picks for `op` on `p` ranks with these sizes (never kAuto).
CollectiveAlgorithm AutoAlgorithm(CollectiveOp op, int p, const CollectiveSizes& sizes);

// The schedule of `op` with `algorithm` (kAuto resolved by AutoAlgorithm) on `p` ranks
// (>= 1) with `root` (rooted operations). `sizes.block` must have p entries where the
// operation uses blocks. p = 1: no message.
CollSchedule BuildSchedule(CollectiveOp op, CollectiveAlgorithm algorithm, int p, int root,
                           const CollectiveSizes& sizes);

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_COLLECTIVES_H_
