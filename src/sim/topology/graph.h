// GraphTopology: any network of end nodes and switches (network.topology = "graph" from
// BookSim2's anynet file or a TOML list of links; "tree" from the generator below). It is
// a flit-level topology like the others: every end node and every switch is a node with a
// router (an end node's router is its NIC's network side), switches may have any number of
// ports, links have a latency per direction and may be several parallel channels.
//
// Numbering: end nodes (terminals) are nodes 0..T-1 in the spec's order, switches T..N-1.
// The ports of a node are numbered in the order of the links that touch it (a link of c
// channels takes c consecutive ports). End nodes are traffic sources and sinks and never
// forward (Forwards() is false): routes only pass through switches.
//
// Checks of Create() (errors name the spec's origin and the link's position):
//   - node names unique, at least 2 end nodes, every node has a link;
//   - a link names two known, distinct nodes; the same pair of nodes at most once (a
//     wider link is one link with `channels`);
//   - at most kMaxPorts ports per node (the router's port masks are 32-bit);
//   - connected: every node reachable, and every end node reachable from every other
//     through switches only.
//
// Thread safety: immutable after construction (liveness: see Topology).
#ifndef UKAI_SIM_TOPOLOGY_GRAPH_H_
#define UKAI_SIM_TOPOLOGY_GRAPH_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sim/topology/graph_spec.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class GraphTopology final : public Topology {
 public:
  static constexpr int kMaxPorts = 31;  // network ports per node (+ the PE port <= 32)

  static Result<std::unique_ptr<GraphTopology>> Create(const GraphSpec& spec);

  int NumNodes() const override { return static_cast<int>(names_.size()); }
  int NumTerminals() const override { return terminals_; }
  int NumNetworkPorts() const override { return ports_; }
  PortRef Neighbor(int node, int port) const override;
  bool Forwards(int node) const override { return node >= terminals_; }
  int LinkCycles(int node, int port) const override;
  std::string Describe() const override { return describe_; }
  // Accepts a node's name ("n3", "s2.0") or its number.
  Result<int> ParseNode(const NodeRef& ref) const override;
  std::string NodeName(int node) const override { return names_[node]; }

  bool IsSwitch(int node) const { return node >= terminals_; }
  int NumSwitches() const { return NumNodes() - terminals_; }
  // Ports in use at `node` (its degree counted in channels).
  int Degree(int node) const { return static_cast<int>(adj_[node].size()); }
  // Whether the channel leaving `node` on `port` joins two switches: a link "above the
  // lowest switch level" (the result field upper_link_bytes counts these).
  bool UpperChannel(int node, int port) const;
  // The node called `name`, or -1.
  int Find(const std::string& name) const;

 private:
  struct Port {
    PortRef far;
    int latency;  // cycles, -1: router.link_cycles
  };
  GraphTopology() = default;

  int terminals_ = 0;
  int ports_ = 1;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::vector<Port>> adj_;
  std::string describe_;
};

// The hierarchical network the paper draws (network.topology = "tree"): `levels` levels
// of switches, each switch with `arity` children (end nodes below the lowest level), one
// switch at the top: arity^levels end nodes "n0".."n<T-1>" (left to right) and switches
// "s<level>.<index>" (level 1 = the lowest). The link from a switch to its parent is
// `upper_channels` parallel channels (network.tree_upper_bandwidth: a wider upper link).
// Ports of a switch: its children first (left to right), then the channels to its parent.
// Errors name network.tree_arity / network.tree_levels / network.tree_upper_bandwidth.
Result<GraphSpec> TreeSpec(int arity, int levels, int upper_channels);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_GRAPH_H_
