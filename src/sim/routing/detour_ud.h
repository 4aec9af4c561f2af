// `detour-ud`: Yoshinaga et al.'s fault-tolerant adaptive deadlock-RECOVERY routing
// (spec detour-ud.md) on a k-ary n-cube (mesh or torus).
//
// VCs: the highest VC of each network port is the UD-VC (deadlock recovery only); the
// others are FA-VCs (router.vcs >= 2: 1 FA + 1 UD at least).
// Fault region: the healthy nodes within routing.fault_region_distance - 1 hops (in the
// healthy network) of an end node of a faulty channel (distance 1: the end nodes; 2 adds
// their neighbours). A faulty node makes all its channels faulty, so its healthy
// neighbours are end nodes. Without faults the region is empty.
// Per head, at each router (state bits in the message's routing state word):
//   - in recovery (kRecovery): the up/down table (UpDownTables, phase kept in kDown, set
//     on arrival by a down channel on the UD-VC) on the UD-VC only, reading the table
//     (router.table_lookup_cycles) — never back to the FA-VCs;
//   - else, blocked for routing.timeout_cycles or more (re-routed every blocked cycle):
//     deadlock presumed, recovery starts here (the table read is paid again);
//   - else, in the fault region: the torus table (ShortestPathTable: every output on a
//     shortest path in the network with its faults removed) on the FA-VCs, reading the
//     table (kUsedTable is set). A message that has taken a misrouted hop (one that did
//     not lower its fault-free distance: a detour) keeps the torus table after leaving the
//     region, to its destination: otherwise table-free minimal routing can send it back
//     towards the fault, a livelock seen on a 4x4 mesh with one faulty node (the paper
//     returns to table-free routing on leaving the region and does not discuss this);
//   - else: table-free fully adaptive minimal routing on the FA-VCs (every productive
//     direction; on a torus both ways when exactly k/2 away), no table delay.
// FA-VC candidates may include the port the head came in on (180-degree turn). The PE
// interface makes no turns (the router never routes back into the PE).
// Statistics (route_state.h): kRecoveryBit, kUsedTableBit and the misrouted-hop count.
// TopologyChanged() rebuilds the region and both tables at once (root kept while healthy).
#ifndef UKAI_SIM_ROUTING_DETOUR_UD_H_
#define UKAI_SIM_ROUTING_DETOUR_UD_H_

#include <cstdint>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/routing/route_state.h"
#include "sim/routing/routing.h"
#include "sim/routing/shortest_table.h"
#include "sim/routing/staged_tables.h"
#include "sim/routing/updown.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

// The fault region: 1 per node within `distance` - 1 hops of a faulty channel's end node.
std::vector<uint8_t> FaultRegion(const Topology& topology, int distance);

class DetourUdRouting final : public RoutingFunction {
 public:
  DetourUdRouting(const KaryNCube& topology, const SimConfig& config);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool ReRouteWhileBlocked() const override { return true; }
  void TopologyChanged() override;
  int Root() const override { return tables_.current().updown.root(); }
  bool OnRecoveryNetwork(uint32_t state) const override { return (state & kRecoveryBit) != 0; }
  int PrepareTables(int root) override { return tables_.Prepare(Build(root)); }
  void CommitNodeTables(int node, int set) override { tables_.Commit(node, set); }
  void FinishTables(int set) override {
    if (!tables_.Finish(set)) TopologyChanged();
  }

  int ud_vc() const { return ud_vc_; }
  // The current tables (every node's once a reconfiguration has finished).
  bool InRegion(int node) const { return tables_.current().region[node] != 0; }
  const UpDownTables& updown() const { return tables_.current().updown; }
  const ShortestPathTable& torus_table() const { return tables_.current().torus; }

 private:
  struct Tables {
    std::vector<uint8_t> region;
    ShortestPathTable torus;
    UpDownTables updown;
  };
  // Tables of the topology as it is now; root -1: the current root while healthy, else
  // routing.root / the lowest healthy node.
  std::unique_ptr<Tables> Build(int root) const;
  void Recover(const Tables& t, const RouteRequest& r, uint32_t* state, RouteResult* result) const;

  const KaryNCube& topo_;
  int ud_vc_;
  uint32_t fa_mask_, ud_mask_;
  int64_t timeout_;
  int distance_;
  int configured_root_;
  StagedTables<Tables> tables_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DETOUR_UD_H_
