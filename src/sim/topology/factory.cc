#include "sim/topology/factory.h"

#include "sim/topology/anynet.h"
#include "sim/topology/graph.h"
#include "sim/topology/group.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

Result<std::unique_ptr<Topology>> MakeGraph(const NetworkConfig& config) {
  GraphSpec spec;
  if (config.topology == TopologyKind::kTree) {
    Result<GraphSpec> tree =
        TreeSpec(config.tree_arity, config.tree_levels, config.tree_upper_bandwidth);
    if (!tree.ok()) return tree.status();
    spec = std::move(*tree);
  } else if (!config.file.empty()) {
    if (!config.graph.empty()) {
      return Status::InvalidArgument(
          "network.file: give the graph either as a file or as network.nodes / "
          "network.switches / network.links, not both");
    }
    Result<GraphSpec> read = ReadAnynetFile(config.file);
    if (!read.ok()) return read.status();
    spec = std::move(*read);
  } else if (!config.graph.empty()) {
    spec = config.graph;
  } else {
    return Status::InvalidArgument(
        "network.topology: 'graph' needs network.file (a BookSim2 anynet file) or "
        "network.nodes, network.switches and network.links");
  }
  Result<std::unique_ptr<GraphTopology>> graph = GraphTopology::Create(spec);
  if (!graph.ok()) return graph.status();
  return std::unique_ptr<Topology>(std::move(*graph));
}

}  // namespace

Result<std::unique_ptr<Topology>> MakeTopology(const NetworkConfig& config) {
  if (config.topology == TopologyKind::kGraph || config.topology == TopologyKind::kTree) {
    return MakeGraph(config);
  }
  if (config.topology == TopologyKind::kGroup) {
    Result<std::unique_ptr<GroupTopology>> group =
        GroupTopology::Create(config.groups, config.group_size);
    if (!group.ok()) return group.status();
    return std::unique_ptr<Topology>(std::move(*group));
  }
  Result<std::unique_ptr<KaryNCube>> cube = KaryNCube::Create(config);
  if (!cube.ok()) return cube.status();
  return std::unique_ptr<Topology>(std::move(*cube));
}

}  // namespace ukai::sim
