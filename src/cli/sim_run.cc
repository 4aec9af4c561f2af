#include "cli/sim_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>

#include "cli/fullmesh_command.h"
#include "core/progress.h"
#include "sim/engine/rank_group.h"
#include "sim/experiment/config_schema.h"
#include "sim/nic/pcap_io.h"

namespace ukai::cli {
namespace {

// A short description of a point for progress and error messages.
std::string PointLabel(const sim::SimConfig& c) {
  std::string load = c.traffic.injection == sim::InjectionKind::kBernoulli
                         ? fmt::format("rate={}", c.traffic.rate)
                         : fmt::format("interval={}", c.traffic.interval);
  return fmt::format("routing={} pattern={} message_bytes={} {} seed={}", c.routing.algorithm,
                     c.traffic.pattern, c.traffic.message_bytes, load, c.seed);
}

bool IsConfigError(StatusCode code) {
  return code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound ||
         code == StatusCode::kUnsupported;
}

std::unique_ptr<output::RecordWriter> MakeWriter(output::Format format, std::ostream* out,
                                                 const std::vector<sim::SimConfig>& points) {
  switch (format) {
    case output::Format::kTable:
      return output::MakeTableWriter(out, SimTableColumns(points));
    case output::Format::kCsv:
      return output::MakeCsvWriter(out);
    case output::Format::kJson:
      return output::MakeJsonWriter(out);
  }
  return nullptr;
}

// Runs one point; an allocation failure that escapes the runner ends this point only.
Result<sim::PointResult> RunGuarded(const PointRunner& run_point, const sim::SimConfig& point,
                                    const sim::ProgressFn& progress) {
  try {
    return run_point(point, progress);
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("out of memory while simulating the point");
  }
}

// A figure of measured messages, or no value when none was measured (not a false 0).
output::Field Measured(const sim::PointResult& r, double value) {
  if (r.messages_measured == 0) return output::kNoValue;
  return value;
}

// The topology's shape: k and n of a k-ary n-cube; for the group topology k and n have no
// value (they mean nothing there) and its groups and group_size follow them.
void AddShape(const sim::NetworkConfig& n, output::Record* rec) {
  if (n.topology == sim::TopologyKind::kGroup) {
    rec->Add("k", output::kNoValue)
        .Add("n", output::kNoValue)
        .Add("groups", n.groups)
        .Add("group_size", n.group_size);
    return;
  }
  rec->Add("k", std::vector<int64_t>(n.k.begin(), n.k.end())).Add("n", n.n);
}

}  // namespace

output::Record PointRecord(size_t index, const sim::SimConfig& c, const sim::PointResult& r) {
  output::Record rec;
  rec.Add("point", index).Add("topology", std::string(sim::TopologyName(c.network.topology)));
  AddShape(c.network, &rec);
  rec.Add("routing", c.routing.algorithm)
      .Add("pattern", c.traffic.pattern)
      .Add("message_bytes", c.traffic.message_bytes)
      .Add("injection", std::string(sim::InjectionName(c.traffic.injection)))
      .Add("rate", c.traffic.rate)
      .Add("interval", c.traffic.interval)
      .Add("seed", static_cast<int64_t>(c.seed))
      .Add("vcs", c.router.vcs)
      .Add("vc_buffer_flits", c.router.vc_buffer_flits)
      .Add("pe_vcs", c.router.pe_vcs)
      .Add("switching", std::string(sim::SwitchingName(c.router.switching)))
      .Add("hop_cycles", c.router.hop_cycles)
      .Add("link_cycles", c.router.link_cycles)
      .Add("table_lookup_cycles", c.router.table_lookup_cycles)
      .Add("flit_bytes", c.router.flit_bytes)
      .Add("measure_mode", std::string(sim::MeasureModeName(c.measure.mode)))
      .Add("clock_mhz", r.clock_mhz)
      .Add("offered_flits_per_node_cycle", r.offered_flits_per_node_cycle)
      .Add("accepted_flits_per_node_cycle", r.accepted_flits_per_node_cycle)
      .Add("accepted_bytes_per_second", r.accepted_bytes_per_second)
      .Add("avg_latency_cycles", Measured(r, r.avg_latency_cycles))
      .Add("p50_latency_cycles", Measured(r, r.p50_latency_cycles))
      .Add("p99_latency_cycles", Measured(r, r.p99_latency_cycles))
      .Add("max_latency_cycles", Measured(r, r.max_latency_cycles))
      .Add("avg_network_latency_cycles", Measured(r, r.avg_network_latency_cycles))
      .Add("avg_hops", Measured(r, r.avg_hops))
      .Add("messages_measured", r.messages_measured)
      .Add("cycles", r.cycles)
      .Add("latency_trend", r.latency_trend)
      .Add("saturated", r.saturated)
      .Add("wall_seconds", r.wall_seconds)
      .Add("bandwidth_mbytes_per_second", r.bandwidth_mbytes_per_second)
      .Add("recovered_messages", r.recovered_messages)
      .Add("recovery_ratio", r.recovery_ratio)
      .Add("table_messages", r.table_messages)
      .Add("table_ratio", r.table_ratio)
      .Add("misrouted_hops", r.misrouted_hops)
      .Add("avg_misrouted_hops", r.avg_misrouted_hops)
      .Add("undeliverable_messages", r.undeliverable_messages)
      .Add("not_generated_messages", r.not_generated_messages)
      .Add("retransmitted_messages", r.retransmitted_messages)
      .Add("discarded_messages", r.discarded_messages)
      .Add("reconfigurations", r.reconfigurations)
      .Add("reconfiguration_cycles", r.reconfiguration_cycles)
      .Add("reconfiguration_regions", r.reconfiguration_regions)
      .Add("cancelled_root_candidates", r.cancelled_root_candidates)
      // The router options (docs/simulator.md, "Router options").
      .Add("eject_flits", c.router.eject_flits)
      .Add("switch_bubble_cycles", c.router.switch_bubble_cycles)
      .Add("header_units", std::string(sim::HeaderUnitsName(c.router.header_units)))
      .Add("table_read_ports", c.router.table_read_ports)
      .Add("source_queue", c.traffic.source_queue)
      .Add("dor_tie", std::string(sim::DorTieName(c.routing.dor_tie)))
      .Add("dor_dateline", std::string(sim::DorDatelineName(c.routing.dor_dateline)))
      .Add("duato_atomic", std::string(sim::DuatoAtomicName(c.routing.duato_atomic)))
      .Add("note", r.note);
  if (r.gateway.present) {  // the gateway model (docs/gateway.md)
    const sim::GatewayFigures& g = r.gateway;
    rec.Add("nic_detours", std::string(sim::DetourPolicyName(c.nic.detours)))
        .Add("frames_in", g.frames_in)
        .Add("frames_fcs_discarded", g.frames_fcs_discarded)
        .Add("frames_delivered", g.frames_delivered)
        .Add("frames_lost", g.frames_lost)
        .Add("frames_retransmitted", g.frames_retransmitted)
        .Add("frames_no_owner", g.frames_no_owner)
        .Add("frames_owner_faulty", g.frames_owner_faulty)
        .Add("broadcasts", g.broadcasts)
        .Add("egress_frames", g.egress_frames)
        .Add("egress_bytes", g.egress_bytes)
        .Add("egress_lost", g.egress_lost)
        .Add("table_updates_sent", g.table_updates_sent)
        .Add("avg_frame_latency_cycles", g.avg_frame_latency_cycles)
        .Add("p99_frame_latency_cycles", g.p99_frame_latency_cycles)
        .Add("max_frame_latency_cycles", g.max_frame_latency_cycles)
        .Add("nic_frames", g.nic_frames)
        .Add("io_cpu_busy_cycles", g.io_cpu_busy_cycles)
        .Add("max_io_cpu_load", g.max_io_cpu_load)
        .Add("job_launches", g.job_launches)
        .Add("nic_commands_sent", g.nic_commands_sent)
        .Add("frames_dropped_disabled", g.frames_dropped_disabled)
        .Add("egress_dropped_disabled", g.egress_dropped_disabled)
        .Add("egress_updates_sent", g.egress_updates_sent)
        .Add("egress_retransmitted", g.egress_retransmitted)
        .Add("table_rows_cleared", g.table_rows_cleared)
        .Add("management_messages_lost", g.management_messages_lost);
  }
  return rec;
}

std::vector<output::TableColumn> SimTableColumns(const std::vector<sim::SimConfig>& points) {
  size_t routing = 0, pattern = 0;
  for (const sim::SimConfig& p : points) {
    routing = std::max(routing, p.routing.algorithm.size());
    pattern = std::max(pattern, p.traffic.pattern.size());
  }
  // Doubles print with 5 significant digits: at most 9 characters above 0.001.
  constexpr size_t kNum = 9;
  bool bernoulli =
      points.empty() || points.front().traffic.injection == sim::InjectionKind::kBernoulli;
  return {
      {"routing", "routing", routing},
      {"pattern", "pattern", pattern},
      {"message_bytes", "bytes", 0},
      {bernoulli ? "rate" : "interval", bernoulli ? "rate" : "interval", 0},
      {"offered_flits_per_node_cycle", "offered", kNum},
      {"accepted_flits_per_node_cycle", "accepted", kNum},
      {"avg_latency_cycles", "latency", kNum},
      {"p99_latency_cycles", "p99", 0},
      {"avg_network_latency_cycles", "net_lat", kNum},
      {"avg_hops", "hops", 0},
      {"messages_measured", "messages", 0},
      {"cycles", "cycles", 8},
      {"saturated", "saturated", 0},
      {"wall_seconds", "wall_s", kNum},
      {"bandwidth_mbytes_per_second", "MB/s", kNum},
      {"recovery_ratio", "recovery", kNum},
      {"note", "note", 0},
  };
}

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

int RunSimPoints(const SimRunOptions& options, const PointRunner& run_point, const CliIo& io) {
  Result<std::unique_ptr<sim::RankGroup>> joined = sim::JoinRankGroup();
  if (!joined.ok()) {
    *io.err << "ukai sim run: " << joined.status().ToString() << '\n' << std::flush;
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
  auto fail = [&io](int code, const std::string& message) {
    *io.err << "ukai sim run: " << message << '\n' << std::flush;
    return code;
  };
  Result<output::Format> format = output::ParseFormat(options.format);
  if (!format.ok()) return fail(kExitUsage, "--format: " + format.status().message());
  const bool writes = ranks == nullptr || ranks->writes_output();
  SimRunOptions fullmesh = options;
  if (!writes) fullmesh.out_path.clear();  // rank 0 alone writes the --out file
  if (std::optional<int> code = MaybeRunFullMesh(fullmesh, *format, io)) {
    if (options.threads > 1 || ranks != nullptr) {
      *io.err << "ukai sim run: the full-mesh message-level model is not partitioned: it ran "
                 "on one thread"
              << (ranks != nullptr ? " (every MPI rank ran it whole; rank 0 wrote the results)"
                                   : "")
              << '\n'
              << std::flush;
    }
    return *code;
  }
  std::vector<std::string> sets = options.sets;
  if (options.threads >= 0) sets.push_back("run.threads=" + std::to_string(options.threads));
  Result<std::vector<sim::SimConfig>> points = sim::LoadSimConfigs(options.config_path, sets);
  if (!points.ok()) return fail(kExitUsage, points.status().ToString());
  for (sim::SimConfig& p : *points) p.run.ranks = ranks;

  std::ofstream file;
  std::ostringstream no_file;
  Result<std::ostream*> opened = &no_file;
  if (writes) opened = OpenRunOutput(options.out_path, io, &file);
  if (!opened.ok()) return fail(kExitUsage, opened.status().message());
  std::ostream* out = *opened;
  std::unique_ptr<output::RecordWriter> writer = MakeWriter(*format, out, *points);
  ProgressLine progress(io.err, io.err_is_terminal);
  std::string last_note;
  const size_t total = points->size();
  for (size_t i = 0; i < total; ++i) {
    const sim::SimConfig& point = (*points)[i];
    const std::string label = PointLabel(point);
    const std::string head = fmt::format("[{}/{}] {}", i + 1, total, label);
    progress.Force(head);
    sim::ProgressFn on_progress = [&](int64_t cycle, int64_t measured) {
      progress.Update(fmt::format("{}: cycle {}, {} messages measured", head, cycle, measured));
    };
    Result<sim::PointResult> result = RunGuarded(run_point, point, on_progress);
    progress.Clear();
    if (!result.ok() && ranks != nullptr && ranks->size() > 1 &&
        !FailsOnEveryRank(result.status())) {
      ranks->Abort(
          fmt::format("point {} of {} ({}): {}", i + 1, total, label, result.status().ToString()));
    }
    if (result.ok() && !result->partition_note.empty() && result->partition_note != last_note) {
      *io.err << "ukai sim run: point " << i + 1 << ": " << result->partition_note << '\n'
              << std::flush;
      last_note = result->partition_note;
    }
    if (!result.ok()) {
      int code = IsConfigError(result.status().code()) ? kExitUsage : kExitRunFailed;
      return fail(code, fmt::format("point {} of {} ({}): {}{}", i + 1, total, label,
                                    result.status().ToString(),
                                    i == 0 ? "" : fmt::format(" ({} earlier points written)", i)));
    }
    Status written = writer->Write(PointRecord(i, point, *result));
    if (!written.ok()) {
      return fail(
          kExitRunFailed,
          fmt::format("writing {}: {}", options.out_path.empty() ? "stdout" : options.out_path,
                      written.ToString()));
    }
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
  *io.out << sim::DescribeSimConfig(markdown) << DescribeFullMesh(markdown) << std::flush;
  return kExitOk;
}

}  // namespace ukai::cli
