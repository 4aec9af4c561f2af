#include "sim/routing/detour_check.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "sim/routing/detour.h"
#include "sim/routing/registry.h"
#include "sim/topology/factory.h"
#include "sim/topology/faults.h"

namespace ukai::sim {
namespace {

// Route() calls the check may make (nodes^2 x layers): beyond this it refuses, as the
// extended check of cdg_check.cc refuses what would not fit.
constexpr int64_t kMaxRouteCalls = 50'000'000;

class DetourGraph {
 public:
  DetourGraph(const Topology& t, const RoutingFunction& r, int layers, int vcs)
      : t_(t),
        r_(r),
        layers_(layers),
        vcs_(vcs),
        P_(t.NumNetworkPorts()),
        adj_(static_cast<size_t>(t.NumNodes()) * P_ * vcs),
        into_(static_cast<size_t>(t.NumNodes()) * layers),
        leg_start_(static_cast<size_t>(t.NumNodes()) * layers) {}

  CdgReport Run() {
    const int n = t_.NumNodes();
    for (int layer = 0; layer < layers_; ++layer) {
      for (int target = 0; target < n; ++target) {
        if (!t_.NodeAlive(target)) continue;
        for (int node = 0; node < n; ++node) {
          if (node != target && t_.NodeAlive(node)) WithinLeg(layer, node, target);
        }
      }
      for (int node = 0; node < n && layer > 0; ++node) {
        if (t_.NodeAlive(node)) LegStarts(layer, node);
      }
    }
    CdgReport rep;
    for (int node = 0; node < n; ++node) {  // a new leg: into m on l -> m's starts on l + 1
      for (int layer = 0; layer + 1 < layers_; ++layer) {
        for (int64_t in : into_[Slot(node, layer)]) {
          for (int64_t out : leg_start_[Slot(node, layer + 1)]) Edge(in, out);
        }
      }
    }
    for (auto& a : adj_) {
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
      rep.dependencies += static_cast<int64_t>(a.size());
    }
    for (uint8_t u : used_) rep.channels += u;
    rep.direct = rep.dependencies;  // no adaptive VCs: every dependency is direct
    const std::vector<int64_t> cycle = FindShortCycle(adj_);
    const std::string what = Describe();
    if (!cycle.empty()) {
      rep.text = "NOT deadlock-free: " + what + ": dependency cycle of " +
                 std::to_string(cycle.size()) + " channels:";
      for (int64_t c : cycle) rep.text += "\n  " + ChannelName(c) + " ->";
      rep.text += "\n  " + ChannelName(cycle.front());
      return rep;
    }
    rep.ok = true;
    rep.text = "deadlock-free: " + what + " use " + std::to_string(rep.channels) +
               " virtual channels with " + std::to_string(rep.dependencies) +
               " dependencies (every dimension-order leg on its layer, every new leg one layer "
               "up); the dependency graph is acyclic (a message whose next channel is dead is "
               "drained as undeliverable and counted, so none waits on a fault)";
    return rep;
  }

 private:
  size_t Slot(int node, int layer) const {
    return static_cast<size_t>(node) * layers_ + static_cast<size_t>(layer);
  }
  int64_t Channel(int node, int port, int vc) const {
    return (static_cast<int64_t>(node) * P_ + port) * vcs_ + vc;
  }
  std::string ChannelName(int64_t c) const {
    const int64_t np = c / vcs_;
    return t_.NodeName(static_cast<int>(np / P_)) + " " + t_.PortName(static_cast<int>(np % P_)) +
           " vc " + std::to_string(c % vcs_);
  }
  std::string Describe() const {
    return "dor-detour's " + std::to_string(layers_) + " VC layer(s)";
  }
  // The live hop a message at `node` takes towards `target` on `layer` (in its leg), as
  // (port, VC mask); port -1 when it has none or the hop is dead.
  std::pair<int, uint32_t> Hop(int node, uint32_t state, const int32_t* via, int via_count,
                               int dst) const {
    RouteRequest req;
    req.node = node;
    req.in_port = 0;  // not the PE port: a message in flight
    req.src = node;
    req.dst = dst;
    req.message_state = &state;
    req.via = via;
    req.via_count = via_count;
    RouteResult result;
    r_.Route(req, &result);
    if (result.size() != 1) return {-1, 0};
    const int port = result[0].port;
    const PortRef far = t_.LiveNeighbor(node, port);
    if (!far.valid() || !t_.NodeAlive(far.node)) return {-1, 0};
    return {port, result[0].vc_mask};
  }
  // A message on `layer` heading for `target` (its destination: layer 0 on its normal
  // path, higher layers with every via node passed).
  std::pair<int, uint32_t> LegHop(int layer, int node, int target) const {
    const int32_t via[1] = {static_cast<int32_t>(target)};
    if (layer == 0) return Hop(node, 0, nullptr, 0, target);
    return Hop(node, DetourRouting::DetourState(layer, 1), via, 1, target);
  }
  void Mark(int node, int port, uint32_t mask) {
    if (used_.empty()) used_.assign(adj_.size(), 0);
    for (int vc = 0; vc < vcs_; ++vc) {
      if ((mask >> vc) & 1) used_[static_cast<size_t>(Channel(node, port, vc))] = 1;
    }
  }
  void Edge(int64_t from, int64_t to) { adj_[static_cast<size_t>(from)].push_back(to); }
  void WithinLeg(int layer, int node, int target) {
    const auto [port, mask] = LegHop(layer, node, target);
    if (port < 0) return;
    Mark(node, port, mask);
    const int next = t_.Neighbor(node, port).node;
    for (int vc = 0; vc < vcs_; ++vc) {
      if ((mask >> vc) & 1) into_[Slot(next, layer)].push_back(Channel(node, port, vc));
    }
    if (next == target) return;
    const auto [port2, mask2] = LegHop(layer, next, target);
    if (port2 < 0) return;
    for (int a = 0; a < vcs_; ++a) {
      for (int b = 0; b < vcs_ && ((mask >> a) & 1); ++b) {
        if ((mask2 >> b) & 1) Edge(Channel(node, port, a), Channel(next, port2, b));
      }
    }
  }
  // The first hops of a leg that starts at `node` on `layer` (a message on layer - 1 that
  // reaches its via node `node` and goes on towards any other node).
  void LegStarts(int layer, int node) {
    std::vector<int64_t>& out = leg_start_[Slot(node, layer)];
    for (int target = 0; target < t_.NumNodes(); ++target) {
      if (target == node || !t_.NodeAlive(target)) continue;
      const int32_t via[2] = {static_cast<int32_t>(node), static_cast<int32_t>(target)};
      const auto [port, mask] = Hop(node, DetourRouting::DetourState(layer - 1, 0), via, 2, target);
      if (port < 0) continue;
      Mark(node, port, mask);
      for (int vc = 0; vc < vcs_; ++vc) {
        if ((mask >> vc) & 1) out.push_back(Channel(node, port, vc));
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    auto& in = into_[Slot(node, layer - 1)];
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
  }

  const Topology& t_;
  const RoutingFunction& r_;
  int layers_, vcs_, P_;
  std::vector<std::vector<int64_t>> adj_;
  std::vector<std::vector<int64_t>> into_;       // [node][layer]: channels into the node
  std::vector<std::vector<int64_t>> leg_start_;  // [node][layer]: first hops of a new leg
  std::vector<uint8_t> used_;
};

}  // namespace

Result<CdgReport> CheckDorDetour(const SimConfig& config) {
  Result<std::unique_ptr<Topology>> topo = MakeTopology(config.network);
  if (!topo.ok()) return topo.status();
  Topology& t = **topo;
  if (config.faults.any()) {
    Result<FaultPlan> plan = PlanFaults(t, config.faults, config.seed);
    if (!plan.ok()) return plan.status();
    plan->initial.ApplyTo(&t);
  }
  Result<const RoutingEntry*> algo = FindRoutingAlgorithm(config.routing.algorithm);
  if (!algo.ok()) return algo.status();
  UKAI_RETURN_IF_ERROR((*algo)->supports(t, config));
  const std::unique_ptr<RoutingFunction> routing = (*algo)->create(t, config);
  const auto* detour = dynamic_cast<const DetourRouting*>(routing.get());
  if (detour == nullptr) {
    return Status::InvalidArgument("routing.algorithm: '" + config.routing.algorithm +
                                   "' is not dor-detour");
  }
  const int64_t nodes = t.NumNodes();
  if (nodes * nodes * detour->layers() > kMaxRouteCalls) {
    return Status::InvalidArgument(
        "network: too large for the dor-detour dependency check: " + std::to_string(nodes) +
        " nodes need about " + std::to_string(nodes * nodes * detour->layers()) +
        " routing calls (limit " + std::to_string(kMaxRouteCalls) + ")");
  }
  return CheckDetourLayers(t, *detour, detour->layers(), config.router.vcs);
}

CdgReport CheckDetourLayers(const Topology& t, const RoutingFunction& routing, int layers,
                            int vcs) {
  return DetourGraph(t, routing, layers, vcs).Run();
}

}  // namespace ukai::sim
