#include "sim/nic/run_gateway.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/rank_group.h"
#include "sim/experiment/run.h"
#include "sim/nic/pcap_io.h"
#include "sim/routing/registry.h"
#include "sim/routing/route_state.h"

namespace ukai::sim {
namespace {

// The internal traffic's messages (traffic.*) over the whole run.
struct InternalSample {
  IntHistogram latency;
  Summary network_latency, hops;
  int64_t flits = 0, bytes = 0, recovered = 0, table = 0, misrouted = 0;

  void Add(const Delivery& d, int message_bytes) {
    latency.Add(d.delivered - d.created);
    network_latency.Add(static_cast<double>(d.delivered - d.injected));
    hops.Add(d.hops);
    flits += d.length;
    bytes += message_bytes;
    recovered += (d.routing_state & kRecoveryBit) != 0;
    table += (d.routing_state & kUsedTableBit) != 0;
    misrouted += MisroutedHops(d.routing_state);
  }
};

// The saturation rule of a gateway point (docs/gateway.md, "Saturation"): the NICs' path
// does not keep up with the ingress frames. Returns why ("" when it keeps up).
std::string FrameSaturation(const Gateway& g, const SimConfig& config, bool capped) {
  const GatewayCounters& c = g.counters();
  if (capped) {
    return fmt::format(
        "saturated: measure.max_cycles = {} reached with {} of {} ingress frames "
        "not yet settled (delivered, discarded or lost)",
        config.measure.max_cycles, c.frames_in - c.frames_settled, c.frames_in);
  }
  if (c.frames_in == 0) return "";
  const double share =
      static_cast<double>(c.backlog_at_last_arrival) / static_cast<double>(c.frames_in);
  const double bound = std::max(0.05, 3 / std::sqrt(static_cast<double>(c.frames_in)));
  if (share <= bound) return "";
  return fmt::format(
      "saturated: when the last of the {} ingress frames arrived (cycle {}) {} "
      "({:.1f} %, more than {:.1f} %) were still waiting to be settled",
      c.frames_in, c.last_arrival, c.backlog_at_last_arrival, 100 * share, 100 * bound);
}

}  // namespace

void FillGatewayFigures(const Gateway& g, int64_t cycles, GatewayFigures* f) {
  const GatewayCounters& c = g.counters();
  f->present = true;
  f->frames_in = c.frames_in;
  f->frames_fcs_discarded = c.frames_fcs_discarded;
  f->frames_delivered = c.frames_delivered;
  f->frames_lost = c.frames_lost;
  f->frames_retransmitted = c.frames_retransmitted;
  f->frames_no_owner = c.frames_no_owner;
  f->frames_owner_faulty = c.frames_owner_faulty;
  f->broadcasts = c.broadcasts;
  f->egress_frames = c.egress_frames;
  f->egress_bytes = c.egress_bytes;
  f->egress_lost = c.egress_lost;
  f->table_updates_sent = c.table_updates_sent;
  f->avg_frame_latency_cycles = c.latency.Mean();
  f->p99_frame_latency_cycles = static_cast<double>(c.latency.Percentile(0.99));
  f->max_frame_latency_cycles = static_cast<double>(c.latency.Max());
  f->nic_frames = c.nic_frames;
  f->io_cpu_busy_cycles = c.cpu_busy;
  f->job_launches = c.job_launches;
  f->nic_commands_sent = c.nic_commands_sent;
  f->frames_dropped_disabled = c.frames_dropped_disabled;
  f->egress_dropped_disabled = c.egress_dropped_disabled;
  f->egress_updates_sent = c.egress_updates_sent;
  f->egress_retransmitted = c.egress_retransmitted;
  f->table_rows_cleared = c.table_rows_cleared;
  f->management_messages_lost = c.management_messages_lost;
  for (int64_t busy : c.cpu_busy) {
    f->max_io_cpu_load =
        std::max(f->max_io_cpu_load, static_cast<double>(busy) / std::max<int64_t>(1, cycles));
  }
}

Status OpenGatewayCaptures(const SimConfig& config, std::unique_ptr<FrameSource>* source,
                           std::unique_ptr<FrameSink>* sink) {
  const NicConfig& nc = config.nic;
  if (*source == nullptr && !nc.ingress_pcap.empty()) {
    Result<std::unique_ptr<FrameSource>> pcap =
        OpenPcapSource(nc.ingress_pcap, nc.pcap_cycles_per_second, nc.ingress_fcs);
    if (!pcap.ok()) return pcap.status();
    *source = std::move(*pcap);
  }
  // Under MPI every rank runs the gateway alike; rank 0 alone writes the capture.
  const bool writes = config.run.ranks == nullptr || config.run.ranks->writes_output();
  if (*sink == nullptr && !nc.egress_pcap.empty() && writes) {
    Result<std::unique_ptr<FrameSink>> pcap =
        OpenPcapSink(nc.egress_pcap, nc.pcap_cycles_per_second);
    if (!pcap.ok()) return pcap.status();
    *sink = std::move(*pcap);
  }
  return Status::Ok();
}

Result<PointResult> RunGatewayPoint(const SimConfig& config,
                                    const std::function<void(int64_t, int64_t)>& progress,
                                    std::unique_ptr<FrameSource> source,
                                    std::unique_ptr<FrameSink> sink) {
  const auto wall_start = std::chrono::steady_clock::now();
  UKAI_RETURN_IF_ERROR(OpenGatewayCaptures(config, &source, &sink));
  Result<std::unique_ptr<Gateway>> made =
      Gateway::Create(config, std::move(source), std::move(sink));
  if (!made.ok()) return made.status();
  Gateway& g = **made;
  Network& net = g.network();
  const MeasureConfig& mc = config.measure;
  InternalSample sample;
  bool capped = false;
  while (!g.Done()) {
    if (net.now() >= mc.max_cycles) {
      capped = true;
      break;
    }
    UKAI_RETURN_IF_ERROR(g.Step());
    if (net.Stalled(mc.watchdog_cycles)) return net.DeadlockStatus(mc.watchdog_cycles);
    for (const Delivery& d : net.deliveries()) {
      if (d.tag >= 0) continue;  // gateway messages are counted by the gateway
      sample.Add(d, config.traffic.message_bytes);
    }
    if (progress && (net.now() & 8191) == 0) progress(net.now(), g.counters().frames_delivered);
  }
  PointResult r;
  r.cycles = net.now();
  const double nodes = net.topology().NumNodes();
  const double cycles = static_cast<double>(std::max<int64_t>(1, r.cycles));
  r.offered_flits_per_node_cycle =
      config.nic.internal_traffic ? net.offered_flits_per_node_cycle() : 0.0;
  r.accepted_flits_per_node_cycle = static_cast<double>(sample.flits) / (nodes * cycles);
  r.clock_mhz = config.router.clock_mhz;
  if (r.clock_mhz <= 0) {
    Result<const RoutingEntry*> entry = FindRoutingAlgorithm(config.routing.algorithm);
    r.clock_mhz = entry.ok() ? (*entry)->default_clock_mhz : 0.0;
  }
  r.accepted_bytes_per_second =
      static_cast<double>(sample.bytes) / (nodes * cycles) * r.clock_mhz * 1e6;
  r.bandwidth_mbytes_per_second = r.accepted_bytes_per_second * nodes / 1e6;
  r.avg_latency_cycles = sample.latency.Mean();
  r.p50_latency_cycles = static_cast<double>(sample.latency.Percentile(0.5));
  r.p99_latency_cycles = static_cast<double>(sample.latency.Percentile(0.99));
  r.max_latency_cycles = static_cast<double>(sample.latency.Max());
  r.avg_network_latency_cycles = sample.network_latency.mean();
  r.avg_hops = sample.hops.mean();
  r.messages_measured = sample.latency.count();
  RoutingFaultFigures(net, {r.messages_measured, sample.recovered, sample.table, sample.misrouted},
                      &r);
  r.not_generated_messages = net.messages_not_generated();
  r.note = FrameSaturation(g, config, capped);
  r.saturated = !r.note.empty();
  NotePendingFaults(net, &r.note);
  r.partition_note = net.partition_note();
  FillGatewayFigures(g, r.cycles, &r.gateway);
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace ukai::sim
