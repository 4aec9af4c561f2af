#include "sim/routing/detour_ud.h"

#include <cstdlib>

#include "sim/topology/faults.h"

namespace ukai::sim {

std::vector<uint8_t> FaultRegion(const Topology& t, int distance) {
  std::vector<int> ends;  // end nodes of faulty channels
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!t.NodeAlive(v)) continue;
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      if (t.Neighbor(v, p).valid() && !t.ChannelAlive(v, p)) {
        ends.push_back(v);
        break;
      }
    }
  }
  return NodesWithin(t, ends, distance);
}

DetourUdRouting::DetourUdRouting(const KaryNCube& topology, const SimConfig& config)
    : topo_(topology),
      ud_vc_(config.router.vcs - 1),
      fa_mask_((1u << ud_vc_) - 1),
      ud_mask_(1u << ud_vc_),
      timeout_(config.routing.timeout_cycles),
      distance_(config.routing.fault_region_distance),
      configured_root_(config.routing.root) {
  tables_.Reset(Build(configured_root_), topo_.NumNodes());
}

std::unique_ptr<DetourUdRouting::Tables> DetourUdRouting::Build(int root) const {
  auto t = std::make_unique<Tables>();
  t->region = FaultRegion(topo_, distance_);
  t->torus.Build(topo_);
  if (root < 0 && tables_.has_current() && topo_.NodeAlive(Root())) root = Root();
  t->updown.Build(topo_, UpDownRoot(topo_, root >= 0 ? root : configured_root_));
  return t;
}

void DetourUdRouting::TopologyChanged() { tables_.Reset(Build(-1), topo_.NumNodes()); }

void DetourUdRouting::Recover(const Tables& t, const RouteRequest& r, uint32_t* state,
                              RouteResult* result) const {
  const uint32_t ports = t.updown.Ports(r.node, r.dst, (*state & kDownBit) != 0);
  for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), ud_mask_);
  result->UseTableLookup();
}

void DetourUdRouting::Route(const RouteRequest& r, RouteResult* result) const {
  uint32_t& state = *r.message_state;
  const Tables& t = tables_.At(r.node);
  CountMisroute(topo_, r, &state);
  if ((state & kRecoveryBit) != 0) {
    if (r.in_port < topo_.NumNetworkPorts() && r.in_vc == ud_vc_) {
      const PortRef back = topo_.Neighbor(r.node, r.in_port);
      if (back.valid() && !t.updown.IsUpChannel(back.node, r.node)) state |= kDownBit;
    }
    Recover(t, r, &state, result);
    return;
  }
  if (r.blocked_cycles >= timeout_) {  // presumed deadlock: recovery starts here
    state |= kRecoveryBit;
    Recover(t, r, &state, result);
    return;
  }
  // A message that has detoured keeps the torus table to its destination (see header).
  if (t.region[r.node] || MisroutedHops(state) > 0) {
    state |= kUsedTableBit;
    const uint32_t ports = t.torus.Ports(r.node, r.dst);
    for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), fa_mask_);
    result->UseTableLookup();
    return;
  }
  for (int d = 0; d < topo_.n(); ++d) {  // table-free fully adaptive minimal routing
    const int c = topo_.Coord(r.node, d);
    const int t = topo_.Coord(r.dst, d);
    if (c == t) continue;
    const int off = topo_.Offset(d, c, t);
    result->Add(2 * d + (off > 0 ? 0 : 1), fa_mask_);
    if (topo_.torus() && 2 * std::abs(off) == topo_.k(d)) result->Add(2 * d + 1, fa_mask_);
  }
}

}  // namespace ukai::sim
