// The `[sim]` table of a simulator config: the keys of the runtime's `sim` communication
// module (docs/sim-module.md), which runs programs written against <ukai/ukai.hpp> on the
// machine the rest of the config describes. Read by experiment/sim_module_keys.h; used by
// workload/runtime_machine.h and the module (src/rt/modules/sim/, src/rt/sim_machine/).
#ifndef UKAI_SIM_WORKLOAD_SIM_MODULE_CONFIG_H_
#define UKAI_SIM_WORKLOAD_SIM_MODULE_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

struct SimModuleConfig {
  // Simulated time per second of CPU time a process uses between runtime calls (1.0: the
  // host's speed; 0: only communication takes time).
  double cpu_scale = 1.0;
  // Process i runs on network node node_map[i]; empty: process i on node i. Several
  // processes may share a node.
  std::vector<int> node_map;
  std::string node_map_where;  // file:line:column of sim.node_map, for errors
  // Wall milliseconds a process may go without a runtime call while the simulation waits
  // for it; then the run stops with an error naming the process and its last call.
  int64_t stall_ms = 10000;
  // Most bytes of one packet (a larger frame is cut into packets of this size).
  int64_t packet_bytes = 4096;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_SIM_MODULE_CONFIG_H_
