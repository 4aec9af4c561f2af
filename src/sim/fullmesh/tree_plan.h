// The binomial-tree baseline (issue 12): collectives as binomial trees over the plain full
// mesh's direct links, built as ordinary plans so PlanTimer times them and ExecutePlanData
// moves and combines their real bytes.
//
// Ranks are relative to the tree root (rank r is members[(root_index + r) % n]). A node's
// tree messages go one at a time in round order: each starts once every earlier message the
// node sent or received has been delivered (store-and-forward, Segment::after). Rounds:
//   multicast: round k, rank r < 2^k sends the message to r + 2^k;
//   reduce: round k, rank r with r mod 2^(k+1) = 2^k sends its partial sum to r - 2^k;
//   scatter: round k from the top, rank r (a multiple of 2^(k+1)) sends the blocks of ranks
//     [r + 2^k, r + 2^(k+1)) to r + 2^k; gather: the reverse;
//   allreduce: reduce, then multicast of the sum; allgather: gather, then multicast of the
//     n blocks (both rooted at members[0]).
// Thread safety: pure functions.
#ifndef UKAI_SIM_FULLMESH_TREE_PLAN_H_
#define UKAI_SIM_FULLMESH_TREE_PLAN_H_

#include <vector>

#include "sim/fullmesh/fullmesh_types.h"
#include "sim/fullmesh/plan.h"

namespace ukai::sim::fullmesh {

// True for the operations with a binomial-tree baseline (not p2p, not all-to-all).
bool HasTreePlan(OpType t);
// The binomial-tree plan of `op` over `members` (its communicator); empty without a tree.
Plan TreePlan(const Operation& op, const std::vector<int>& members);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_TREE_PLAN_H_
