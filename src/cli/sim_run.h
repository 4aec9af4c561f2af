// The work behind `ukai sim run` and `ukai sim describe`, kept free of CLI11 so that it can
// be tested with a fake point runner. Both go through the front door
// (sim/experiment/front_door.h): the CLI has no branch per machine model.
//
// RunSimPoints loads the config (with --set overrides) through the front door, opens the
// output, then runs the model's experiment, which writes each record as soon as it is done
// (table, CSV or JSON Lines), so earlier results survive a failure later on. A progress
// line is drawn on io.err when io.err_is_terminal.
//
// Under `mpirun -n R` (R > 1) the process joins the MPI job (sim::JoinRankGroup()) and
// every rank runs every point together (docs/simulator.md, "Parallel simulation"); rank 0
// alone writes the records, progress and messages. A failure that only one rank sees
// (not a config error or a deadlock, which every rank reports alike) ends the whole job.
//
// Exit status: kExitOk; kExitUsage for a bad --format, a config error, an --out file that
// cannot be opened, or a config the simulator rejects while running (kInvalidArgument,
// kNotFound, kUnsupported); kExitRunFailed for any other error (e.g. kDeadlock, a failed
// data check, a failed write). The message goes to io.err.
#ifndef UKAI_CLI_SIM_RUN_H_
#define UKAI_CLI_SIM_RUN_H_

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/output/writer.h"
#include "core/status.h"
#include "sim/experiment/run.h"
#include "sim/experiment/sim_config.h"

namespace ukai::cli {

struct SimRunOptions {
  std::string config_path;
  std::vector<std::string> sets;  // "key=value", applied in order
  std::string format;             // table | csv | json; "": the config reader's default
  std::string out_path;           // empty: io.out
  int threads = -1;               // --threads N: run.threads = N (after the --set list)
  // `ukai booksim`: the file must be a BookSim2 config; these BookSim2 `key=value`
  // command-line overrides are appended to it (sim/experiment/booksim_reader.h).
  bool booksim = false;
  std::vector<std::string> booksim_overrides;
};

// Runs one point of the flit-level model; empty: sim::RunPoint (sim::RunEnv::run_point).
using PointRunner = sim::PointRunner;

int RunSimPoints(const SimRunOptions& options, const PointRunner& run_point, const CliIo& io);
// RunSimPoints() on a rank of an MPI job (`ranks`; null: alone) that has joined it.
int RunSimPointsOnRank(const SimRunOptions& options, const PointRunner& run_point, const CliIo& io,
                       sim::RankGroup* ranks);

// The writer of `format` on `out`: the text table with `columns`, CSV, JSON, or BookSim2's
// summary lines (`ukai sim run`, `ukai launch --sim`).
std::unique_ptr<output::RecordWriter> MakeRecordWriter(output::Format format, std::ostream* out,
                                                       std::vector<output::TableColumn> columns);

// Where `ukai sim run` writes its records: `io.out`, or the file `out_path` (truncated),
// opened into `*file`. Errors: "--out: cannot open '...' for writing: <reason>".
Result<std::ostream*> OpenRunOutput(const std::string& out_path, const CliIo& io,
                                    std::ofstream* file);

// Prints the config reference (text, or Markdown tables) to io.out; returns kExitOk.
int DescribeSim(bool markdown, const CliIo& io);

// `ukai sim gen-pcap`: a synthetic capture (sim/nic/pcap_io.h WriteSyntheticPcap).
struct GenPcapOptions {
  std::string out;
  int nodes = 24;
  int64_t frames = 1000;
  int bytes = 1514;
  double rate = 0.001;
  double cycles_per_second = 1e9;
  bool fcs = false;
  double bad_fcs = 0;
  uint64_t seed = 1;
};
int GenPcap(const GenPcapOptions& options, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_RUN_H_
