// up*/down* routing (Autonet; spec detour-ud.md) over a BFS spanning tree of the LIVE
// topology (faulty nodes and channels removed), and the routing tables built from it.
//
// Directions: a BFS from the root gives every healthy node a level (hops from the root).
// The channel u -> v is "up" when level(v) < level(u), or the levels are equal and
// v < u (node number); otherwise it is "down". A legal path takes zero or more up channels
// followed by zero or more down channels (never up after down). The channel dependency
// graph of legal paths is acyclic on any connected graph, so up*/down* is deadlock-free
// with any number of VCs.
//
// Tables: for every (node, destination) and phase — "up allowed" (nothing taken yet, or
// only up channels) and "down only" (a down channel was taken) — the bitmap of output ports
// (bit p = network port p) that start a SHORTEST legal path from that node in that phase.
// The "up allowed" table is the paper's up/down table (Fig. 3). A message keeps its phase
// in one bit of its routing state; following the table in its phase it always reaches its
// destination (the rest of a shortest legal path is a legal path of the next phase).
//
// Memory: 2 x N x N port masks (uint32); limited to kMaxNodes nodes.
// Thread safety: const methods only read; Build() must not run while routing runs.
#ifndef UKAI_SIM_ROUTING_UPDOWN_H_
#define UKAI_SIM_ROUTING_UPDOWN_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "sim/routing/phased_table.h"
#include "sim/routing/routing.h"
#include "sim/routing/staged_tables.h"
#include "sim/topology/kary_ncube.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class UpDownTables {
 public:
  static constexpr int kMaxNodes = PhasedPathTable::kMaxNodes;
  static constexpr int kUnreachable = PhasedPathTable::kUnreachable;

  // (Re)builds everything on the live channels of `topology` from `root` (a healthy node).
  void Build(const Topology& topology, int root);

  int root() const { return root_; }
  // BFS level of a healthy node (kUnreachable for faulty or cut-off nodes).
  int level(int node) const { return level_[node]; }
  // Whether the live channel leaving `node` on `port` is an up channel.
  bool IsUp(int node, int port) const;
  // Whether a channel from healthy node u to its neighbour v is an up channel.
  bool IsUpChannel(int u, int v) const {
    return level_[v] < level_[u] || (level_[v] == level_[u] && v < u);
  }
  // Ports starting a shortest legal path from `node` to `dst` in the given phase (0 when
  // node == dst or unreachable).
  uint32_t Ports(int node, int dst, bool down_phase) const {
    return paths_.Ports(node, dst, down_phase);
  }
  // Length of a shortest legal path (kUnreachable when none).
  int Distance(int node, int dst, bool down_phase) const {
    return paths_.Distance(node, dst, down_phase);
  }

 private:
  int root_ = 0;
  std::vector<int> level_;
  PhasedPathTable paths_;  // phase 0 = up, phase 1 = down
};

// The default root: `configured` when >= 0, else the lowest-numbered healthy node.
int UpDownRoot(const Topology& topology, int configured);

// `updown`: every hop reads the up/down table (router.table_lookup_cycles) and may use
// every VC of the ports it gives. Routing state (route_state.h): kDownBit once a down
// channel was taken; on a k-ary n-cube the misrouted hops are counted.
// TopologyChanged() rebuilds the tables at once (keeping the root while it is healthy,
// else the default root).
class UpDownRouting final : public RoutingFunction {
 public:
  UpDownRouting(const Topology& topology, int vcs, int root);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  void TopologyChanged() override;
  int Root() const override { return tables_.current().root(); }
  bool OnRecoveryNetwork(uint32_t) const override { return true; }
  int PrepareTables(int root) override { return tables_.Prepare(Build(root)); }
  void CommitNodeTables(int node, int set) override { tables_.Commit(node, set); }
  void FinishTables(int set) override {
    if (!tables_.Finish(set)) TopologyChanged();
  }

  // The current tables (every node's once a reconfiguration has finished).
  const UpDownTables& tables() const { return tables_.current(); }

 private:
  const Topology& topo_;
  const KaryNCube* cube_;  // topo_ when it is a k-ary n-cube (misroute counting), else null
  uint32_t all_vcs_;
  int configured_root_;
  // root -1: the current root while healthy, else routing.root / the lowest healthy node.
  std::unique_ptr<UpDownTables> Build(int root) const;
  StagedTables<UpDownTables> tables_;
};

// Checks routing.root and the network size for up*/down* tables; errors name the key.
Status UpDownSupports(const Topology& topology, int root);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_UPDOWN_H_
