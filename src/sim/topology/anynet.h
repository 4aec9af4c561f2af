// BookSim2's `anynet` network file (network.topology = "graph", network.file), read into a
// GraphSpec (topology/graph_spec.h). The format, as BookSim2's own parser
// (src/networks/anynet.cpp) and its example (src/examples/anynet/anynet_file) define it:
//
//   router 0 node 0 node 1 node 2 router 1
//   router 1 node 3 node 4 node 5
//   router 2 node 6 node 7 node 8 router 1 router 0
//   router 0 router 3 10        <- a 10-cycle channel router 0 -> router 3
//
// Each line starts with a head (`router ID` or `node ID`) followed by the things it is
// connected to (`router ID` / `node ID`), each optionally followed by a latency in cycles.
// - A router-router latency is one-way (head -> body); the other direction keeps its own
//   declaration, or router.link_cycles (BookSim: 1 cycle) when it has none.
// - A node-router latency applies to both directions (injection and ejection), as
//   BookSim's documentation says. (BookSim2's parser stores it as a router-router channel
//   instead, a bug; we follow the documented meaning.)
// - A link mentioned on both routers' lines is one link; a node is attached to exactly one
//   router; node and router numbers must each run 0..N-1 without gaps.
// Names in the GraphSpec: node i is end node "n<i>" (node number i), router j is switch
// "r<j>". Ports follow BookSim's order: a router's nodes (by number), then its routers (by
// number).
// Beyond BookSim: words are separated by any white space, "Router"/"NODE" are accepted in
// any case, and `//` starts a comment. Everything else that BookSim would misread (a
// non-numeric ID or latency, node-to-node links, a link declared twice in one direction,
// a node on two routers, a gap in the numbering) is an error naming the file and line.
//
// Thread safety: free functions.
#ifndef UKAI_SIM_TOPOLOGY_ANYNET_H_
#define UKAI_SIM_TOPOLOGY_ANYNET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "sim/topology/graph_spec.h"

namespace ukai::sim {

// Parses anynet text; `name` (the file name) prefixes every error as "name:LINE: ...".
Result<GraphSpec> ParseAnynet(std::string_view text, const std::string& name);

// Reads and parses the file at `path` (kIoError when it is not a regular file or cannot be
// read; kInvalidArgument above kMaxAnynetBytes).
inline constexpr uint64_t kMaxAnynetBytes = uint64_t{64} << 20;
Result<GraphSpec> ReadAnynetFile(const std::string& path);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_ANYNET_H_
