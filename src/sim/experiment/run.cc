#include "sim/experiment/run.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/stats.h"
#include "sim/engine/network.h"
#include "sim/engine/rank_group.h"
#include "sim/experiment/memory_budget.h"
#include "sim/experiment/run_booksim.h"
#include "sim/nic/run_gateway.h"
#include "sim/nic/run_sss.h"
#include "sim/routing/registry.h"
#include "sim/routing/route_state.h"
#include "sim/workload/run_workload.h"

namespace ukai::sim {
namespace {

// Saturation thresholds (docs/simulator.md): accepted throughput below the offered load
// by more than max(5 %, 3 / sqrt(messages measured)) (three standard errors of a sample
// that small), or the later half of the measurement's latency this much above the earlier
// half.
double AcceptedShortfall(int64_t measured) {
  return std::max(0.05, 3 / std::sqrt(static_cast<double>(std::max<int64_t>(1, measured))));
}
constexpr double kSaturationTrend = 0.2;
// ... a trend counts only when the mean latency is also this many times the zero-load
// latency (below that, a 4000-message measurement's halves differ by 20 % by chance).
constexpr double kSaturationLatency = 3;

// Accumulates the figures of measured messages.
struct Sample {
  IntHistogram latency;
  Summary network_latency;
  Summary hops;
  int64_t flits = 0;
  int64_t bytes = 0;
  int64_t recovered = 0, table = 0, misrouted = 0;  // route_state.h bits

  void Add(const Delivery& d, int message_bytes) {
    recovered += (d.routing_state & kRecoveryBit) != 0;
    table += (d.routing_state & kUsedTableBit) != 0;
    misrouted += MisroutedHops(d.routing_state);
    latency.Add(d.delivered - d.created);
    network_latency.Add(static_cast<double>(d.delivered - d.injected));
    hops.Add(d.hops);
    flits += d.length;
    bytes += message_bytes;
  }
  void Merge(const Sample& o) {
    latency.Merge(o.latency);
    network_latency.Merge(o.network_latency);
    hops.Merge(o.hops);
    flits += o.flits;
    bytes += o.bytes;
    recovered += o.recovered;
    table += o.table;
    misrouted += o.misrouted;
  }
};

struct Outcome {
  Sample sample;
  // Latency of the earlier and the later half of the measurement (messages mode: by
  // delivery order; cycles mode: the first and last half of the sample windows).
  Summary early, late;
  int64_t window_cycles = 0;
  int64_t backlog_growth = 0;
  bool capped = false;
  std::string note;  // why the point stopped early (PointResult::note)
};

// Source-queue growth within a measurement that still counts as steady: 10 % of the
// messages measured plus one message per sending node.
double BacklogTolerance(int64_t measured, int sending_nodes) {
  return 0.1 * static_cast<double>(measured) + sending_nodes;
}

class Runner {
 public:
  Runner(Network* net, const ProgressFn& progress, Outcome* out)
      : net_(*net),
        progress_(progress),
        out_(*out),
        backlog_bound_(BacklogBound(net->config(), net->sending_nodes())) {}

  // Advances one cycle (skipping idle stretches up to `limit`, but never past it). False
  // when the point must stop: a deadlock (status() says so) or a source-queue backlog past
  // the bound (out.note says so).
  bool Tick(int64_t limit) {
    if (net_.SkipIdle(limit) && net_.now() >= limit) return true;
    net_.Step();
    if (net_.Stalled(net_.config().measure.watchdog_cycles)) {
      status_ = net_.DeadlockStatus(net_.config().measure.watchdog_cycles);
      return false;
    }
    if (net_.backlog() > backlog_bound_) {
      out_.note = fmt::format(
          "stopped at cycle {}: {} messages waited in the source queues, more than the bound "
          "of {} (min of {} per sending node and the memory left under run.memory_limit); "
          "the offered load is past saturation",
          net_.now(), net_.backlog(), backlog_bound_, kBacklogPerSendingNode);
      return false;
    }
    if (progress_ && net_.now() >= next_progress_) {
      progress_(net_.now(), measured_);
      next_progress_ = net_.now() + 8192;
    }
    return true;
  }
  void set_measured(int64_t m) { measured_ = m; }
  const Status& status() const { return status_; }

 private:
  Network& net_;
  const ProgressFn& progress_;
  Outcome& out_;
  const int64_t backlog_bound_;
  int64_t next_progress_ = 8192;
  int64_t measured_ = 0;
  Status status_;
};

// The paper's method: skip the first W deliveries, measure the next M.
Status RunMessages(Network& net, const ProgressFn& progress, Outcome* out) {
  const MeasureConfig& mc = net.config().measure;
  Runner runner(&net, progress, out);
  int64_t delivered = 0;
  int64_t t0 = 0, t1 = 0;
  int64_t backlog0 = net.backlog();
  const int64_t end = mc.warmup_messages + mc.measure_messages;
  while (delivered < end) {
    if (net.now() >= mc.max_cycles) {
      out->capped = true;
      break;
    }
    if (!runner.Tick(mc.max_cycles)) {
      if (!runner.status().ok()) return runner.status();
      break;
    }
    for (const Delivery& d : net.deliveries()) {
      if (delivered >= mc.warmup_messages && delivered < end) {
        out->sample.Add(d, net.config().traffic.message_bytes);
        const bool early = delivered - mc.warmup_messages < mc.measure_messages / 2;
        (early ? out->early : out->late).Add(static_cast<double>(d.delivered - d.created));
        t1 = d.delivered;
      }
      if (++delivered == mc.warmup_messages) {
        t0 = d.delivered;
        backlog0 = net.backlog();
      }
    }
    runner.set_measured(out->sample.latency.count());
  }
  if (out->sample.latency.count() == 0) t1 = net.now();
  out->window_cycles = std::max<int64_t>(1, t1 - t0);
  out->backlog_growth = net.backlog() - backlog0;
  return Status::Ok();
}

// Latency trend of a measurement: the later half's mean over the earlier half's, minus 1.
double Trend(const Summary& early, const Summary& late) {
  return early.count() > 0 && late.count() > 0 && early.mean() > 0 ? late.mean() / early.mean() - 1
                                                                   : 0;
}

// Whether the latest sample window ends the measurement: its mean latency differs by less
// than measure.convergence from the window before it and from the window three before it
// (a slow drift over windows is not convergence), and the measurement so far is not
// saturated by the rule below (accepted keeps up with offered, no latency trend): a
// growing latency is never called converged.
bool Converged(const std::vector<Summary>& windows, const Network& net, const Sample& sample,
               int64_t cycles) {
  const size_t n = windows.size();
  const double convergence = net.config().measure.convergence;
  if (n < 4) return false;
  for (size_t back : {size_t{2}, size_t{4}}) {
    const Summary& w = windows[n - back];
    if (windows[n - 1].count() == 0 || w.count() == 0 || w.mean() <= 0 ||
        std::fabs(windows[n - 1].mean() - w.mean()) / w.mean() >= convergence) {
      return false;
    }
  }
  Summary early, late;
  for (size_t i = 0; i < n / 2; ++i) early.Merge(windows[i]), late.Merge(windows[n - 1 - i]);
  const double accepted =
      static_cast<double>(sample.flits) /
      (net.topology().NumTerminals() * static_cast<double>(std::max<int64_t>(1, cycles)));
  return accepted >=
             (1 - AcceptedShortfall(sample.latency.count())) * net.offered_flits_per_node_cycle() &&
         Trend(early, late) <= kSaturationTrend;
}

// Warm-up cycles, then sample windows until the mean latency converges.
Status RunCycles(Network& net, const ProgressFn& progress, Outcome* out) {
  const MeasureConfig& mc = net.config().measure;
  Runner runner(&net, progress, out);
  const int64_t warm_end = std::min(mc.warmup_cycles, mc.max_cycles);
  bool stopped = false;
  while (!stopped && net.now() < warm_end) stopped = !runner.Tick(warm_end);
  const int64_t backlog0 = net.backlog();
  const int64_t start = net.now();
  std::vector<Summary> windows;  // latency of each sample window
  while (!stopped) {
    if (net.now() >= mc.max_cycles) {
      out->capped = true;
      break;
    }
    Sample window;
    Summary latency;
    const int64_t window_end = std::min(net.now() + mc.sample_cycles, mc.max_cycles);
    while (!stopped && net.now() < window_end) {
      stopped = !runner.Tick(window_end);
      for (const Delivery& d : net.deliveries()) {
        window.Add(d, net.config().traffic.message_bytes);
        latency.Add(static_cast<double>(d.delivered - d.created));
      }
      runner.set_measured(out->sample.latency.count() + window.latency.count());
    }
    out->sample.Merge(window);
    windows.push_back(latency);
    if (!stopped && Converged(windows, net, out->sample, net.now() - start)) break;
  }
  UKAI_RETURN_IF_ERROR(runner.status());
  for (size_t i = 0; i < windows.size() / 2; ++i) {
    out->early.Merge(windows[i]);
    out->late.Merge(windows[windows.size() - 1 - i]);
  }
  out->window_cycles = std::max<int64_t>(1, net.now() - start);
  out->backlog_growth = net.backlog() - backlog0;
  return Status::Ok();
}

// The fault-tolerance figures of PointResult (point_result.h).
void FaultStats(const Network& net, const Sample& s, PointResult* r) {
  r->bandwidth_mbytes_per_second =
      r->accepted_bytes_per_second * net.topology().NumTerminals() / 1e6;
  RoutingFaultFigures(net, {r->messages_measured, s.recovered, s.table, s.misrouted}, r);
  r->not_generated_messages = net.messages_not_generated();
}

// Zero-load latency of a message over the point's mean hop count (docs/simulator.md:
// (H + 1) * hop + H * link + L; table lookups left out, so it is a lower bound).
double ZeroLoad(const SimConfig& c, const PointResult& r) {
  const double flits =
      std::ceil(static_cast<double>(c.traffic.message_bytes) / c.router.flit_bytes);
  return (r.avg_hops + 1) * c.router.hop_cycles + r.avg_hops * c.router.link_cycles + flits;
}

// The saturation rule (docs/simulator.md, "Saturation"): the network does not keep up
// with the offered load. Returns why ("" when it keeps up); reaching measure.max_cycles
// alone is not saturation. Messages that became undeliverable (a fault on their path) are
// no shortfall of the network: their share of the messages created is taken off the
// offered load.
std::string Saturation(const SimConfig& c, const PointResult& r, const Outcome& out,
                       const Network& net) {
  if (!out.note.empty()) return "saturated: stopped at the source-queue backlog bound";
  const double lost = static_cast<double>(net.messages_undeliverable()) /
                      static_cast<double>(std::max<int64_t>(1, net.messages_created()));
  const double offered = r.offered_flits_per_node_cycle * (1 - lost);
  if (r.messages_measured > 0 &&
      r.accepted_flits_per_node_cycle < (1 - AcceptedShortfall(r.messages_measured)) * offered) {
    return fmt::format("saturated: accepted {:.4g} flits/node/cycle, below the offered {:.4g}{}",
                       r.accepted_flits_per_node_cycle, offered,
                       lost > 0 ? " (less the undeliverable messages' share)" : "");
  }
  if (r.latency_trend > kSaturationTrend &&
      r.avg_latency_cycles > kSaturationLatency * ZeroLoad(c, r)) {
    return fmt::format(
        "saturated: the later half's mean latency is {:.0f} % above the earlier "
        "half's",
        100 * r.latency_trend);
  }
  if (static_cast<double>(out.backlog_growth) >
      BacklogTolerance(r.messages_measured, net.sending_nodes())) {
    return fmt::format("saturated: the source queues grew by {} messages during the measurement",
                       out.backlog_growth);
  }
  return "";
}

// PointResult::note: why the point stopped early and why figures are missing.
std::string Note(const SimConfig& c, const PointResult& r, const Outcome& out) {
  std::string note = out.note;
  auto add = [&note](const std::string& s) { note += (note.empty() ? "" : "; ") + s; };
  if (out.capped) {
    add(c.measure.mode == MeasureMode::kMessages
            ? fmt::format("measure.max_cycles = {} reached after {} of {} measured messages",
                          c.measure.max_cycles, r.messages_measured, c.measure.measure_messages)
            : fmt::format("measure.max_cycles = {} reached before the mean latency converged",
                          c.measure.max_cycles));
  }
  if (r.messages_measured == 0) {
    add("no message was measured, so there is no latency, hops or throughput figure");
  }
  return note;
}

// RunPoint() without the catch of std::bad_alloc.
Result<PointResult> RunPointUnguarded(const SimConfig& config, const ProgressFn& progress);

}  // namespace

Result<PointResult> RunPoint(const SimConfig& config, const ProgressFn& progress) {
  try {
    return RunPointUnguarded(config, progress);
  } catch (const std::bad_alloc&) {
    const std::string msg = fmt::format(
        "out of memory while simulating the point (the network's own state was "
        "estimated at {}, under the limit of {}; lower the load or the network "
        "size, or the memory other processes use)",
        FormatBytes(Network::StateBytes(config)),
        FormatBytes(double(EffectiveMemoryLimit(config.run).bytes)));
    // The other ranks are in the middle of the point: end the job rather than leave them.
    if (config.run.ranks != nullptr && config.run.ranks->size() > 1) config.run.ranks->Abort(msg);
    return Status::Unavailable(msg);
  }
}

namespace {

Result<PointResult> RunPointUnguarded(const SimConfig& config, const ProgressFn& progress) {
  if (config.nic.active()) return RunGatewayPoint(config, progress);        // docs/gateway.md
  if (config.sss.active()) return RunSssPoint(config, progress);            // docs/sss.md
  if (config.workload.active()) return RunWorkloadPoint(config, progress);  // docs/workloads.md
  const auto wall_start = std::chrono::steady_clock::now();
  UKAI_RETURN_IF_ERROR(CheckMemory(config));
  Result<std::unique_ptr<Network>> made = Network::Create(config);
  if (!made.ok()) return made.status();
  Network& net = **made;
  Outcome out;
  PointResult r;
  const bool booksim = config.measure.mode == MeasureMode::kBooksim ||
                       config.measure.mode == MeasureMode::kBooksimThroughput;
  if (booksim) {  // BookSim2's method fills the figures itself (run_booksim.h)
    UKAI_RETURN_IF_ERROR(RunBooksimMeasurement(net, progress, &r));
  } else if (config.measure.mode == MeasureMode::kMessages) {
    UKAI_RETURN_IF_ERROR(RunMessages(net, progress, &out));
  } else {
    UKAI_RETURN_IF_ERROR(RunCycles(net, progress, &out));
  }

  const double nodes = net.topology().NumTerminals();  // per end node
  const double window = static_cast<double>(out.window_cycles);
  r.clock_mhz = config.router.clock_mhz;
  if (r.clock_mhz <= 0) {
    Result<const RoutingEntry*> entry = FindRoutingAlgorithm(config.routing.algorithm);
    r.clock_mhz = entry.ok() ? (*entry)->default_clock_mhz : 0.0;
  }
  if (booksim) {
    r.accepted_bytes_per_second =
        r.accepted_flits_per_node_cycle * config.router.flit_bytes * r.clock_mhz * 1e6;
    // What faults did to the run, as in our own modes (BookSim2 prints none of it).
    r.undeliverable_messages = net.messages_undeliverable();
    r.retransmitted_messages = net.messages_retransmitted();
    r.discarded_messages = net.messages_discarded();
    r.reconfigurations = net.reconfigurations();
    r.reconfiguration_cycles = net.reconfiguration_cycles();
    NotePendingFaults(net, &r.note);
    r.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return r;
  }
  r.offered_flits_per_node_cycle = net.offered_flits_per_node_cycle();
  r.accepted_flits_per_node_cycle = static_cast<double>(out.sample.flits) / (nodes * window);
  r.accepted_bytes_per_second =
      static_cast<double>(out.sample.bytes) / (nodes * window) * r.clock_mhz * 1e6;
  r.avg_latency_cycles = out.sample.latency.Mean();
  r.p50_latency_cycles = static_cast<double>(out.sample.latency.Percentile(0.5));
  r.p99_latency_cycles = static_cast<double>(out.sample.latency.Percentile(0.99));
  r.max_latency_cycles = static_cast<double>(out.sample.latency.Max());
  r.avg_network_latency_cycles = out.sample.network_latency.mean();
  r.avg_hops = out.sample.hops.mean();
  r.messages_measured = out.sample.latency.count();
  r.cycles = net.now();
  r.latency_trend = Trend(out.early, out.late);
  const std::string saturation = Saturation(config, r, out, net);
  r.saturated = !saturation.empty();
  r.note = Note(config, r, out);
  if (r.saturated && out.note.empty()) r.note += (r.note.empty() ? "" : "; ") + saturation;
  NotePendingFaults(net, &r.note);
  r.partition_note = net.partition_note();
  FaultStats(net, out.sample, &r);
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace

void RoutingFaultFigures(const Network& net, const RoutingCounts& c, PointResult* r) {
  const double measured = static_cast<double>(std::max<int64_t>(1, c.measured));
  r->recovered_messages = c.recovered;
  r->recovery_ratio = static_cast<double>(c.recovered) / measured;
  r->table_messages = c.table;
  r->table_ratio = static_cast<double>(c.table) / measured;
  r->misrouted_hops = c.misrouted;
  r->avg_misrouted_hops = static_cast<double>(c.misrouted) / measured;
  r->undeliverable_messages = net.messages_undeliverable();
  r->retransmitted_messages = net.messages_retransmitted();
  r->discarded_messages = net.messages_discarded();
  r->reconfigurations = net.reconfigurations();
  r->reconfiguration_cycles = net.reconfiguration_cycles();
  r->reconfiguration_regions = net.reconfiguration_regions();
  r->cancelled_root_candidates = net.cancelled_root_candidates();
}

void NotePendingFaults(const Network& net, std::string* note) {
  const int64_t pending = net.fault_events_pending();
  if (pending == 0) return;
  *note += fmt::format(
      "{}faults.events: {} timed event{} after the end of the run did not happen (the first "
      "at cycle {}; the run ended at cycle {})",
      note->empty() ? "" : "; ", pending, pending == 1 ? "" : "s", net.next_fault_event_cycle(),
      net.now());
}

}  // namespace ukai::sim
