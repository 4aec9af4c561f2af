// Detour search for the management node (gateway patent Fig. 14, S42) and for pre-loaded
// detours: which destinations' normal (dimension-order) path from an I/O node crosses a
// faulty node, and a via-node detour round the faults for each.
//
// Affected set (exact, for any topology with a DorPlanner): the dimension-order paths
// from one source form a tree (a path's prefixes are the paths to its nodes), so the
// destinations whose path crosses a faulty node are the faulty nodes' subtrees. The
// patent's two-family rule for the mesh (claims item 66) is incomplete; this is not it.
//
// Detour (ours; the patent calls it "existing technology", ¶92): the shortest list of at
// most `max_via` via nodes whose dimension-order legs I/O node -> via... -> destination
// touch no faulty node; shortest by total hops, ties by lowest via indices. A pre-loaded
// detour avoids the interior nodes of the normal path instead of known faults.
//
// Thread safety: pure functions.
#ifndef UKAI_SIM_NIC_DETOUR_SEARCH_H_
#define UKAI_SIM_NIC_DETOUR_SEARCH_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/routing/dor_planner.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// Destinations (ascending, excluding `io` and faulty nodes) whose dimension-order path from
// `io` passes through a node with faulty[node] != 0.
std::vector<int> AffectedDestinations(const DorPlanner& planner, const Topology& topology, int io,
                                      const std::vector<uint8_t>& faulty);

// A detour io -> dst avoiding every node with avoid[node] != 0 (io and dst themselves
// excepted), with 1..max_via via nodes; nullopt when there is none.
std::optional<std::vector<int>> FindDetour(const DorPlanner& planner, const Topology& topology,
                                           int io, int dst, const std::vector<uint8_t>& avoid,
                                           int max_via);

// The pre-loaded default detour to `dst`: avoids the interior of the normal path.
std::optional<std::vector<int>> DisjointDetour(const DorPlanner& planner, const Topology& topology,
                                               int io, int dst, int max_via);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_DETOUR_SEARCH_H_
