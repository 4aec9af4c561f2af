// Topology: the graph of routers and bidirectional channels the simulator runs on.
//
// Every node has one router with NumNetworkPorts() network ports (numbered 0..P-1) plus one
// injection and one ejection port, both numbered P (the PE interface). Output port p of node
// a, when connected, leads to input port Neighbor(a, p).port of node Neighbor(a, p).node;
// channels are bidirectional, so that input port is also an output port leading back.
// A port that leads nowhere (a mesh edge) returns {-1, -1}. A per-channel alive mask (for
// the fault model, topology/faults.h) is kept here: a dead channel is reported by
// ChannelAlive() and by Neighbor() like an unconnected port only through LiveNeighbor();
// likewise a per-node alive flag (NodeAlive()). Config files name nodes through
// ParseNode() (node numbers by default; a topology adds coordinates or names).
//
// Thread safety: immutable after construction except SetChannelAlive(), which must not
// run while a simulation evaluates.
#ifndef UKAI_SIM_TOPOLOGY_TOPOLOGY_H_
#define UKAI_SIM_TOPOLOGY_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/topology/fault_spec.h"

namespace ukai::sim {

struct PortRef {
  int32_t node = -1;
  int32_t port = -1;
  bool valid() const { return node >= 0; }
};

class Topology {
 public:
  virtual ~Topology() = default;

  virtual int NumNodes() const = 0;
  virtual int NumNetworkPorts() const = 0;
  // The input port at the far end of output port `port` of `node`, or {-1,-1}.
  virtual PortRef Neighbor(int node, int port) const = 0;
  // A short human description ("10x10 torus").
  virtual std::string Describe() const = 0;
  // Name of a network port for messages ("+x", "-y", "+d3").
  virtual std::string PortName(int port) const;

  // The node a config names (faults.*). The default accepts node numbers 0..N-1 only;
  // errors name the node as written (ref.text) and ref.where.
  virtual Result<int> ParseNode(const NodeRef& ref) const;
  // How messages name a node: its number by default ("(3,4)" on a k-ary n-cube).
  virtual std::string NodeName(int node) const;

  // The PE (injection/ejection) port number.
  int PePort() const { return NumNetworkPorts(); }

  // End nodes (terminals: traffic sources and sinks) are nodes 0..NumTerminals()-1: every
  // node by default; the graph topology (graph.h) numbers its end nodes first, its switches
  // after, and so do the indirect topologies (switch_topology.h) their terminals and routers.
  virtual int NumTerminals() const { return NumNodes(); }
  // Whether a route may pass through `node` on its way elsewhere (false for the end nodes
  // of the graph and indirect topologies).
  virtual bool Forwards(int /*node*/) const { return true; }
  // Latency in cycles of the channel leaving `node` on `port`; -1: router.link_cycles.
  virtual int LinkCycles(int /*node*/, int /*port*/) const { return -1; }

  // Channel liveness (all alive by default). `Neighbor()` ignores liveness.
  bool ChannelAlive(int node, int port) const {
    return alive_.empty() || alive_[static_cast<size_t>(node) * NumNetworkPorts() + port];
  }
  void SetChannelAlive(int node, int port, bool alive);
  PortRef LiveNeighbor(int node, int port) const {
    return ChannelAlive(node, port) ? Neighbor(node, port) : PortRef{};
  }
  // Node liveness (all alive by default); only the flag: faults.h also kills its channels.
  bool NodeAlive(int node) const { return node_alive_.empty() || node_alive_[node] != 0; }
  void SetNodeAlive(int node, bool alive);
  // True when some node or channel is dead.
  bool AnyFault() const;

 private:
  std::vector<uint8_t> alive_;       // empty: all alive
  std::vector<uint8_t> node_alive_;  // empty: all alive
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_TOPOLOGY_H_
