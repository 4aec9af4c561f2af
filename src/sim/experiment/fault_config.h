// The `faults.*` config keys: their schema rows and the reading of their structured
// values (nested lists, inline tables) into FaultConfig (topology/fault_spec.h). The form
// is checked here; node names and neighbourhood are checked later against the topology
// (topology/faults.h: PlanFaults).
//
//   faults.nodes = [[3, 4], [7, 1]]           # coordinates, or names: ["3,4", "3G2"]
//   faults.channels = [[[3, 4], [3, 5]]]      # pairs of neighbouring nodes (both directions)
//   faults.random_nodes = 4                   # drawn with the run seed
//   faults.random_channels = 2
//   faults.events = [{cycle = 20000, fail_node = [5, 5]},
//                    {cycle = 60000, repair_node = [5, 5]}]   # also fail_channel, repair_channel
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_FAULT_CONFIG_H_
#define UKAI_SIM_EXPERIMENT_FAULT_CONFIG_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/topology/fault_spec.h"

namespace ukai::sim {

// The schema rows of the faults.* keys, in the order describe prints them.
std::vector<config::KeySpec> FaultKeySpecs();

// Reads every faults.* key present in `values` into `faults` (absent keys keep their
// defaults); appends one message per problem to `errors` (key, what is wrong, position).
void ReadFaultConfig(const config::ConfigValues& values, FaultConfig* faults,
                     std::vector<std::string>* errors);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_FAULT_CONFIG_H_
