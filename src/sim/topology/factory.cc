#include "sim/topology/factory.h"

#include "sim/topology/group.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

Result<std::unique_ptr<Topology>> MakeTopology(const NetworkConfig& config) {
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
