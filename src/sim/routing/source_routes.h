// SourceRouteTable: the routes a NIC writes into its packets' headers (routing.algorithm =
// "source"; the paper's table virtual node ID -> route), computed once for a topology:
// for every ordered pair of end nodes up to routing.source_paths routes, each the list of
// (router, output port) from the source's own router to the last switch. Routes pass
// through forwarding nodes only (never through another end node).
//
// Modes (routing.source_routes):
//   shortest  shortest paths (hop count);
//   updown    shortest up*/down* paths (Autonet): BFS levels from the root (routing.root,
//             default the switch of least eccentricity, ties to the lower number); a channel
//             is "up" when it leads to a lower level, or the same level and a lower node
//             number; a legal path never takes an up channel after a down one, so the
//             channel dependency graph of all routes is acyclic on any graph;
//   auto      shortest when the forwarding nodes form no cycle (a tree: the paths are the
//             unique ones, hence up*/down* too), updown otherwise.
// Several routes of a pair differ in their choices among the equally short next hops
// (parallel channels first of all); route k takes, at each step, the next hop given by
// the digits of k in the mixed radix of the choices met, duplicates skipped.
//
// Limits: at most kMaxTerminals end nodes and kMaxHops stored hops (errors name the keys).
// Thread safety: immutable after Build().
#ifndef UKAI_SIM_ROUTING_SOURCE_ROUTES_H_
#define UKAI_SIM_ROUTING_SOURCE_ROUTES_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// One hop of a route: the router at `node` sends the packet on `port`.
struct RouteHop {
  int32_t node;
  int32_t port;
};

class SourceRouteTable {
 public:
  static constexpr int kMaxTerminals = 1024;
  static constexpr int64_t kMaxHops = int64_t{1} << 24;

  // `root` < 0: the default root. Errors name routing.root, routing.source_paths or the
  // network size.
  static Result<std::unique_ptr<SourceRouteTable>> Build(const Topology& topology,
                                                         SourceRouteMode mode, int root,
                                                         int max_paths);

  SourceRouteMode mode() const { return mode_; }  // shortest or updown (auto resolved)
  int root() const { return root_; }
  int terminals() const { return terminals_; }
  int max_paths() const { return max_paths_; }
  // BFS level from the root (up*/down* direction; also defined in shortest mode).
  int level(int node) const { return level_[node]; }
  // Whether the channel node -> far is "up" (see the file comment).
  bool IsUp(int node, int far) const {
    return level_[far] < level_[node] || (level_[far] == level_[node] && far < node);
  }
  // The order in which a switch takes the branches of a multicast (routing.h Fork()):
  // smaller first. Up channels before down channels, down channels by their far end's
  // (level, number), so that holding one branch while waiting for the next closes no cycle.
  int64_t BranchOrder(int node, int far) const;

  int Paths(int src, int dst) const { return count_[Pair(src, dst)]; }
  std::span<const RouteHop> Path(int src, int dst, int k) const {
    const size_t i = Slot(src, dst, k);
    return {hops_.data() + begin_[i], hops_.data() + begin_[i] + length_[i]};
  }
  // Total routes stored.
  int64_t routes() const;
  // A route from any node `start` (an end node or a switch, e.g. a switch that converts a
  // multicast) to end node `dst`, chosen as route 0 is; empty when start == dst or none.
  std::vector<RouteHop> PathFrom(const Topology& t, int start, int dst) const;

 private:
  SourceRouteTable() = default;
  size_t Pair(int src, int dst) const { return static_cast<size_t>(src) * terminals_ + dst; }
  size_t Slot(int src, int dst, int k) const { return Pair(src, dst) * max_paths_ + k; }
  Status Compute(const Topology& t);
  // Route k (see the file comment) from `start` in phase 0 to end node d, by dist_; false
  // if there is none.
  bool Extract(const Topology& t, int start, int d, int64_t k, std::vector<RouteHop>* out) const;
  // The ports of node v's next hops in phase ph on a shortest legal route to end node d, in
  // port order, into `ports` (room for kMaxChoices); returns how many.
  static constexpr int kMaxChoices = 64;
  int NextHops(const Topology& t, int v, int ph, int d, int* ports) const;
  // The number of distinct routes from v (phase ph) to end node d, counted up to `need`.
  int CountRoutes(const Topology& t, int v, int ph, int d, int need) const;
  int NextPhase(int ph, int v, int w) const;
  int Dist(int d, int ph, int v) const {
    return dist_[(static_cast<size_t>(d) * phases_ + ph) * level_.size() + v];
  }

  SourceRouteMode mode_ = SourceRouteMode::kShortest;
  int root_ = 0;
  int terminals_ = 0;
  int max_paths_ = 1;
  std::vector<int> level_;
  std::vector<uint8_t> count_;   // per pair: routes stored
  std::vector<uint32_t> begin_;  // per slot (pair x max_paths): first hop in hops_
  std::vector<uint8_t> length_;  // per slot: hops
  std::vector<RouteHop> hops_;
  int phases_ = 1;
  std::vector<int32_t> dist_;  // [end node d][phase][node]: hops to d
};

// Whether the forwarding nodes of `t` (and the channels between them) contain a cycle
// (parallel channels between two nodes do not count).
bool ForwardingCycle(const Topology& t);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_SOURCE_ROUTES_H_
