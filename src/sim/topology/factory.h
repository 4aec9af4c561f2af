// The topologies of the flit-level model, in one explicit table keyed by network.topology
// (factory.cc): a k-ary n-cube (mesh, torus: topology/kary_ncube.h), the group topology
// (topology/group.h), a graph of end nodes and switches (graph: an anynet file or TOML
// links; tree: the generated hierarchy; topology/graph.h, docs/sss.md), or an indirect
// topology whose routers serve terminals (cmesh, flatfly, fattree, dragonfly:
// topology/switch_topology.h). MakeTopology builds the one a NetworkConfig names.
//
// Adding a topology: a TopologyKind value (experiment/sim_config.h), its files under
// topology/, and one row in factory.cc; it is then a network.topology value of the flit-level
// model (experiment/machine_model.h) and `ukai sim describe` lists it.
// Thread safety: the table is immutable; free functions.
#ifndef UKAI_SIM_TOPOLOGY_FACTORY_H_
#define UKAI_SIM_TOPOLOGY_FACTORY_H_

#include <memory>
#include <span>
#include <string_view>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

struct TopologyEntry {
  std::string_view name;  // the network.topology value
  TopologyKind kind;
  std::string_view doc;  // what it builds and from which keys
  // Builds it; errors (kInvalidArgument) name the network.* key.
  Result<std::unique_ptr<Topology>> (*create)(const NetworkConfig& config);
  // Nodes (terminals + routers) and network ports per node of `config`, from arithmetic
  // alone (the memory estimate before anything is built; may exceed int). nullptr for the
  // graph topologies, whose estimate builds them (Network::StateBytes).
  void (*size)(const NetworkConfig& config, double* nodes, int* ports);
};

// Every topology, in the order describe lists them.
std::span<const TopologyEntry> Topologies();

// The entry of `kind`, or nullptr.
const TopologyEntry* FindTopology(TopologyKind kind);
// The entry called `name`, or nullptr.
const TopologyEntry* FindTopology(std::string_view name);

// Errors (kInvalidArgument) name the network.* key.
Result<std::unique_ptr<Topology>> MakeTopology(const NetworkConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_FACTORY_H_
