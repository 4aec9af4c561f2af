#include "cli/sim_run.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/progress.h"
#include "sim/engine/rank_group.h"
#include "sim/experiment/booksim_reader.h"
#include "sim/experiment/booksim_summary.h"
#include "sim/experiment/front_door.h"
#include "sim/nic/pcap_io.h"

namespace ukai::cli {
namespace {

bool IsConfigError(StatusCode code) {
  return code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound ||
         code == StatusCode::kUnsupported;
}

// Passes records on and remembers the first failed write, so that a failed write is told
// from a failed run by a flag, not by the error's text.
class TrackingWriter : public output::RecordWriter {
 public:
  explicit TrackingWriter(output::RecordWriter* to) : to_(to) {}
  Status Write(const output::Record& record) override {
    Status st = to_->Write(record);
    if (!st.ok() && failure_.ok()) failure_ = st;
    return st;
  }
  const Status& failure() const { return failure_; }

 private:
  output::RecordWriter* to_;
  Status failure_;
};

// `ukai booksim FILE [key=value ...]`: the file with BookSim2's command-line overrides
// appended, read by the BookSim reader only.
Result<sim::LoadedConfig> LoadBooksimConfig(const SimRunOptions& options,
                                            const std::vector<std::string>& sets) {
  Result<std::string> text = config::ReadConfigText(options.config_path);
  if (!text.ok()) return text.status();
  Result<std::string> with = sim::AppendBooksimOverrides(*text, options.booksim_overrides);
  if (!with.ok()) return with.status();
  if (sim::FindConfigReader(*with).name != "booksim") {
    Result<std::vector<sim::BooksimStatement>> parsed =
        sim::ParseBooksimStatements(*with, options.config_path);
    return parsed.ok() ? Status::InvalidArgument(
                             fmt::format("{}: not a BookSim2 config (no `key = value;` statement)",
                                         options.config_path))
                       : parsed.status();
  }
  return sim::LoadConfigFromString(*with, options.config_path, sets);
}

}  // namespace

Result<std::ostream*> OpenRunOutput(const std::string& out_path, const CliIo& io,
                                    std::ofstream* file) {
  if (out_path.empty()) return io.out;
  file->open(out_path, std::ios::out | std::ios::trunc);
  if (!*file) {
    return Status::IoError(
        fmt::format("--out: cannot open '{}' for writing: {}", out_path, std::strerror(errno)));
  }
  return static_cast<std::ostream*>(file);
}

std::unique_ptr<output::RecordWriter> MakeRecordWriter(output::Format format, std::ostream* out,
                                                       std::vector<output::TableColumn> columns) {
  switch (format) {
    case output::Format::kTable:
      return output::MakeTableWriter(out, std::move(columns));
    case output::Format::kCsv:
      return output::MakeCsvWriter(out);
    case output::Format::kJson:
      return output::MakeJsonWriter(out);
    case output::Format::kBooksim:
      return sim::MakeBooksimSummaryWriter(out);
  }
  return nullptr;
}

int RunSimPoints(const SimRunOptions& options, const PointRunner& run_point, const CliIo& io) {
  Result<std::unique_ptr<sim::RankGroup>> joined = sim::JoinRankGroup();
  if (!joined.ok()) {
    *io.err << (options.booksim ? "ukai booksim: " : "ukai sim run: ") << joined.status().ToString()
            << '\n'
            << std::flush;
    return kExitUsage;
  }
  sim::RankGroup* ranks = joined->get();
  // Rank 0 writes the results and says what went wrong; the others stay silent.
  const bool writes = ranks == nullptr || ranks->writes_output();
  std::ostringstream discard;
  CliIo rank_io = io;
  if (!writes) {
    rank_io.out = &discard;
    rank_io.err = &discard;
    rank_io.err_is_terminal = false;
  }
  return RunSimPointsOnRank(options, run_point, rank_io, ranks);
}

namespace {

// Whether every rank of an MPI job reports this failure alike (so that all can end
// normally): config errors and deadlocks come from state every rank shares.
bool FailsOnEveryRank(const Status& st) {
  return IsConfigError(st.code()) || st.code() == StatusCode::kDeadlock;
}

}  // namespace

int RunSimPointsOnRank(const SimRunOptions& options, const PointRunner& run_point, const CliIo& io,
                       sim::RankGroup* ranks) {
  auto fail = [&io, &options](int code, const std::string& message) {
    *io.err << (options.booksim ? "ukai booksim: " : "ukai sim run: ") << message << '\n'
            << std::flush;
    return code;
  };
  // A --format given is checked before the config is read; without one the reader's
  // default applies.
  Result<output::Format> format = output::Format::kTable;
  if (!options.format.empty()) {
    format = output::ParseFormat(options.format);
    if (!format.ok()) return fail(kExitUsage, "--format: " + format.status().message());
  }
  std::vector<std::string> sets = options.sets;
  if (options.threads >= 0) sets.push_back("run.threads=" + std::to_string(options.threads));
  Result<sim::LoadedConfig> loaded = options.booksim ? LoadBooksimConfig(options, sets)
                                                     : sim::LoadConfig(options.config_path, sets);
  if (!loaded.ok()) return fail(kExitUsage, loaded.status().ToString());
  if (options.format.empty()) {
    format = output::ParseFormat(loaded->reader->default_format);
    if (!format.ok()) return fail(kExitUsage, "--format: " + format.status().message());
  }

  const bool writes = ranks == nullptr || ranks->writes_output();
  const bool several = ranks != nullptr && ranks->size() > 1;
  std::ofstream file;
  std::ostringstream no_file;  // a rank other than 0 writes nothing
  Result<std::ostream*> opened = static_cast<std::ostream*>(&no_file);
  if (writes) opened = OpenRunOutput(options.out_path, io, &file);
  if (!opened.ok()) {
    // Rank 0 alone cannot go on; the others would wait for it.
    if (several) ranks->Abort(opened.status().message());
    return fail(kExitUsage, opened.status().message());
  }
  std::unique_ptr<output::RecordWriter> writer =
      MakeRecordWriter(*format, *opened, loaded->experiment->TableColumns());
  TrackingWriter tracking(writer.get());
  ProgressLine progress(io.err, io.err_is_terminal);
  sim::RunEnv env;
  env.writer = &tracking;
  env.progress = &progress;
  env.run_point = run_point;
  env.ranks = ranks;
  env.notes = io.err;
  if (ranks != nullptr && !loaded->experiment->SplitsAcrossRanks()) {
    *io.err << "ukai sim run: the " << loaded->model->name
            << " model is not split across MPI ranks: every rank runs it whole and rank 0 "
               "writes the results\n"
            << std::flush;
  }
  Status st = loaded->experiment->Run(env);
  progress.Clear();
  if (!tracking.failure().ok()) {
    const std::string what =
        fmt::format("writing {}: {}", options.out_path.empty() ? "stdout" : options.out_path,
                    tracking.failure().ToString());
    if (several) ranks->Abort(what);
    return fail(kExitRunFailed, what);
  }
  if (!st.ok()) {
    // A failure one rank alone sees (memory, a file) ends the job: the others would wait.
    if (several && !FailsOnEveryRank(st)) ranks->Abort(st.message());
    return fail(IsConfigError(st.code()) ? kExitUsage : kExitRunFailed, st.message());
  }
  return kExitOk;
}

int GenPcap(const GenPcapOptions& o, const CliIo& io) {
  if (o.nodes < 1 || o.frames < 0 || o.bytes < 22 || o.bytes > 9018 || !(o.rate > 0) ||
      !(o.cycles_per_second > 0) || o.bad_fcs < 0 || o.bad_fcs > 1 || (o.bad_fcs > 0 && !o.fcs)) {
    *io.err << "ukai sim gen-pcap: need --nodes >= 1, --frames >= 0, --bytes in 22..9018, "
               "--rate > 0, --cycles-per-second > 0, --bad-fcs in [0, 1] (with --fcs)\n";
    return kExitUsage;
  }
  std::vector<sim::Mac> macs;
  for (int i = 0; i < o.nodes; ++i) macs.push_back(0x020000000000ULL | static_cast<uint64_t>(i));
  Status st = sim::WriteSyntheticPcap(o.out, macs, o.frames, o.bytes, o.rate, o.fcs, o.bad_fcs,
                                      o.cycles_per_second, o.seed);
  if (!st.ok()) {
    *io.err << "ukai sim gen-pcap: " << st.ToString() << "\n";
    return kExitRunFailed;
  }
  return kExitOk;
}

int DescribeSim(bool markdown, const CliIo& io) {
  *io.out << sim::DescribeModels(markdown) << std::flush;
  return kExitOk;
}

}  // namespace ukai::cli
