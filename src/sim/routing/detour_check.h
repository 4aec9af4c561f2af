// The deadlock-freedom check of `dor-detour` (routing/detour.h) behind `ukai sim check`
// (the table of cdg_check.cc): it builds the channel dependency graph of the via-node
// detours' VC layers from the routing's own Route() and proves it acyclic or prints a
// cycle.
//
// A dor-detour message is routed in dimension order towards its current target (its
// destination, or the next via node) on one VC layer; it moves one layer up when a new leg
// starts (it reaches a via node, or switches away from its normal path mid-way; switching
// at its source starts the first leg on layer 0, after injection, so no channel waits
// there). Dimension order is memoryless (the next hop and dateline class are a function of
// the current node and the target), so the dependencies are exactly
//   within a leg:  for every layer l, target t and healthy node n != t, the channel n takes
//                  towards t on layer l -> the channel its next node m != t takes towards t;
//   a new leg:     every channel into node m on layer l -> every channel m takes on layer
//                  l + 1 towards any other node (a leg that starts at m),
// over the channels alive at cycle 0 (a message that meets a dead channel or node has no
// candidate and is drained as undeliverable: nothing waits on it). A message's next hop
// depends on its via list, not only on its channel and destination, which is why this is a
// graph of its own and not an EscapeFunction of cdg_check.h.
//
// Thread safety: a free function.
#ifndef UKAI_SIM_ROUTING_DETOUR_CHECK_H_
#define UKAI_SIM_ROUTING_DETOUR_CHECK_H_

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/routing/cdg_check.h"
#include "sim/routing/routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// Builds the topology (mesh, torus or group), its cycle-0 faults and the dor-detour routing
// of `config` and checks the graph above. kInvalidArgument when the config cannot be built
// or the network is too large for the check (its size grows as nodes^2 x layers).
Result<CdgReport> CheckDorDetour(const SimConfig& config);

// The check on a built topology (faults applied) with `routing`: a DetourRouting with
// `layers` VC layers of `vcs` VCs, or a stand-in that reads the same message state words
// (DetourRouting::DetourState; the tests break the layers with one).
CdgReport CheckDetourLayers(const Topology& topology, const RoutingFunction& routing, int layers,
                            int vcs);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DETOUR_CHECK_H_
