// The checks of a simulation config that span several keys (experiment/config_schema.cc's
// ExpandSimConfigs runs them): the network's size against its radices, the node count and
// the memory budget; swept injection parameters the injection process does not use; and
// what only the simulator knows, on the built topology, for every point of a sweep. Each
// problem is one message (the key, what is wrong, the place in the file) in `errors`.
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_CONFIG_CHECKS_H_
#define UKAI_SIM_EXPERIMENT_CONFIG_CHECKS_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// network.k against network.n (fills c->network.k to one radix per dimension), the node
// count, the memory estimate and the hot-spot node numbers.
void CheckNetwork(const config::ConfigValues& values, SimConfig* c,
                  std::vector<std::string>* errors);

// A swept injection parameter that the chosen injection process does not use.
void CheckUnusedSweeps(const config::ConfigValues& values, const SimConfig& c,
                       std::vector<std::string>* errors);

// Builds the topology of the first point and checks every point on it (routing support,
// faults, workload, NIC models, pattern, injection); each distinct problem once, with the
// place of the key it names and the first point that has it.
void CheckPointsSupported(const config::ConfigValues& values, const std::vector<SimConfig>& points,
                          std::vector<std::string>* errors);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_CHECKS_H_
