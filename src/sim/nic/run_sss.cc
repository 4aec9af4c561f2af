#include "sim/nic/run_sss.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "core/stats.h"
#include "sim/experiment/memory_budget.h"
#include "sim/nic/sss_nic.h"
#include "sim/nic/sss_traffic.h"

namespace ukai::sim {
namespace {

struct Measure {
  IntHistogram latency, multicast;
  int64_t first_start = std::numeric_limits<int64_t>::max();
  int64_t last_done = 0;
  int64_t measured_started = 0, measured_done = 0;
};

void Fill(const SimConfig& config, const SssMachine& m, const SssTraffic& traffic,
          const Measure& ms, PointResult* r) {
  const SssCounters& c = m.counters();
  SssFigures& f = r->sss;
  f.present = true;
  f.operations = ms.measured_done;
  f.payload_bytes = c.payload_bytes;
  f.wire_bytes = c.wire_bytes;
  f.link_efficiency = c.wire_bytes > 0
                          ? static_cast<double>(c.payload_bytes) / static_cast<double>(c.wire_bytes)
                          : 0;
  f.line_efficiency = f.link_efficiency * 0.8;  // 8 data bits per 10 line bits
  f.data_rate_mbps = m.clock_mhz() * 8 * config.router.flit_bytes;
  const double window_s = static_cast<double>(std::max<int64_t>(1, ms.last_done - ms.first_start)) /
                          (m.clock_mhz() * 1e6);
  f.packets_per_second =
      static_cast<double>(c.data_packets_delivered) / window_s / std::max(1, traffic.sending());
  f.upper_link_bytes = c.upper_link_bytes;
  f.upper_link_packets = c.upper_link_packets;
  f.upper_link_bytes_per_operation =
      ms.measured_done > 0 ? static_cast<double>(c.upper_link_bytes) / ms.measured_done : 0;
  f.multicast_completion_cycles = ms.multicast.Mean();
  f.multicast_completion_p99_cycles = static_cast<double>(ms.multicast.Percentile(0.99));
  f.acks_returned = c.acks_returned;
  f.ack_packets = c.ack_packets;
  f.packets_stored = const_cast<SssMachine&>(m).network().packets_stored();
  f.packets_dropped = c.packets_dropped;
  f.dma_bytes = c.dma_bytes;
  f.receive_ring_peak_bytes = c.receive_ring_peak_bytes;

  r->clock_mhz = m.clock_mhz();
  r->offered_flits_per_node_cycle = traffic.offered();
  const double nodes = m.topology().NumTerminals();
  const double window = static_cast<double>(std::max<int64_t>(1, ms.last_done - ms.first_start));
  r->accepted_flits_per_node_cycle =
      static_cast<double>(c.wire_bytes) / config.router.flit_bytes / (nodes * window);
  r->accepted_bytes_per_second =
      static_cast<double>(c.payload_bytes) / (nodes * window) * m.clock_mhz() * 1e6;
  r->bandwidth_mbytes_per_second = r->accepted_bytes_per_second * nodes / 1e6;
  r->avg_latency_cycles = ms.latency.Mean();
  r->p50_latency_cycles = static_cast<double>(ms.latency.Percentile(0.5));
  r->p99_latency_cycles = static_cast<double>(ms.latency.Percentile(0.99));
  r->max_latency_cycles = static_cast<double>(ms.latency.Max());
  r->messages_measured = ms.measured_done;
  if (c.measured_packets_delivered > 0) {  // per packet copy of the measured operations
    const double packets = static_cast<double>(c.measured_packets_delivered);
    r->avg_hops = static_cast<double>(c.measured_packet_hops) / packets;
    r->avg_network_latency_cycles = static_cast<double>(c.measured_packet_network_cycles) / packets;
  }
}

}  // namespace

Result<PointResult> RunSssPoint(const SimConfig& config,
                                const std::function<void(int64_t, int64_t)>& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  UKAI_RETURN_IF_ERROR(CheckMemory(config));
  Result<std::unique_ptr<SssMachine>> made = SssMachine::Create(config);
  if (!made.ok()) return made.status();
  SssMachine& m = **made;
  Result<std::unique_ptr<SssTraffic>> traffic_made = SssTraffic::Create(config, m);
  if (!traffic_made.ok()) return traffic_made.status();
  SssTraffic& traffic = **traffic_made;
  const MeasureConfig& mc = config.measure;
  const int64_t warm = mc.warmup_messages;
  int64_t end = warm + mc.measure_messages;
  const int64_t cap = config.sss.operations;
  if (cap > 0) end = std::min(end, cap);
  const int64_t bound = BacklogBound(config, traffic.sending());
  Network& net = m.network();
  Measure ms;
  std::vector<SssOp> due;
  int64_t started = 0, completed_total = 0;
  bool capped = false;
  std::string note;
  std::vector<uint8_t> is_measured;  // by op id (ids are 0, 1, ... in start order)
  for (;;) {
    if (net.now() >= mc.max_cycles) {
      capped = true;
      break;
    }
    due.clear();
    if (cap == 0 || started < cap) traffic.Due(net.now(), &due);
    for (const SssOp& op : due) {
      if (cap > 0 && started >= cap) break;
      const bool measured = started >= warm && started < end;
      SssOp spec = op;
      spec.measured = measured;
      Result<int64_t> id = m.Submit(spec);
      if (!id.ok()) return id.status();
      is_measured.push_back(measured ? 1 : 0);
      if (measured) {
        ++ms.measured_started;
        if (warm == 0) ms.first_start = std::min(ms.first_start, net.now());
      }
      ++started;
    }
    m.Step();
    for (const SssCompletion& done : m.completions()) {
      // The window for rates starts when the warm-up's worth of operations has completed
      // (as messages mode does with deliveries), else at the first measured start.
      if (++completed_total == warm) ms.first_start = done.completed;
      if (done.op >= static_cast<int64_t>(is_measured.size()) || !is_measured[done.op]) continue;
      ++ms.measured_done;
      ms.latency.Add(done.completed - done.started);
      ms.last_done = std::max(ms.last_done, done.completed);
      if (config.sss.multicast != MulticastKind::kNone) {
        ms.multicast.Add(done.completed - done.started);
      }
    }
    if (started >= end && ms.measured_done >= end - std::min(warm, end)) break;
    if (net.Stalled(mc.watchdog_cycles)) return net.DeadlockStatus(mc.watchdog_cycles);
    if (m.in_flight_operations() > bound) {
      note = fmt::format(
          "stopped at cycle {}: {} operations in flight, more than the bound of {}; the "
          "offered load is past saturation",
          net.now(), m.in_flight_operations(), bound);
      break;
    }
    if (m.Idle()) m.SkipTo(std::min(traffic.NextStart(net.now()), mc.max_cycles));
    if (progress && (net.now() & 8191) == 0) progress(net.now(), ms.measured_done);
  }
  PointResult r;
  r.cycles = net.now();
  Fill(config, m, traffic, ms, &r);
  if (m.counters().packets_dropped > 0) {
    return Status::Internal(fmt::format("SSS NIC model: {} packet(s) dropped (never expected)",
                                        m.counters().packets_dropped));
  }
  // Saturated: stopped at the backlog bound, or (unicast operations, whose offered load
  // counts the same packets) accepted below offered by more than max(5 %, 3 / sqrt(n)).
  const double shortfall =
      std::max(0.05, 3 / std::sqrt(static_cast<double>(std::max<int64_t>(1, ms.measured_done))));
  r.saturated =
      !note.empty() ||
      (config.sss.multicast == MulticastKind::kNone && ms.measured_done > 0 &&
       r.accepted_flits_per_node_cycle < (1 - shortfall) * r.offered_flits_per_node_cycle);
  if (capped) {
    note += (note.empty() ? "" : "; ") +
            fmt::format("measure.max_cycles = {} reached after {} of {} measured operations",
                        mc.max_cycles, ms.measured_done, end - std::min(warm, end));
  }
  if (ms.measured_done == 0) {
    note += (note.empty() ? "" : "; ") +
            std::string("no operation was measured, so there is no latency figure");
  }
  r.note = note;
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace ukai::sim
