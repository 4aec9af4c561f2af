// The config keys of the graph and tree topologies, the `source` routing and the SSS-CORE
// NIC model (docs/sss.md): their schema rows (ConfigBinding, for config_schema.cc's table)
// and the reading of the structured ones (lists of links, nodes and groups; the anynet file
// name resolved against the config file's folder).
//
//   [network]
//   topology = "graph"
//   file = "tree.anynet"                     # BookSim2 anynet; or the three lists below
//   nodes = 8                                # end nodes "n0".."n7", or ["nicA", "nicB", ...]
//   switches = ["s0", "s1"]                  # or a count: "s0".."s<S-1>"
//   links = [["n0", "s0"], ["s0", "s1", 3], {a = "s1", b = "n7", latency = 2, channels = 2}]
//   copy_switches = ["s1"]                   # switches that copy packets ("all" / "none")
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_SSS_KEYS_H_
#define UKAI_SIM_EXPERIMENT_SSS_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/config_binding.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// Rows of the scalar keys (tree shape, source routing, nic.*, link.*, traffic.*).
std::vector<ConfigBinding> SssBindings();

// Schema rows of the structured keys (network.file, network.nodes, network.switches,
// network.links, network.copy_switches, traffic.multicast_groups, traffic.sources).
std::vector<config::KeySpec> SssStructuredKeySpecs();

// Reads the structured keys present in `values` into `c`; one message per problem (the key,
// what is wrong, the position) goes to `errors`.
void ReadSssStructured(const config::ConfigValues& values, SimConfig* c,
                       std::vector<std::string>* errors);

// Config names of the enums.
std::string_view SourceRouteModeName(SourceRouteMode m);
std::string_view RmaOperationName(RmaOperation o);
std::string_view MulticastKindName(MulticastKind m);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_SSS_KEYS_H_
