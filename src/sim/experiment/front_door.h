// The front door of every simulator config: `ukai sim run`, `ukai sim check`, `ukai sim
// describe`, the benchmarks and the tests read configs only through here.
//
//   text --(config reader, chosen by content: config_readers.h)--> RawConfig
//        --(network.topology, from the file or the last --set of it; default "torus")-->
//        machine model (machine_model.h)
//        --(checked once against that model's schema, then the --set overrides)--> values
//        --(the model's prepare: defaults, sweeps, every point checked)--> Experiment
//
// Keys of another model are refused naming the network.topology they need ("fullmesh.nodes:
// needs network.topology = \"fullmesh\""); nothing is told apart by an error's text. Config
// errors carry their key (Status::key()) and name its file:line:column or --set argument.
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_FRONT_DOOR_H_
#define UKAI_SIM_EXPERIMENT_FRONT_DOOR_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/raw_config.h"
#include "core/config/schema.h"
#include "core/status.h"
#include "sim/experiment/config_readers.h"
#include "sim/experiment/machine_model.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// What a config is read for. kExperiment: `ukai sim run` and `check`, the benchmarks and
// tests; the config's own traffic (synthetic or a trace) drives the network. kMachine: a
// machine for the runtime's `sim` module (`ukai launch --sim`, rt/sim_machine/): the program
// is the traffic, so the keys that make traffic or measure it are refused naming their
// position (traffic.*, nic.*, workload.*, measure.* but measure.watchdog_cycles) and so are
// partitioned runs (run.threads, run.partition, run.partition_min_nodes: the machine steps
// on the launcher's one thread), instead of being read and silently left unused.
enum class ConfigUse { kExperiment, kMachine };

// A config read, its model chosen and everything checked: ready to run.
struct LoadedConfig {
  const ConfigReader* reader = nullptr;
  const MachineModel* model = nullptr;
  std::string topology;  // the network.topology value that chose the model
  std::unique_ptr<Experiment> experiment;
};

// Reads the file at `path` (config::ReadConfigText: a regular file of at most 1 MiB), applies
// `overrides` ("key=value", TOML values, in order; a later one for a key wins) and prepares
// it. Errors: kIoError (unreadable file), kParseError (syntax), kInvalidArgument (unknown
// key, bad value, a point the simulator cannot build), each naming key and position.
Result<LoadedConfig> LoadConfig(const std::string& path, const std::vector<std::string>& overrides,
                                ConfigUse use = ConfigUse::kExperiment);

// Same from `text`; `source_name` stands for the file name in messages.
Result<LoadedConfig> LoadConfigFromString(std::string_view text, const std::string& source_name,
                                          const std::vector<std::string>& overrides,
                                          ConfigUse use = ConfigUse::kExperiment);

// The steps before prepare: the checked values of a config and the model they are for.
Result<config::ConfigValues> ReadConfigValues(std::string_view text, const std::string& source_name,
                                              const std::vector<std::string>& overrides,
                                              const MachineModel** model,
                                              ConfigUse use = ConfigUse::kExperiment);

// The schema a config of `model` is checked against (chosen by `topology`): the model's
// own keys, and every other model's keys refused with the network.topology they need.
config::Schema FrontDoorSchema(const MachineModel& model, std::string_view topology,
                               ConfigUse use = ConfigUse::kExperiment);

// The points of a flit-level config (mesh, torus, group, graph, tree), for the tools that run
// points themselves (benchmarks, tests). A config of another model is an error naming
// network.topology. The runtime's sim module reads its machines with ConfigUse::kMachine.
Result<std::vector<SimConfig>> LoadSimConfigs(const std::string& path,
                                              const std::vector<std::string>& overrides,
                                              ConfigUse use = ConfigUse::kExperiment);
Result<std::vector<SimConfig>> LoadSimConfigsFromString(std::string_view text,
                                                        const std::string& source_name,
                                                        const std::vector<std::string>& overrides,
                                                        ConfigUse use = ConfigUse::kExperiment);

// `ukai sim describe`: the readers, the models with their topologies, then per model its
// keys (type, unit, default, range, meaning), its lists (routing algorithms, ...) and its
// result fields (name, unit, table column, meaning). Plain text, or Markdown where every
// generated part is a block between "<!-- generated by ukai sim describe --markdown: NAME -->"
// and "<!-- end of NAME -->", as docs/config.md and docs/cli.md hold them
// (tools/update_reference_docs.py copies them there).
std::string DescribeModels(bool markdown);

// One generated Markdown block of DescribeModels(true): its name ("keys of flit", "fields of
// fullmesh", "models", "booksim keys": the BookSim2 reader's key table, in docs/booksim.md)
// and its text between the markers.
struct ReferenceBlock {
  std::string name;
  std::string markdown;
};
std::vector<ReferenceBlock> ReferenceBlocks();

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_FRONT_DOOR_H_
