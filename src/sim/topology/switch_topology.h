// SwitchTopology: the base of the indirect topologies (cmesh, flatfly, fattree, dragonfly),
// whose routers serve several terminals or none.
//
// The engine gives every node one router and one PE (topology.h), so a terminal is a node
// of its own: nodes 0..T-1 are the terminals (they send and receive traffic: NumTerminals()),
// nodes T..T+R-1 the routers (router r is node T + r; their PEs never send and nothing is
// addressed to them by traffic). A terminal node uses network port 0 only: a channel to its
// router's terminal port (TerminalPort()). Every node has the same number of network ports
// (the routers' radix); the ports a node does not use lead nowhere.
// Cost of this model against BookSim2's (whose terminals attach straight to the router's
// injection and ejection ports): a message crosses the terminal's one-port router at each
// end, i.e. two more router pipelines and two more channels (docs/simulator.md).
//
// Node names: terminals by number ("5"), routers "r<index>" (also accepted in configs as
// node number T + index).
//
// Thread safety: immutable after construction (liveness: see Topology).
#ifndef UKAI_SIM_TOPOLOGY_SWITCH_TOPOLOGY_H_
#define UKAI_SIM_TOPOLOGY_SWITCH_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class SwitchTopology : public Topology {
 public:
  int NumNodes() const override { return terminals_ + routers_; }
  int NumNetworkPorts() const override { return ports_; }
  int NumTerminals() const override { return terminals_; }
  bool Forwards(int node) const override { return node >= terminals_; }
  PortRef Neighbor(int node, int port) const override {
    return table_[static_cast<size_t>(node) * ports_ + port];
  }
  std::string NodeName(int node) const override;

  int NumRouters() const { return routers_; }
  bool IsTerminal(int node) const { return node < terminals_; }
  int RouterNode(int router) const { return terminals_ + router; }
  // Router index of a router node (node >= T).
  int RouterOf(int node) const { return node - terminals_; }
  // The router a terminal hangs on, and the router port it uses.
  int TerminalRouter(int terminal) const { return Neighbor(terminal, 0).node - terminals_; }
  int TerminalPort(int terminal) const { return Neighbor(terminal, 0).port; }
  // The router a destination node is reached through (itself for a router node).
  int DestinationRouter(int node) const {
    return IsTerminal(node) ? TerminalRouter(node) : RouterOf(node);
  }
  // Router hops (router-to-router channels) from router a to router b on the topology's
  // minimal routes: shortest paths (breadth-first search here; the topologies with a
  // formula override it), except on the dragonfly, whose minimal routes take one global
  // channel (local, global, local) where the graph may have shorter paths through two.
  virtual int RouterDistance(int a, int b) const;
  // Channels on a shortest path between nodes (terminal channels included).
  int Distance(int a, int b) const;

 protected:
  SwitchTopology(int terminals, int routers, int ports);
  // Joins output port pa of router a with port pb of router b (both directions).
  void ConnectRouters(int a, int pa, int b, int pb);
  // Attaches terminal t to port p of router r.
  void AttachTerminal(int t, int r, int p);
  // Checks the node count against the engine's limit; errors name `key`.
  static Status CheckSize(int64_t terminals, int64_t routers, const char* key);

 private:
  int terminals_, routers_, ports_;
  std::vector<PortRef> table_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_SWITCH_TOPOLOGY_H_
