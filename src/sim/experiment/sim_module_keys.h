// The `sim.*` config keys (the `[sim]` table): the runtime's `sim` communication module
// (workload/sim_module_config.h, docs/sim-module.md). Their schema rows and the reading of
// their values into SimModuleConfig. A simulator config with a [sim] table is an ordinary
// config of the flit-level model; `ukai sim run` ignores the table, the module and
// `ukai launch --sim` read it. sim.node_map's node numbers are checked against the network
// when the machine is built (rt/sim_machine/sim_machine.h).
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_SIM_MODULE_KEYS_H_
#define UKAI_SIM_EXPERIMENT_SIM_MODULE_KEYS_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/workload/sim_module_config.h"

namespace ukai::sim {

// The schema rows of the sim.* keys, in the order describe prints them.
std::vector<config::KeySpec> SimModuleKeySpecs();

// Reads every sim.* key present in `values` into `out`; one message per problem in `errors`.
void ReadSimModuleConfig(const config::ConfigValues& values, SimModuleConfig* out,
                         std::vector<std::string>* errors);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_SIM_MODULE_KEYS_H_
