// The `workload.*` config keys of the flit-level simulator (workload/workload_config.h,
// docs/workloads.md): their schema rows and the reading of their values into
// WorkloadConfig, with the cross-key rules of a trace workload:
//   - workload.kind = "netrace" or "otf2" needs workload.file;
//   - the netrace keys (region, dependencies, cycle_scale, node_map) need "netrace", the
//     OTF2 keys (eager_bytes, collective_algorithm, compute, rank_map) need "otf2";
//   - a trace workload replaces the synthetic traffic: traffic.* keys, the gateway's nic.*
//     keys and the measurement-window keys (measure.mode, warmup_*, measure_messages,
//     sample_cycles, convergence) are errors beside it (measure.max_cycles and
//     measure.watchdog_cycles still apply);
//   - workload.node_map / workload.rank_map: "row-major" / "linear" / "random" or a list of
//     distinct node numbers (checked against the network when the trace is opened).
// A relative workload.file is resolved against the directory of the config file it was
// written in (a --set value against the working directory).
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_WORKLOAD_KEYS_H_
#define UKAI_SIM_EXPERIMENT_WORKLOAD_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/config/schema.h"
#include "sim/workload/workload_config.h"

namespace ukai::sim {

// The schema rows of the workload.* keys, in the order describe prints them.
std::vector<config::KeySpec> WorkloadKeySpecs();

// Reads every workload.* key present in `values` into `workload` and checks the rules
// above; appends one message per problem to `errors` (key, what is wrong, position).
void ReadWorkloadConfig(const config::ConfigValues& values, WorkloadConfig* workload,
                        std::vector<std::string>* errors);

// Config names ("netrace", "recursive-doubling", "trace").
std::string_view WorkloadKindName(WorkloadKind k);
std::string_view CollectiveAlgorithmName(CollectiveAlgorithm a);
std::string_view ComputeModeName(ComputeMode m);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_WORKLOAD_KEYS_H_
