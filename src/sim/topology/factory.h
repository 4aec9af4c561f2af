// MakeTopology: the topology a NetworkConfig names (network.topology): a k-ary n-cube
// (mesh, torus: topology/kary_ncube.h) or the group topology (topology/group.h).
// Thread safety: a free function.
#ifndef UKAI_SIM_TOPOLOGY_FACTORY_H_
#define UKAI_SIM_TOPOLOGY_FACTORY_H_

#include <memory>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// Errors (kInvalidArgument) name the network.* key.
Result<std::unique_ptr<Topology>> MakeTopology(const NetworkConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_FACTORY_H_
