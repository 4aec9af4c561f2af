// The flit-level model of the machine-model table (experiment/machine_model.h): network.topology
// mesh, torus (k-ary n-cubes), group, graph and tree, with routers, routing, traffic, faults,
// the gateway NIC (nic.*) and the SSS-CORE NIC (docs/sss.md). Its keys are config_schema.h's
// (SimConfigSchema), its record flit_fields.h's.
//
// Its Experiment holds the expanded points (one SimConfig per point of a sweep). Run() runs
// them in sweep order with RunPoint (or RunEnv::run_point), writes each point's record as soon
// as it is done and draws the progress line; an allocation failure that escapes a point ends
// that point only. CheckDeadlockFreedom() runs the deadlock checker (routing/cdg_check.h) on
// every distinct point (points that differ only in traffic or measurement are checked once).
//
// Thread safety: free functions without shared state; an Experiment is used by one thread.
#ifndef UKAI_SIM_EXPERIMENT_FLIT_MODEL_H_
#define UKAI_SIM_EXPERIMENT_FLIT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/machine_model.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// The machine-model table's row functions.
std::vector<TopologyChoice> FlitTopologies();
Result<std::unique_ptr<Experiment>> PrepareFlit(const config::ConfigValues& values);
// The sweep order, the routing algorithms and the traffic patterns.
std::string DescribeFlitMore(bool markdown);

// An experiment of the points `points` (already checked).
std::unique_ptr<Experiment> MakeFlitExperiment(std::vector<SimConfig> points);

// The points of a flit-level experiment, or nullptr when `experiment` is another model's.
const std::vector<SimConfig>* FlitPoints(const Experiment& experiment);

// "routing=dor pattern=uniform message_bytes=64 rate=0.1 seed=1": a point in progress lines
// and error messages.
std::string PointLabel(const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_FLIT_MODEL_H_
