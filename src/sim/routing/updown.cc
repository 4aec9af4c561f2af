#include "sim/routing/updown.h"

#include <string>

#include "sim/routing/route_state.h"

namespace ukai::sim {

void UpDownTables::Build(const Topology& t, int root) {
  nodes_ = t.NumNodes();
  ports_per_node_ = t.NumNetworkPorts();
  root_ = root;
  const int P = ports_per_node_;
  neighbor_.assign(static_cast<size_t>(nodes_) * P, -1);
  for (int v = 0; v < nodes_; ++v) {
    if (!t.NodeAlive(v)) continue;
    for (int p = 0; p < P; ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && t.NodeAlive(far.node))
        neighbor_[static_cast<size_t>(v) * P + p] = far.node;
    }
  }
  level_.assign(nodes_, kUnreachable);
  std::vector<int> queue;
  queue.reserve(static_cast<size_t>(nodes_) * 2);
  level_[root] = 0;
  queue.push_back(root);
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int p = 0; p < P; ++p) {
      const int w = neighbor_[static_cast<size_t>(v) * P + p];
      if (w >= 0 && level_[w] == kUnreachable) {
        level_[w] = level_[v] + 1;
        queue.push_back(w);
      }
    }
  }
  const size_t entries = static_cast<size_t>(nodes_) * nodes_ * 2;
  dist_.assign(entries, kUnreachable);
  ports_.assign(entries, 0);
  for (int d = 0; d < nodes_; ++d) {
    if (level_[d] != kUnreachable) BuildDestination(t, d, &queue);
  }
}

bool UpDownTables::IsUp(int node, int port) const {
  const int w = neighbor_[static_cast<size_t>(node) * ports_per_node_ + port];
  return w >= 0 && IsUpChannel(node, w);
}

// Backward BFS over states (node, phase) from (dst, *): phase 0 may take up or down
// channels (a down channel leads to phase 1), phase 1 only down channels.
void UpDownTables::BuildDestination(const Topology&, int dst, std::vector<int>* queue) {
  const int P = ports_per_node_;
  auto at = [&](int v, int phase) -> int& {
    return dist_[(static_cast<size_t>(v) * nodes_ + dst) * 2 + phase];
  };
  queue->clear();
  at(dst, 0) = at(dst, 1) = 0;
  queue->push_back(dst * 2);
  queue->push_back(dst * 2 + 1);
  for (size_t i = 0; i < queue->size(); ++i) {
    const int w = (*queue)[i] / 2, phase = (*queue)[i] % 2;
    const int dw = at(w, phase);
    // Predecessors v with a channel v -> w: the channels of w lead back to its neighbours.
    for (int p = 0; p < P; ++p) {
      const int v = neighbor_[static_cast<size_t>(w) * P + p];
      if (v < 0) continue;
      const bool up = IsUpChannel(v, w);
      // up channel v->w: (v,0) -> (w,0); down channel: (v,0) and (v,1) -> (w,1).
      if (up ? phase != 0 : phase != 1) continue;
      for (int pv = 0; pv < 2; ++pv) {
        if (up && pv == 1) continue;
        if (at(v, pv) == kUnreachable) {
          at(v, pv) = dw + 1;
          queue->push_back(v * 2 + pv);
        }
      }
    }
  }
  for (int v = 0; v < nodes_; ++v) {
    if (v == dst) continue;
    for (int phase = 0; phase < 2; ++phase) {
      const int dv = at(v, phase);
      if (dv == kUnreachable) continue;
      uint32_t mask = 0;
      for (int p = 0; p < P; ++p) {
        const int w = neighbor_[static_cast<size_t>(v) * P + p];
        if (w < 0) continue;
        const bool up = IsUp(v, p);
        if (phase == 1 && up) continue;
        if (at(w, up ? 0 : 1) == dv - 1) mask |= 1u << p;
      }
      ports_[(static_cast<size_t>(v) * nodes_ + dst) * 2 + phase] = mask;
    }
  }
}

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
  tables_.Build(topo_, UpDownRoot(topo_, configured_root_));
}

void UpDownRouting::TopologyChanged() {
  const int keep = topo_.NodeAlive(tables_.root()) ? tables_.root() : -1;
  tables_.Build(topo_, UpDownRoot(topo_, keep >= 0 ? keep : configured_root_));
}

void UpDownRouting::Route(const RouteRequest& r, RouteResult* result) const {
  uint32_t& state = *r.message_state;
  if (cube_ != nullptr) CountMisroute(*cube_, r, &state);
  if (r.in_port < topo_.NumNetworkPorts()) {
    // The channel it came by, seen from the upstream node: down sets the phase for good.
    const PortRef back = topo_.Neighbor(r.node, r.in_port);
    if (back.valid() && !tables_.IsUpChannel(back.node, r.node)) state |= kDownBit;
  }
  const uint32_t ports = tables_.Ports(r.node, r.dst, (state & kDownBit) != 0);
  for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), all_vcs_);
  result->UseTableLookup();
}

Status UpDownSupports(const Topology& topology, int root) {
  if (topology.NumNodes() > UpDownTables::kMaxNodes) {
    return Status::InvalidArgument("network.k: up*/down* routing tables support at most " +
                                   std::to_string(UpDownTables::kMaxNodes) +
                                   " nodes (the network has " +
                                   std::to_string(topology.NumNodes()) + ")");
  }
  if (root >= topology.NumNodes()) {
    return Status::InvalidArgument("routing.root: node " + std::to_string(root) +
                                   " does not exist (the network has nodes 0.." +
                                   std::to_string(topology.NumNodes() - 1) + ")");
  }
  return Status::Ok();
}

}  // namespace ukai::sim
