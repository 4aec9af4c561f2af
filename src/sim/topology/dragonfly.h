// Dragonfly (Kim, Dally, Scott, Abts 2008) as BookSim2 builds it (its "dragonflynew"):
// g groups of a routers; every router has p terminals, a - 1 local channels (the group is
// fully connected) and h global channels; g = a*h + 1, so every pair of groups is joined by
// exactly one global channel. BookSim2 fixes a = 2p and h = p (its k = p, n = 1); here
// network.dragonfly_a and network.dragonfly_h may differ (0 = BookSim's choice).
//
// Numbering: router = group*a + i (i = 0..a-1); terminal = router*p + j (nodes 0..T-1,
// T = p*a*g; router r is node T + r: switch_topology.h).
// Router ports: 0..p-1 terminals; p + (m < i ? m : m - 1) the local channel to router m of
// the group; p + a - 1 + c (c = 0..h-1) global channel j = i*h + c of the group, leading to
// group (j < group ? j : j + 1), as in BookSim2.
//
// Thread safety: immutable after construction.
#ifndef UKAI_SIM_TOPOLOGY_DRAGONFLY_H_
#define UKAI_SIM_TOPOLOGY_DRAGONFLY_H_

#include <memory>
#include <string>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/switch_topology.h"

namespace ukai::sim {

class Dragonfly final : public SwitchTopology {
 public:
  // Errors name network.dragonfly_p / _a / _h.
  static Result<std::unique_ptr<Dragonfly>> Create(const NetworkConfig& config);
  // Terminals, routers and router ports of `config` (arithmetic only).
  static void Size(const NetworkConfig& config, double* nodes, int* ports);

  std::string Describe() const override;
  std::string PortName(int port) const override;
  // Hops of the minimal route (local, global, local: at most 3); see SwitchTopology.
  int RouterDistance(int a, int b) const override;
  // network.dragonfly_local_cycles / _global_cycles on a router's local / global ports
  // (-1, router.link_cycles, where they are 0 and on terminal channels).
  int LinkCycles(int node, int port) const override;

  int p() const { return p_; }
  int a() const { return a_; }
  int h() const { return h_; }
  int groups() const { return g_; }
  int GroupOf(int router) const { return router / a_; }
  int LocalPort(int from_i, int to_i) const { return p_ + (to_i < from_i ? to_i : to_i - 1); }
  int GlobalPort(int c) const { return p_ + a_ - 1 + c; }
  bool IsGlobalPort(int port) const { return port >= p_ + a_ - 1; }
  // The router of group `from` holding the global channel to group `to` (!= from), and
  // its port.
  int GatewayRouter(int from, int to) const {
    const int j = to < from ? to : to - 1;
    return from * a_ + j / h_;
  }
  int GatewayPort(int from, int to) const {
    const int j = to < from ? to : to - 1;
    return GlobalPort(j % h_);
  }

 private:
  Dragonfly(int p, int a, int h);

  int p_, a_, h_, g_;
  int local_cycles_ = -1, global_cycles_ = -1;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_DRAGONFLY_H_
