// The machine models `ukai sim` runs, in one explicit table keyed by `network.topology`
// (machine_model.cc), like the routing registry's. Each row owns everything of its model:
// its name and doc, the network.topology values it runs, its config schema (every key it
// takes: a config is checked once, against the chosen model's schema only), the function that
// turns checked values into a runnable Experiment, and its result record (output fields
// declared once: core/output/fields.h).
//
// Today:
//   flit      the flit-level network simulator (experiment/flit_model.h): topologies mesh,
//             torus (k-ary n-cubes), group, graph and tree, routers, routing, traffic; the
//             gateway NIC model (nic.*) and the SSS-CORE NIC model (docs/sss.md) are part of it
//   fullmesh  the message-level optical full mesh with 1-hop relays (fullmesh/fullmesh_model.h)
//
// Adding a model: its files (schema, prepare, an Experiment subclass, its fields) and one
// row in machine_model.cc. Adding a topology of the flit-level model: one row in the
// topology table (topology/factory.cc) and its files; it is then a network.topology of the
// flit model. The config reader in front (TOML, ...) is chosen separately
// (experiment/config_readers.h); the front door that ties them together is
// experiment/front_door.h.
//
// Thread safety: the table is immutable; an Experiment is used by one thread at a time.
#ifndef UKAI_SIM_EXPERIMENT_MACHINE_MODEL_H_
#define UKAI_SIM_EXPERIMENT_MACHINE_MODEL_H_

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/schema.h"
#include "core/output/fields.h"
#include "core/output/writer.h"
#include "core/progress.h"
#include "core/status.h"
#include "sim/experiment/run.h"

namespace ukai::sim {

class RankGroup;  // engine/rank_group.h

// What a run writes to. Not owned.
struct RunEnv {
  output::RecordWriter* writer = nullptr;  // every record, in order, as soon as it is known
  ProgressLine* progress = nullptr;        // a status line (disabled when not a terminal)
  // Test seam of the flit-level model: runs one point instead of sim::RunPoint (empty:
  // RunPoint). Other models ignore it.
  PointRunner run_point;
  // The MPI ranks that run this experiment together (`ukai sim run` under mpirun: every
  // rank runs the same experiment; engine/rank_group.h); null: this process alone. A model
  // whose SplitsAcrossRanks() is false ignores it and runs whole on every rank.
  RankGroup* ranks = nullptr;
  // Where a model says how it ran when that is not a result (a point that ran on fewer
  // partitions than run.threads asked, and why): one line each; null: nowhere.
  std::ostream* notes = nullptr;
};

// What `ukai sim tables` asks for.
struct ControllerTablesOptions {
  bool json = false;       // JSON Lines, one object per snapshot; else aligned text
  bool all_links = false;  // every link of a link table, idle ones too; else those in use
};

// One config of one model, read, checked (every point the simulator can judge without
// running it) and expanded: ready to run.
class Experiment {
 public:
  virtual ~Experiment() = default;

  // The columns of the text table (the model's fields that have a column header).
  virtual std::vector<output::TableColumn> TableColumns() const = 0;

  // Runs everything, writing one record per result to env.writer as soon as it is known,
  // so that earlier results survive a later failure. On failure the Status's message is
  // complete (it names the point or operation and says what was written before it) and its
  // code tells a config the simulator refused while running (kInvalidArgument, kNotFound,
  // kUnsupported) from a failure (kDeadlock, kInternal, kUnavailable, ...). A failed write
  // is returned unchanged.
  virtual Status Run(const RunEnv& env) const = 0;

  // Whether Run() splits its work across RunEnv::ranks (true: the flit-level model's
  // network is partitioned across them; false: every rank runs everything alike).
  virtual bool SplitsAcrossRanks() const { return false; }

  // `ukai sim check`: proves every distinct point deadlock-free, one line per point on
  // `out`; true when every point is proved. Errors: kUnsupported when the model has no
  // checker (the default), and the checker's own (an algorithm without one).
  virtual Result<bool> CheckDeadlockFreedom(std::ostream* out) const;

  // `ukai sim tables`: runs the config and writes the controller's tables after every event
  // to `out` (the full-mesh model: its communication and link management tables,
  // fullmesh/table_dump.h). Errors: kUnsupported when the model keeps no such tables (the
  // default), and the run's own.
  virtual Status WriteControllerTables(const ControllerTablesOptions& options,
                                       std::ostream* out) const;
};

// A value of network.topology and what it builds.
struct TopologyChoice {
  std::string_view name;
  std::string_view doc;
};

struct MachineModel {
  std::string_view name;   // "flit", "fullmesh"
  std::string_view title;  // heading of its reference
  std::string_view doc;    // what it models, one paragraph
  // The network.topology values it runs (the first is its default topology).
  std::vector<TopologyChoice> (*topologies)();
  // Every key it takes (network.topology among them, allowing exactly topologies()), with
  // type, unit, default, range and meaning.
  config::Schema (*schema)();
  // Turns values checked against schema() into an experiment: applies defaults, expands
  // sweeps and checks everything that can be checked before running. Errors name the key
  // and its place (file:line:column or the --set argument).
  Result<std::unique_ptr<Experiment>> (*prepare)(const config::ConfigValues& values);
  // The result record, in record order.
  std::vector<output::FieldSpec> (*fields)();
  // More reference after the keys (the routing algorithms, the traffic patterns, ...), text
  // or Markdown; nullptr when there is none.
  std::string (*describe_more)(bool markdown);
};

// Every model, in the order `ukai sim describe` prints them.
std::span<const MachineModel> MachineModels();

// The model that runs `topology`, or kNotFound listing every network.topology value.
Result<const MachineModel*> FindMachineModel(std::string_view topology);

// The default network.topology (when a config does not set it): "torus".
std::string_view DefaultTopology();

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_MACHINE_MODEL_H_
