// The result record of a program run on a simulated machine (`ukai launch --sim`,
// docs/sim-module.md): the sim module's fields declared once here (name, unit, meaning,
// table column), then the network's usual fields (sim/experiment/flit_fields.h) of the
// frames' packets. `--sim-out FILE` writes the record as one JSON object; `--format` prints
// it as `ukai sim run` prints a point.
//
// Thread safety: free functions without shared state.
#ifndef UKAI_RT_SIM_MACHINE_SIM_RESULTS_H_
#define UKAI_RT_SIM_MACHINE_SIM_RESULTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/output/fields.h"
#include "core/output/writer.h"
#include "core/status.h"
#include "rt/modules/sim/sim_fabric.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::rt {

// A machine for a launch: the checked config point and its fabric.
struct SimMachine {
  sim::SimConfig config;
  std::shared_ptr<SimFabric> fabric;
};
// Loads `path` (with `overrides`) for `processes` processes; errors name the key and come
// before any process starts (fewer nodes than processes, a node map out of range, an
// unknown key, a sweep).
Result<SimMachine> LoadSimMachine(const std::string& path,
                                  const std::vector<std::string>& overrides, int processes);

// What the record is built from (at the end of the run).
struct SimRunContext {
  const sim::SimConfig* config = nullptr;
  std::vector<SimProcessTimes> processes;  // by process number
  int expected = 0;                        // processes launched
  double clock_mhz = 1;
  std::map<std::string, uint64_t> counters;  // SimFabric::Counters()
  sim::PointResult network;
};
SimRunContext CollectSimRun(const SimMachine& machine, int expected);

// The sim module's own fields (then the flit model's follow in the record).
std::vector<output::FieldSpec> SimRunFields();
output::Record SimRunRecord(const SimRunContext& run);
std::vector<output::TableColumn> SimRunTableColumns(const SimRunContext& run);

}  // namespace ukai::rt

#endif  // UKAI_RT_SIM_MACHINE_SIM_RESULTS_H_
