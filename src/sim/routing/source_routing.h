// `source` routing (the SSS-CORE network, docs/sss.md): the sender writes the route into the
// packet's header and the switches only read it. The route of a message (Message::route,
// RouteRequest::route) is one of
//   -1             the table's choice: route k of (src, dst) from the SourceRouteTable, k
//                  drawn once per message at its first router (hash of source,
//                  destination and cycle, kept in the routing-state bits 4-7; always 0
//                  with routing.in_order);
//   0..14          route k of (src, dst) as the NIC chose it (its packets take the routes
//                  of a pair in turn);
//   >= kDynamic    a route the NIC model registered while running: an explicit path
//                  (AddPath: a prefix of a table route to a switch's unit, one hop to a
//                  neighbour, a reversed tree path for an ack) or a multicast tree (AddTree:
//                  at each router the ports the packet is copied to, RouteResult::Fork()).
// No routing table is read in the switches (no router.table_lookup_cycles).
// VCs: every VC, or with routing.in_order one VC per pair of end nodes (a hash of the pair;
// the NIC also injects a pair's packets on one injection VC), which keeps a pair's packets
// in order: one path, one FIFO buffer per hop.
//
// Thread safety: Route() reads only; AddPath / AddTree / Remove run between cycles.
#ifndef UKAI_SIM_ROUTING_SOURCE_ROUTING_H_
#define UKAI_SIM_ROUTING_SOURCE_ROUTING_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/routing/routing.h"
#include "sim/routing/source_routes.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class SourceRouting final : public RoutingFunction {
 public:
  static constexpr int32_t kDynamic = 1 << 20;

  // One router of a multicast tree: the ports the packet leaves it by, in the order the
  // switch acquires them (RouteResult::kEjectPort: delivered here).
  struct TreeNode {
    int32_t node;
    std::vector<int32_t> ports;
  };

  SourceRouting(const Topology& topology, std::unique_ptr<SourceRouteTable> table, int vcs,
                bool in_order);

  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool MayFork() const override { return true; }

  const SourceRouteTable& table() const { return *table_; }
  const Topology& topology() const { return topo_; }
  bool in_order() const { return in_order_; }
  // The VC mask of a pair's packets (one VC with routing.in_order).
  uint32_t PairVcs(int src, int dst) const;

  // Registers an explicit path starting at router `start` (hops in order) or a tree; the id
  // is valid until Remove(id).
  int32_t AddPath(std::vector<RouteHop> hops);
  int32_t AddTree(std::vector<TreeNode> nodes);
  void Remove(int32_t id);
  int live_routes() const { return live_; }

 private:
  struct Dynamic {
    bool used = false;
    bool tree = false;
    std::vector<RouteHop> hops;   // a path
    std::vector<TreeNode> nodes;  // a tree, sorted by node
  };
  int32_t Store(Dynamic d);
  void RouteDynamic(const RouteRequest& r, RouteResult* result) const;

  const Topology& topo_;
  std::unique_ptr<SourceRouteTable> table_;
  uint32_t all_vcs_;
  int vcs_;
  bool in_order_;
  std::vector<Dynamic> dynamic_;
  std::vector<int32_t> free_;
  int live_ = 0;
};

// The registry's checks for `source`: any topology whose end nodes it can route between;
// no faults (the routes are static).
Status SourceSupports(const Topology& topology, const SimConfig& config);
std::unique_ptr<RoutingFunction> SourceCreate(const Topology& topology, const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_SOURCE_ROUTING_H_
