// `ukai sim check CONFIG.toml [--set key=value ...]`: the deadlock-freedom checker
// (sim/routing/cdg_check.h) on every distinct point of a config (points that differ only
// in traffic or measurement settings are checked once). The config goes through the front
// door (sim/experiment/front_door.h); the model's Experiment::CheckDeadlockFreedom checks it
// (kUnsupported for a model without a checker: exit 2).
//
// Exit status: kExitOk when every checked point is proved deadlock-free and connected;
// kExitRunFailed when one is not (the cycle, dead end or faulty channel is printed);
// kExitUsage for a config error or an algorithm without a checker.
#ifndef UKAI_CLI_SIM_CHECK_H_
#define UKAI_CLI_SIM_CHECK_H_

#include <string>
#include <vector>

#include "cli/commands.h"

namespace ukai::cli {

struct SimCheckOptions {
  std::string config_path;
  std::vector<std::string> sets;  // "key=value", applied in order
};

int CheckSim(const SimCheckOptions& options, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_CHECK_H_
