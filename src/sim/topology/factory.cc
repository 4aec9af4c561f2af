#include "sim/topology/factory.h"

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

constexpr TopologyEntry kTopologies[] = {
    {"mesh", TopologyKind::kMesh, "k-ary n-cube without wrap-around links (network.k, network.n)",
     &MakeCube},
    {"torus", TopologyKind::kTorus, "k-ary n-cube with wrap-around links (network.k, network.n)",
     &MakeCube},
    {"group", TopologyKind::kGroup,
     "network.groups groups of network.group_size fully connected nodes, rings across groups "
     "(docs/gateway.md)",
     &MakeGroup},
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
