#include "sim/workload/run_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/memory_budget.h"
#include "sim/routing/registry.h"
#include "sim/workload/netrace_source.h"
#include "sim/workload/otf2_replay.h"

namespace ukai::sim {
namespace {

Result<std::unique_ptr<TraceSource>> OpenNetrace(const SimConfig& c, const Topology& topology,
                                                 double) {
  Result<std::unique_ptr<NetraceSource>> s = NetraceSource::Open(c.workload, topology);
  if (!s.ok()) return s.status();
  return std::unique_ptr<TraceSource>(std::move(*s));
}

Result<std::unique_ptr<TraceSource>> OpenOtf2(const SimConfig& c, const Topology& topology,
                                              double clock_mhz) {
  Result<std::unique_ptr<Otf2Replay>> s = Otf2Replay::Open(c, topology, clock_mhz);
  if (!s.ok()) return s.status();
  return std::unique_ptr<TraceSource>(std::move(*s));
}

// The trace kinds (workload.kind), each with its opener.
struct TraceKind {
  WorkloadKind kind;
  const char* name;
  Result<std::unique_ptr<TraceSource>> (*open)(const SimConfig&, const Topology&, double);
};
constexpr TraceKind kTraceKinds[] = {
    {WorkloadKind::kNetrace, "netrace", &OpenNetrace},
    {WorkloadKind::kOtf2, "otf2", &OpenOtf2},
};

const TraceKind* FindKind(WorkloadKind kind) {
  for (const TraceKind& k : kTraceKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace

double ClockMhz(const SimConfig& c) {
  if (c.router.clock_mhz > 0) return c.router.clock_mhz;
  Result<const RoutingEntry*> entry = FindRoutingAlgorithm(c.routing.algorithm);
  return entry.ok() ? (*entry)->default_clock_mhz : 0.0;
}

namespace {

struct Ending {
  bool capped = false, stuck = false;
};

// Steps the network until the workload is done, stuck or capped.
// The cycle a trace replay stops at: measure.max_cycles when it was set, else none.
int64_t CycleLimit(const SimConfig& c) {
  return c.workload.capped ? c.measure.max_cycles : std::numeric_limits<int64_t>::max() / 4;
}

Status Drive(Network& net, Workload& w, const ProgressFn& progress, Ending* end) {
  const MeasureConfig& mc = net.config().measure;
  const int64_t limit = CycleLimit(net.config());
  int64_t next_progress = 8192;
  for (;;) {
    if (w.Done()) return Status::Ok();
    if (net.now() >= limit) {
      end->capped = true;
      return Status::Ok();
    }
    if (w.Stuck(net.now())) {
      end->stuck = true;
      return Status::Ok();
    }
    if (net.SkipIdle(limit) && net.now() >= limit) continue;
    net.Step();
    UKAI_RETURN_IF_ERROR(w.status());
    if (net.Stalled(mc.watchdog_cycles)) return net.DeadlockStatus(mc.watchdog_cycles);
    if (progress && net.now() >= next_progress) {
      progress(net.now(), w.stats().packets_delivered);
      next_progress = net.now() + 8192;
    }
  }
}

}  // namespace

void NetworkFigures(const Network& net, const Workload& w, double clock, PointResult* r) {
  const WorkloadStats& s = w.stats();
  const double nodes = net.topology().NumNodes();
  const double cycles = static_cast<double>(std::max<int64_t>(1, net.now()));
  r->clock_mhz = clock;
  r->messages_measured = s.packets_delivered;
  r->accepted_flits_per_node_cycle = static_cast<double>(s.flits_delivered) / (nodes * cycles);
  r->offered_flits_per_node_cycle = r->accepted_flits_per_node_cycle;
  r->accepted_bytes_per_second =
      static_cast<double>(s.bytes_delivered) / (nodes * cycles) * clock * 1e6;
  r->bandwidth_mbytes_per_second = r->accepted_bytes_per_second * nodes / 1e6;
  r->avg_latency_cycles = s.packet_latency.Mean();
  r->p50_latency_cycles = static_cast<double>(s.packet_latency.Percentile(0.5));
  r->p99_latency_cycles = static_cast<double>(s.packet_latency.Percentile(0.99));
  r->max_latency_cycles = static_cast<double>(s.packet_latency.Max());
  r->avg_network_latency_cycles = s.packet_network_latency.mean();
  r->avg_hops = s.packet_hops.mean();
  r->cycles = net.now();
  RoutingFaultFigures(
      net, {s.packets_delivered, s.packets_recovered, s.packets_table, s.misrouted_hops}, r);
}

WorkloadOptions WorkloadOptionsFor(const SimConfig& c) {
  return WorkloadOptionsFor(c, c.workload.packet_bytes);
}

WorkloadOptions WorkloadOptionsFor(const SimConfig& c, int64_t packet_bytes) {
  WorkloadOptions o;
  o.flit_bytes = c.router.flit_bytes;
  const int64_t fb = c.router.flit_bytes;
  int64_t flits = std::max<int64_t>(1, (packet_bytes + fb - 1) / fb);
  flits = std::min<int64_t>(flits, 32767);
  if (c.router.switching == Switching::kVirtualCutThrough) {
    flits = std::min<int64_t>(flits, c.router.vc_buffer_flits);
  }
  o.packet_flits = static_cast<int>(flits);
  return o;
}

Result<std::unique_ptr<TraceSource>> OpenTraceSource(const SimConfig& c, const Topology& topology,
                                                     double clock_mhz) {
  const TraceKind* kind = FindKind(c.workload.kind);
  if (kind == nullptr)
    return Status::NotFound("workload.kind: not a trace workload").WithKey("workload.kind");
  return kind->open(c, topology, clock_mhz);
}

Status CheckWorkload(const SimConfig& c, const Topology& topology) {
  Result<std::unique_ptr<TraceSource>> s = OpenTraceSource(c, topology, ClockMhz(c));
  return s.ok() ? Status::Ok() : s.status();
}

Result<PointResult> RunWorkloadPoint(const SimConfig& config, const ProgressFn& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  UKAI_RETURN_IF_ERROR(CheckMemory(config));
  Result<std::unique_ptr<Network>> made = Network::Create(config, {}, /*with_traffic=*/false);
  if (!made.ok()) return made.status();
  Network& net = **made;
  const double clock = ClockMhz(config);
  Result<std::unique_ptr<TraceSource>> source = OpenTraceSource(config, net.topology(), clock);
  if (!source.ok()) return source.status();
  Workload w(WorkloadOptionsFor(config));
  w.AddSource(source->get());
  net.SetMessageSource(&w);
  Ending ending;
  UKAI_RETURN_IF_ERROR(Drive(net, w, progress, &ending));
  net.SetMessageSource(nullptr);

  PointResult r;
  NetworkFigures(net, w, clock, &r);
  WorkloadFigures& f = r.workload;
  f.present = true;
  f.kind = FindKind(config.workload.kind)->name;
  f.messages = w.stats().messages_delivered;
  f.lost_messages = w.stats().messages_lost;
  f.blocked_messages = w.Blocked();
  f.avg_message_latency_cycles = w.stats().message_latency.Mean();
  f.p99_message_latency_cycles = static_cast<double>(w.stats().message_latency.Percentile(0.99));
  std::vector<std::string> notes;
  if (ending.capped) {
    notes.push_back(fmt::format("measure.max_cycles = {} reached before the trace finished",
                                config.measure.max_cycles));
  }
  if (ending.stuck) {
    notes.push_back(
        fmt::format("stopped at cycle {}: {} message(s) wait for messages that can "
                    "never be delivered (lost to faults)",
                    net.now(), w.Blocked()));
  }
  (*source)->Report(w, {net.now(), clock, w.Done()}, &f, &notes);
  for (const std::string& n : notes) r.note += (r.note.empty() ? "" : "; ") + n;
  NotePendingFaults(net, &r.note);
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace ukai::sim
