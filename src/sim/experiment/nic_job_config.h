// The `nic.jobs` config key (job launches that change the gateway's NIC enable register
// during a run; nic/management.cc): its schema row and the reading of its structured value
// into NicConfig::jobs. The form is checked here; the node names against the topology
// later (nic/gateway.h: ResolveNicConfig).
//
//   nic.jobs = [{cycle = 300000, enabled = ["3G2", "3G3"]},
//               {cycle = 600000, enabled = ["3G0", "3G1", "3G2"]}]
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_NIC_JOB_CONFIG_H_
#define UKAI_SIM_EXPERIMENT_NIC_JOB_CONFIG_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/nic/nic_config.h"

namespace ukai::sim {

// The schema row of nic.jobs.
std::vector<config::KeySpec> NicJobKeySpecs();

// Reads nic.jobs (when present in `values`) into `nic->jobs`; appends one message per
// problem to `errors` (the key, what is wrong, the position).
void ReadNicJobConfig(const config::ConfigValues& values, NicConfig* nic,
                      std::vector<std::string>* errors);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_NIC_JOB_CONFIG_H_
