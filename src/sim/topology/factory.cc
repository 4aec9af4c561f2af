#include "sim/topology/factory.h"

#include <algorithm>

#include "sim/topology/anynet.h"
#include "sim/topology/concentrated_grid.h"
#include "sim/topology/dragonfly.h"
#include "sim/topology/fat_tree.h"
#include "sim/topology/graph.h"
#include "sim/topology/group.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

Result<std::unique_ptr<Topology>> MakeCube(const NetworkConfig& config) {
  Result<std::unique_ptr<KaryNCube>> cube = KaryNCube::Create(config);
  if (!cube.ok()) return cube.status();
  return std::unique_ptr<Topology>(std::move(*cube));
}

Result<std::unique_ptr<Topology>> MakeGroup(const NetworkConfig& config) {
  Result<std::unique_ptr<GroupTopology>> group =
      GroupTopology::Create(config.groups, config.group_size);
  if (!group.ok()) return group.status();
  return std::unique_ptr<Topology>(std::move(*group));
}

template <typename T>
Result<std::unique_ptr<Topology>> Make(const NetworkConfig& config) {
  Result<std::unique_ptr<T>> made = T::Create(config);
  if (!made.ok()) return made.status();
  return std::unique_ptr<Topology>(std::move(*made));
}

void CubeSize(const NetworkConfig& config, double* nodes, int* ports) {
  *nodes = 1;
  for (int d = 0; d < config.n; ++d) {
    *nodes *= config.k.empty() ? 1 : config.k[std::min<size_t>(d, config.k.size() - 1)];
  }
  *ports = 2 * config.n;
}

void GroupSize(const NetworkConfig& config, double* nodes, int* ports) {
  *nodes = static_cast<double>(config.groups) * config.group_size;
  *ports = config.group_size + 1;
}

Result<std::unique_ptr<Topology>> MakeGraphOf(const GraphSpec& spec) {
  Result<std::unique_ptr<GraphTopology>> graph = GraphTopology::Create(spec);
  if (!graph.ok()) return graph.status();
  return std::unique_ptr<Topology>(std::move(*graph));
}

// network.topology = "graph": an anynet file or the TOML lists (docs/sss.md).
Result<std::unique_ptr<Topology>> MakeGraph(const NetworkConfig& config) {
  if (!config.file.empty()) {
    if (!config.graph.empty()) {
      return Status::InvalidArgument(
                 "network.file: give the graph either as a file or as network.nodes / "
                 "network.switches / network.links, not both")
          .WithKey("network.file");
    }
    Result<GraphSpec> read = ReadAnynetFile(config.file);
    Result<std::unique_ptr<Topology>> made =
        read.ok() ? MakeGraphOf(*read) : Result<std::unique_ptr<Topology>>(read.status());
    if (!made.ok()) return made.status().WithKey("network.file");
    return made;
  }
  if (config.graph.empty()) {
    return Status::InvalidArgument(
               "network.topology: 'graph' needs network.file (a BookSim2 anynet file) or "
               "network.nodes, network.switches and network.links")
        .WithKey("network.topology");
  }
  return MakeGraphOf(config.graph);  // its errors name network.links and their place
}

// network.topology = "tree": the generated hierarchy (docs/sss.md).
Result<std::unique_ptr<Topology>> MakeTree(const NetworkConfig& config) {
  Result<GraphSpec> tree =
      TreeSpec(config.tree_arity, config.tree_levels, config.tree_upper_bandwidth);
  if (!tree.ok()) return tree.status();
  return MakeGraphOf(*tree);
}

constexpr TopologyEntry kTopologies[] = {
    {"mesh", TopologyKind::kMesh, "k-ary n-cube without wrap-around links (network.k, network.n)",
     &MakeCube, &CubeSize},
    {"torus", TopologyKind::kTorus, "k-ary n-cube with wrap-around links (network.k, network.n)",
     &MakeCube, &CubeSize},
    {"group", TopologyKind::kGroup,
     "network.groups groups of network.group_size fully connected nodes, rings across groups "
     "(docs/gateway.md)",
     &MakeGroup, &GroupSize},
    {"graph", TopologyKind::kGraph,
     "any network of end nodes and switches: a BookSim2 anynet file (network.file) or "
     "network.nodes, network.switches and network.links (docs/sss.md)",
     &MakeGraph, nullptr},
    {"tree", TopologyKind::kTree,
     "network.tree_levels levels of switches with network.tree_arity children each, end nodes "
     "at the leaves, network.tree_upper_bandwidth channels per upper link (docs/sss.md)",
     &MakeTree, nullptr},
    {"cmesh", TopologyKind::kCMesh,
     "concentrated mesh: a network.k x ... mesh of routers (network.n dimensions), "
     "network.concentration terminals on each (BookSim2's cmesh without express channels)",
     &Make<CMesh>, &CMesh::Size},
    {"flatfly", TopologyKind::kFlatFly,
     "flattened butterfly: a network.k x ... grid of routers (network.n dimensions), fully "
     "connected along every dimension, network.concentration terminals on each (BookSim2's "
     "flatfly)",
     &Make<FlatFly>, &FlatFly::Size},
    {"fattree", TopologyKind::kFatTree,
     "k-ary n-tree (network.k = k, network.n = n levels): k^n terminals, n levels of "
     "k^(n-1) routers (BookSim2's fattree)",
     &Make<FatTree>, &FatTree::Size},
    {"dragonfly", TopologyKind::kDragonfly,
     "dragonfly: groups of network.dragonfly_a routers (fully connected), "
     "network.dragonfly_p terminals and network.dragonfly_h global channels per router, "
     "a*h + 1 groups joined pairwise (BookSim2's dragonflynew: a = 2p, h = p)",
     &Make<Dragonfly>, &Dragonfly::Size},
};

}  // namespace

std::span<const TopologyEntry> Topologies() { return kTopologies; }

const TopologyEntry* FindTopology(TopologyKind kind) {
  for (const TopologyEntry& e : kTopologies) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

const TopologyEntry* FindTopology(std::string_view name) {
  for (const TopologyEntry& e : kTopologies) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

Result<std::unique_ptr<Topology>> MakeTopology(const NetworkConfig& config) {
  const TopologyEntry* entry = FindTopology(config.topology);
  if (entry == nullptr) {
    return Status::Internal("network.topology: no entry in the topology table")
        .WithKey("network.topology");
  }
  return entry->create(config);
}

}  // namespace ukai::sim
