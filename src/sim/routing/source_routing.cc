#include "sim/routing/source_routing.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/routing/route_state.h"

namespace ukai::sim {
namespace {

constexpr int kPathShift = 4;  // route_state.h: bits 4-7 free for one algorithm

}  // namespace

SourceRouting::SourceRouting(const Topology& topology, std::unique_ptr<SourceRouteTable> table,
                             int vcs, bool in_order)
    : topo_(topology),
      table_(std::move(table)),
      all_vcs_(vcs >= 32 ? ~0u : (1u << vcs) - 1),
      vcs_(vcs),
      in_order_(in_order) {}

uint32_t SourceRouting::PairVcs(int src, int dst) const {
  if (!in_order_) return all_vcs_;
  const uint32_t h = static_cast<uint32_t>(src) * 2654435761u ^ static_cast<uint32_t>(dst) * 40503u;
  return 1u << (h % static_cast<uint32_t>(vcs_));
}

void SourceRouting::Route(const RouteRequest& r, RouteResult* result) const {
  if (r.route >= kDynamic) {
    RouteDynamic(r, result);
    return;
  }
  if (r.src < 0 || r.dst < 0 || r.src >= table_->terminals() || r.dst >= table_->terminals()) {
    return;  // not a pair of end nodes and no route of its own: drained as undeliverable
  }
  if (r.src == r.dst && r.node != r.dst) {
    // A terminal's message to itself that came through its switch (router.model =
    // booksim, as BookSim2's source and sink share one router port): back down to it.
    for (int p = 0; p < topo_.NumNetworkPorts(); ++p) {
      if (topo_.Neighbor(r.node, p).node == r.dst) {
        result->Add(p, PairVcs(r.src, r.dst));
        return;
      }
    }
    return;
  }
  const int paths = table_->Paths(r.src, r.dst);
  if (paths == 0) return;
  int k = r.route;
  if (k < 0) {
    uint32_t& state = *r.message_state;
    uint32_t chosen = (state & kRoutingBits) >> kPathShift;
    if (chosen == 0) {
      uint32_t h = static_cast<uint32_t>(r.src) * 73856093u ^
                   static_cast<uint32_t>(r.dst) * 19349663u ^
                   static_cast<uint32_t>(r.now) * 83492791u;
      h ^= h >> 15;
      chosen = 1 + (in_order_ ? 0u : h % static_cast<uint32_t>(paths));
      state = (state & ~kRoutingBits) | (chosen << kPathShift);
    }
    k = static_cast<int>(chosen) - 1;
  }
  k = std::min(k, paths - 1);
  for (const RouteHop& hop : table_->Path(r.src, r.dst, k)) {
    if (hop.node == r.node) {
      result->Add(hop.port, PairVcs(r.src, r.dst));
      return;
    }
  }
}

void SourceRouting::RouteDynamic(const RouteRequest& r, RouteResult* result) const {
  const size_t index = static_cast<size_t>(r.route - kDynamic);
  if (index >= dynamic_.size() || !dynamic_[index].used) return;
  const Dynamic& d = dynamic_[index];
  const uint32_t vcs = in_order_ ? PairVcs(r.src, std::max(r.dst, 0)) : all_vcs_;
  if (!d.tree) {
    for (const RouteHop& hop : d.hops) {
      if (hop.node == r.node) {
        result->Add(hop.port, vcs);
        return;
      }
    }
    return;
  }
  auto it = std::lower_bound(d.nodes.begin(), d.nodes.end(), r.node,
                             [](const TreeNode& t, int32_t node) { return t.node < node; });
  if (it == d.nodes.end() || it->node != r.node) return;
  for (int32_t port : it->ports) result->Add(port, vcs);
  if (it->ports.size() > 1) result->Fork();
}

int32_t SourceRouting::Store(Dynamic d) {
  d.used = true;
  ++live_;
  if (!free_.empty()) {
    const int32_t i = free_.back();
    free_.pop_back();
    dynamic_[i] = std::move(d);
    return kDynamic + i;
  }
  dynamic_.push_back(std::move(d));
  return kDynamic + static_cast<int32_t>(dynamic_.size()) - 1;
}

int32_t SourceRouting::AddPath(std::vector<RouteHop> hops) {
  Dynamic d;
  d.hops = std::move(hops);
  return Store(std::move(d));
}

int32_t SourceRouting::AddTree(std::vector<TreeNode> nodes) {
  Dynamic d;
  d.tree = true;
  std::sort(nodes.begin(), nodes.end(),
            [](const TreeNode& a, const TreeNode& b) { return a.node < b.node; });
  d.nodes = std::move(nodes);
  return Store(std::move(d));
}

void SourceRouting::Remove(int32_t id) {
  const size_t index = static_cast<size_t>(id - kDynamic);
  if (id < kDynamic || index >= dynamic_.size() || !dynamic_[index].used) return;
  dynamic_[index] = Dynamic();
  free_.push_back(static_cast<int32_t>(index));
  --live_;
}

Status SourceSupports(const Topology& topology, const SimConfig& config) {
  if (config.faults.any()) {
    return Status::InvalidArgument(
               "routing.algorithm: 'source' routes are computed once and do not avoid faults; "
               "remove the faults.* settings")
        .WithKey("routing.algorithm");
  }
  if (config.router.switching == Switching::kWormhole && config.sss.active() &&
      config.sss.multicast == MulticastKind::kHierarchical) {
    return Status::InvalidArgument(
               "router.switching: hierarchical multicast copies packets in the switches, which "
               "needs virtual cut-through ('vct', 'vct-saf' or 'saf'), not 'wormhole'")
        .WithKey("router.switching");
  }
  Result<std::unique_ptr<SourceRouteTable>> table =
      SourceRouteTable::Build(topology, config.routing.source_routes, config.routing.root,
                              config.routing.in_order ? 1 : config.routing.source_paths);
  return table.ok() ? Status::Ok() : table.status();
}

std::unique_ptr<RoutingFunction> SourceCreate(const Topology& topology, const SimConfig& config) {
  Result<std::unique_ptr<SourceRouteTable>> table =
      SourceRouteTable::Build(topology, config.routing.source_routes, config.routing.root,
                              config.routing.in_order ? 1 : config.routing.source_paths);
  return std::make_unique<SourceRouting>(topology, std::move(table).value(), config.router.vcs,
                                         config.routing.in_order);
}

}  // namespace ukai::sim
