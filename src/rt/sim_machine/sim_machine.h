// The simulated machine of the runtime's `sim` module, built from a simulator config: the
// one place where the runtime uses the simulator (library ukai_rt_sim = libukai + ukai_sim;
// libukai itself does not contain the simulator).
//
// The config goes through the simulator's front door (sim/experiment/front_door.h) like any
// other: an ordinary flit-level config (mesh, torus, group, graph, tree; any routing, faults)
// plus the [sim] table (sim.cpu_scale, sim.node_map, sim.stall_ms, sim.packet_bytes). Its
// synthetic traffic is not run; on the group topology its gateway NICs (nic.*) run beside
// the program (sim/workload/runtime_machine.h). Errors name the key and its position and come
// before any runtime starts: a config of another model, a sweep (a machine is one point), fewer
// nodes than `processes`, a node map out of range.
//
// Thread safety: free functions.
#ifndef UKAI_RT_SIM_MACHINE_SIM_MACHINE_H_
#define UKAI_RT_SIM_MACHINE_SIM_MACHINE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "rt/modules/sim/sim_fabric.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::rt {

// The machine of the config file at `path` with `overrides` ("key=value") for `processes`
// processes (0: not checked).
Result<std::shared_ptr<SimFabric>> NewSimFabric(const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                int processes);
// The same from config text (`source_name` stands for the file in messages).
Result<std::shared_ptr<SimFabric>> NewSimFabricFromString(std::string_view text,
                                                          const std::string& source_name,
                                                          const std::vector<std::string>& overrides,
                                                          int processes);
// The same from a checked config point.
Result<std::shared_ptr<SimFabric>> NewSimFabricFromConfig(const sim::SimConfig& config,
                                                          int processes);

// The network's usual result fields so far (latency, hops, throughput over the frames'
// packets, routing and fault figures) of a fabric made here.
sim::PointResult NetworkResult(SimFabric& fabric);

}  // namespace ukai::rt

#endif  // UKAI_RT_SIM_MACHINE_SIM_MACHINE_H_
