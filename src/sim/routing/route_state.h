// Bits of the per-message routing state word (RouteRequest::message_state) shared by the
// fault-tolerant routings (updown, detour-ud, detour-nf), which the run statistics read
// (experiment/run.cc): whether the message entered deadlock recovery, whether it used a
// fault-region routing table, and how many of its hops were misrouted (did not lower the
// fault-free minimal distance to the destination: detours and 180-degree turns).
#ifndef UKAI_SIM_ROUTING_ROUTE_STATE_H_
#define UKAI_SIM_ROUTING_ROUTE_STATE_H_

#include <cstdint>

#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

inline constexpr uint32_t kRecoveryBit = 1u << 0;   // entered deadlock recovery
inline constexpr uint32_t kDownBit = 1u << 1;       // up*/down*: a down channel was taken
inline constexpr uint32_t kUsedTableBit = 1u << 2;  // used a fault-region table
inline constexpr uint32_t kRoutingBits = 0xF0;      // bits 4-7: free for one algorithm
inline constexpr int kMisrouteShift = 8;            // bits 8-31: misrouted hops

inline uint32_t MisroutedHops(uint32_t state) { return state >> kMisrouteShift; }

// Counts the hop by which the head reached request.node as misrouted when it did not
// lower the minimal (fault-free) distance to the destination. Counts once per hop (the
// first routing at a router, blocked_cycles == 0); saturates at 2^24 - 1.
inline void CountMisroute(const KaryNCube& topo, const RouteRequest& r, uint32_t* state) {
  if (r.in_port >= topo.NumNetworkPorts() || r.blocked_cycles != 0) return;
  const PortRef back = topo.Neighbor(r.node, r.in_port);
  if (!back.valid() || topo.Distance(r.node, r.dst) < topo.Distance(back.node, r.dst)) return;
  if (MisroutedHops(*state) < (1u << (32 - kMisrouteShift)) - 1) *state += 1u << kMisrouteShift;
}

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_ROUTE_STATE_H_
