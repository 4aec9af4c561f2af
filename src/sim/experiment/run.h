// RunPoint: builds the network a SimConfig describes, runs it under the configured run
// control and returns its figures. Each call owns its whole simulation (no globals): two
// calls may run at once on different threads.
//
// Errors: a config the simulator cannot honour (routing that does not support the
// topology or VC count, a pattern that needs a power-of-two node count, ...) returns
// kInvalidArgument naming the config key; a deadlock seen by the watchdog returns
// kDeadlock listing the blocked channels.
#ifndef UKAI_SIM_EXPERIMENT_RUN_H_
#define UKAI_SIM_EXPERIMENT_RUN_H_

#include <functional>
#include <string>

#include "core/status.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// Called now and then during a run with the cycle reached and messages measured so far;
// used for the progress line on a terminal. May be empty.
using ProgressFn = std::function<void(int64_t cycle, int64_t measured)>;

// Runs one point: RunPoint, or a fake in tests (experiment/machine_model.h, RunEnv).
using PointRunner = std::function<Result<PointResult>(const SimConfig&, const ProgressFn&)>;

Result<PointResult> RunPoint(const SimConfig& config, const ProgressFn& progress = {});

class Network;
// Counts over the measured messages' routing states (routing/route_state.h).
struct RoutingCounts {
  int64_t measured = 0, recovered = 0, table = 0, misrouted = 0;
};
// The routing and fault figures of a PointResult (recovered_messages ... misrouted, and the
// network's undeliverable, retransmitted, discarded and reconfiguration counters); shared by
// RunPoint and the trace workloads (workload/run_workload.h).
void RoutingFaultFigures(const Network& net, const RoutingCounts& counts, PointResult* r);

// Appends to `note` ("; "-separated) that timed faults.events came after the end of the run
// and did not happen, if any did not.
void NotePendingFaults(const Network& net, std::string* note);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_RUN_H_
