// The deadlock-freedom check of `source` routing (`ukai sim check`; routing/cdg_check.h
// dispatches to it): the channel dependency graph of every route of the route tables,
// each with every VC it may use (one per pair with routing.in_order), must be acyclic, and
// every pair of end nodes must have a route. Routes are fixed paths, so this direct graph is
// the whole story for unicast packets. Multicast trees (RouteResult::Fork) hold branches
// while they wait for the next ones in the order the tables give (up channels first, then
// down channels by their far end's up*/down* rank), which adds only dependencies that
// follow that order (docs/sss.md); they are not in this graph.
//
// Thread safety: free functions.
#ifndef UKAI_SIM_ROUTING_SOURCE_CHECK_H_
#define UKAI_SIM_ROUTING_SOURCE_CHECK_H_

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/routing/cdg_check.h"

namespace ukai::sim {

Result<CdgReport> CheckSourceRoutes(const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_SOURCE_CHECK_H_
