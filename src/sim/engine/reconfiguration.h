// Reconfiguration: the Detour-UD paper's Section 3 procedure as a simulated protocol, run by
// the Network (engine/network.h) when timed faults or repairs happen with
// reconfig.mode = "protocol" (docs/simulator.md, "Reconfiguration").
//
// Timeline of one reconfiguration that starts at cycle t (ReconfigPlan; control messages
// travel on the UD-VC, modelled as reconfig.hop_cycles per hop without contention):
//   1. detection: the neighbours of the fault (or repair) notice it at
//      detect = t + reconfig.detect_cycles; the configured discard happens then;
//   2. the fault-region nodes agree on the region and nominate a root:
//      + hop_cycles x 2 x routing.fault_region_distance;
//   3. the request reaches the root (+ hop_cycles x distance from the region's
//      lowest-numbered node), which computes its tables (+ compute_cycles);
//   4. the reconfiguration message goes down the new BFS tree: node v at level L receives it
//      at recv(v) = root_start + L x (compute + hop), pauses its PE (no new message
//      starts), computes and switches its tables at update(v) = recv(v) + compute, then
//      forwards it;
//   5. completion is reported up to the root: done = max_v(update(v) + L(v) x hop); the
//      root then broadcasts the restart: node v resumes at done + L(v) x hop.
// Several fault regions (events while a reconfiguration is under way) are synchronised
// through the root: the running reconfiguration is cancelled and a new one covering every
// fault starts from the new event (the higher-priority root wins).
// Root: static = the first healthy node of reconfig.root_priority, or the current root
// while healthy (no change needed on a repair); fault-region = the fault region's
// lowest-numbered node (the "upper-left corner" of Fig. 5 with dimension 0 fastest).
//
// Thread safety: plain values and free functions.
#ifndef UKAI_SIM_ENGINE_RECONFIGURATION_H_
#define UKAI_SIM_ENGINE_RECONFIGURATION_H_

#include <cstdint>
#include <vector>

#include "sim/topology/fault_spec.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

struct ReconfigPlan {
  int64_t start = 0, detect = 0, root_start = 0, done = 0, end = 0;
  int root = -1;
  std::vector<int64_t> recv, update, resume;  // per node; -1 for faulty / unreachable nodes
};

// Plans a reconfiguration of `target` (the topology with every fault and repair applied)
// starting at `now`, for the fault region `region` (healthy end nodes of the changed
// channels), with `root` chosen by ChooseRoot().
ReconfigPlan PlanReconfiguration(const Topology& target, const ReconfigConfig& config, int64_t now,
                                 const std::vector<int>& region, int root, int region_distance);

// The new root: see the file comment. `priority`: reconfig.root_priority resolved;
// `current`: the routing's current root (-1 when it has none). -1 when no rule applies
// (the routing then keeps its own default).
int ChooseRoot(const Topology& target, const ReconfigConfig& config,
               const std::vector<int>& priority, int current, const std::vector<int>& region);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_RECONFIGURATION_H_
