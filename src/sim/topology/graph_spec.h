// GraphSpec: an arbitrary network of end nodes and switches as written in a config, before
// it is checked and numbered (topology/graph.h builds the topology from it). Three
// sources fill it: BookSim2's `anynet` file format (topology/anynet.h), the TOML keys
// network.nodes / network.switches / network.links (experiment/sss_config.h), and the tree
// generator of network.topology = "tree" (topology/graph.h: TreeSpec).
//
// Units: latencies in router cycles (-1: router.link_cycles).
// Thread safety: a plain value.
#ifndef UKAI_SIM_TOPOLOGY_GRAPH_SPEC_H_
#define UKAI_SIM_TOPOLOGY_GRAPH_SPEC_H_

#include <string>
#include <utility>
#include <vector>

namespace ukai::sim {

// One link between two nodes named `a` and `b`: `channels` parallel bidirectional
// channels (each a port at both ends), with a latency per direction.
struct GraphLinkSpec {
  std::string a, b;
  int latency_ab = -1;  // a -> b, cycles; -1: router.link_cycles
  int latency_ba = -1;  // b -> a
  int channels = 1;     // parallel channels (a wider link), >= 1
  std::string where;    // where it was written ("at net.toml:7:3", "at tree.anynet:2"), for errors
};

// A link a - b of one channel with the same latency both ways (-1: router.link_cycles).
inline GraphLinkSpec MakeLink(std::string a, std::string b, int latency = -1) {
  GraphLinkSpec l;
  l.a = std::move(a);
  l.b = std::move(b);
  l.latency_ab = l.latency_ba = latency;
  return l;
}

struct GraphSpec {
  // End nodes (NICs: traffic sources and sinks; they never forward) and switches, by
  // name, in number order: end node i is node i, switch j is node terminals.size() + j.
  std::vector<std::string> terminals;
  std::vector<std::string> switches;
  // Links in declaration order: the ports of a node are numbered in the order of the
  // links (and channels) that touch it.
  std::vector<GraphLinkSpec> links;
  std::string origin;  // what it was read from, for Describe() and errors ("anynet file x")

  bool empty() const { return terminals.empty() && switches.empty() && links.empty(); }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_GRAPH_SPEC_H_
