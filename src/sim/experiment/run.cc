#include "sim/experiment/run.h"

#include <chrono>
#include <cmath>
#include <memory>

#include "core/stats.h"
#include "sim/engine/network.h"
#include "sim/nic/run_gateway.h"
#include "sim/routing/registry.h"

namespace ukai::sim {
namespace {

// Accumulates the figures of measured messages.
struct Sample {
  IntHistogram latency;
  Summary network_latency;
  Summary hops;
  int64_t flits = 0;
  int64_t bytes = 0;

  void Add(const Delivery& d, int message_bytes) {
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
  }
};

class Runner {
 public:
  Runner(Network* net, const ProgressFn& progress) : net_(*net), progress_(progress) {}

  // Advances one cycle (skipping idle stretches up to `limit`); false on deadlock.
  bool Tick(int64_t limit) {
    net_.SkipIdle(limit);
    net_.Step();
    if (net_.Stalled(net_.config().measure.watchdog_cycles)) return false;
    if (progress_ && net_.now() >= next_progress_) {
      progress_(net_.now(), measured_);
      next_progress_ = net_.now() + 8192;
    }
    return true;
  }
  void set_measured(int64_t m) { measured_ = m; }

 private:
  Network& net_;
  const ProgressFn& progress_;
  int64_t next_progress_ = 8192;
  int64_t measured_ = 0;
};

struct Outcome {
  Sample sample;
  int64_t window_cycles = 0;
  int64_t backlog_growth = 0;
  bool capped = false;
};

// The paper's method: skip the first W deliveries, measure the next M.
Status RunMessages(Network& net, const ProgressFn& progress, Outcome* out) {
  const MeasureConfig& mc = net.config().measure;
  Runner runner(&net, progress);
  int64_t delivered = 0;
  int64_t t0 = 0, t1 = 0;
  int64_t backlog0 = net.backlog();
  const int64_t end = mc.warmup_messages + mc.measure_messages;
  while (delivered < end) {
    if (net.now() >= mc.max_cycles) {
      out->capped = true;
      break;
    }
    if (!runner.Tick(mc.max_cycles)) return net.DeadlockStatus(mc.watchdog_cycles);
    for (const Delivery& d : net.deliveries()) {
      if (delivered >= mc.warmup_messages && delivered < end) {
        out->sample.Add(d, net.config().traffic.message_bytes);
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

// Warm-up cycles, then sample windows until the mean latency converges.
Status RunCycles(Network& net, const ProgressFn& progress, Outcome* out) {
  const MeasureConfig& mc = net.config().measure;
  Runner runner(&net, progress);
  const int64_t warm_end = std::min(mc.warmup_cycles, mc.max_cycles);
  while (net.now() < warm_end) {
    if (!runner.Tick(warm_end)) return net.DeadlockStatus(mc.watchdog_cycles);
  }
  const int64_t backlog0 = net.backlog();
  const int64_t start = net.now();
  double previous_mean = -1;
  while (true) {
    if (net.now() >= mc.max_cycles) {
      out->capped = true;
      break;
    }
    Sample window;
    const int64_t window_end = std::min(net.now() + mc.sample_cycles, mc.max_cycles);
    while (net.now() < window_end) {
      if (!runner.Tick(window_end)) return net.DeadlockStatus(mc.watchdog_cycles);
      for (const Delivery& d : net.deliveries()) window.Add(d, net.config().traffic.message_bytes);
      runner.set_measured(out->sample.latency.count() + window.latency.count());
    }
    out->sample.Merge(window);
    const double mean = window.latency.Mean();
    const bool converged = window.latency.count() > 0 && previous_mean > 0 &&
                           std::fabs(mean - previous_mean) / previous_mean < mc.convergence;
    if (window.latency.count() > 0) previous_mean = mean;
    if (converged) break;
  }
  out->window_cycles = std::max<int64_t>(1, net.now() - start);
  out->backlog_growth = net.backlog() - backlog0;
  return Status::Ok();
}

}  // namespace

Result<PointResult> RunPoint(const SimConfig& config, const ProgressFn& progress) {
  if (config.nic.active()) return RunGatewayPoint(config, progress);  // docs/gateway.md
  const auto wall_start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Network>> made = Network::Create(config);
  if (!made.ok()) return made.status();
  Network& net = **made;
  Outcome out;
  if (config.measure.mode == MeasureMode::kMessages) {
    UKAI_RETURN_IF_ERROR(RunMessages(net, progress, &out));
  } else {
    UKAI_RETURN_IF_ERROR(RunCycles(net, progress, &out));
  }

  PointResult r;
  const double nodes = net.topology().NumNodes();
  const double window = static_cast<double>(out.window_cycles);
  r.offered_flits_per_node_cycle = net.offered_flits_per_node_cycle();
  r.accepted_flits_per_node_cycle = static_cast<double>(out.sample.flits) / (nodes * window);
  r.clock_mhz = config.router.clock_mhz;
  if (r.clock_mhz <= 0) {
    Result<const RoutingEntry*> entry = FindRoutingAlgorithm(config.routing.algorithm);
    r.clock_mhz = entry.ok() ? (*entry)->default_clock_mhz : 0.0;
  }
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
  // Saturation rule (docs/simulator.md): the cap was reached, or accepted throughput fell
  // clearly (>10 %) below the offered load, or the source queues grew during the
  // measurement by more than 10 % of the measured messages plus one per sending node.
  const double growth_limit = 0.1 * static_cast<double>(r.messages_measured) + net.sending_nodes();
  r.saturated = out.capped ||
                r.accepted_flits_per_node_cycle < 0.9 * r.offered_flits_per_node_cycle ||
                static_cast<double>(out.backlog_growth) > growth_limit;
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace ukai::sim
