#include "sim/routing/updown.h"

#include <string>

#include "sim/routing/route_state.h"

namespace ukai::sim {

void UpDownTables::Build(const Topology& t, int root) {
  root_ = root;
  level_.assign(t.NumNodes(), kUnreachable);
  std::vector<int> queue{root};
  level_[root] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && t.NodeAlive(far.node) && level_[far.node] == kUnreachable) {
        level_[far.node] = level_[v] + 1;
        queue.push_back(far.node);
      }
    }
  }
  paths_.Build(t, [&](int v, int p) {
    const int w = t.Neighbor(v, p).node;
    if (level_[v] == kUnreachable || level_[w] == kUnreachable) return -1;
    return IsUpChannel(v, w) ? 0 : 1;
  });
}

bool UpDownTables::IsUp(int node, int port) const { return paths_.ChannelPhase(node, port) == 0; }

int UpDownRoot(const Topology& topology, int configured) {
  if (configured >= 0 && configured < topology.NumNodes() && topology.NodeAlive(configured)) {
    return configured;
  }
  for (int v = 0; v < topology.NumNodes(); ++v) {
    if (topology.NodeAlive(v)) return v;
  }
  return 0;
}

UpDownRouting::UpDownRouting(const Topology& topology, int vcs, int root)
    : topo_(topology),
      cube_(dynamic_cast<const KaryNCube*>(&topology)),
      all_vcs_(vcs >= 32 ? ~0u : ((1u << vcs) - 1)),
      configured_root_(root) {
  tables_.Reset(Build(configured_root_), topo_.NumNodes());
}

std::unique_ptr<UpDownTables> UpDownRouting::Build(int root) const {
  if (root < 0 && tables_.has_current() && topo_.NodeAlive(Root())) root = Root();
  auto t = std::make_unique<UpDownTables>();
  t->Build(topo_, UpDownRoot(topo_, root >= 0 ? root : configured_root_));
  return t;
}

void UpDownRouting::TopologyChanged() { tables_.Reset(Build(-1), topo_.NumNodes()); }

void UpDownRouting::Route(const RouteRequest& r, RouteResult* result) const {
  uint32_t& state = *r.message_state;
  const UpDownTables& tables = tables_.At(r.node);
  if (cube_ != nullptr) CountMisroute(*cube_, r, &state);
  if (r.in_port < topo_.NumNetworkPorts()) {
    // The channel it came by, seen from the upstream node: down sets the phase for good.
    const PortRef back = topo_.Neighbor(r.node, r.in_port);
    if (back.valid() && !tables.IsUpChannel(back.node, r.node)) state |= kDownBit;
  }
  const uint32_t ports = tables.Ports(r.node, r.dst, (state & kDownBit) != 0);
  for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), all_vcs_);
  result->UseTableLookup();
}

Status UpDownSupports(const Topology& topology, int root) {
  if (topology.NumNodes() > UpDownTables::kMaxNodes) {
    return Status::InvalidArgument("network.k: up*/down* routing tables support at most " +
                                   std::to_string(UpDownTables::kMaxNodes) +
                                   " nodes (the network has " +
                                   std::to_string(topology.NumNodes()) + ")")
        .WithKey("network.k");
  }
  if (root >= topology.NumNodes()) {
    return Status::InvalidArgument("routing.root: node " + std::to_string(root) +
                                   " does not exist (the network has nodes 0.." +
                                   std::to_string(topology.NumNodes() - 1) + ")")
        .WithKey("routing.root");
  }
  return Status::Ok();
}

}  // namespace ukai::sim
