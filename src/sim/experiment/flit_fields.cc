#include "sim/experiment/flit_fields.h"

#include <algorithm>
#include <span>
#include <string>

#include "sim/experiment/config_schema.h"

namespace ukai::sim {
namespace {

// What a field reads: the point's number, config and figures.
struct PointContext {
  size_t index;
  const SimConfig* config;
  const PointResult* result;
};

using output::Field;
using F = output::FieldOf<PointContext>;
using P = const PointContext&;

// A latency or hop figure of measured messages: no value when none was measured (not 0).
Field Measured(P p, double value) {
  if (p.result->messages_measured == 0) return output::kNoValue;
  return value;
}
bool IsGroup(P p) { return p.config->network.topology == TopologyKind::kGroup; }
bool HasGateway(P p) { return p.result->gateway.present; }
Field Text(std::string_view s) { return std::string(s); }
const GatewayFigures& Gw(P p) { return p.result->gateway; }

constexpr size_t kNum = 9;  // doubles print with 5 significant digits: at most 9 characters
constexpr std::string_view kIfGroup = "with network.topology = \"group\"";
constexpr std::string_view kIfNic = "when the gateway model runs (nic.*; docs/gateway.md)";

constexpr F kConfigFields[] = {
    {{"point", "", "0-based index of the point in sweep order"},
     [](P p) -> Field { return static_cast<int64_t>(p.index); }},
    {{"topology", "", "network.topology"},
     [](P p) -> Field { return Text(TopologyName(p.config->network.topology)); }},
    {{"k", "nodes",
      "network.k, one radix per dimension (`10x10` in the table and CSV, a list in JSON); no "
      "value with the group topology"},
     [](P p) -> Field {
       if (IsGroup(p)) return output::kNoValue;
       const std::vector<int>& k = p.config->network.k;
       return std::vector<int64_t>(k.begin(), k.end());
     }},
    {{"n", "", "network.n; no value with the group topology"},
     [](P p) -> Field {
       if (IsGroup(p)) return output::kNoValue;
       return int64_t{p.config->network.n};
     }},
    {{"groups", "", "network.groups", "", 0, kIfGroup},
     [](P p) -> Field { return int64_t{p.config->network.groups}; },
     &IsGroup},
    {{"group_size", "nodes", "network.group_size", "", 0, kIfGroup},
     [](P p) -> Field { return int64_t{p.config->network.group_size}; },
     &IsGroup},
    {{"routing", "", "routing.algorithm", "routing"},
     [](P p) -> Field { return p.config->routing.algorithm; }},
    {{"pattern", "", "traffic.pattern", "pattern"},
     [](P p) -> Field { return p.config->traffic.pattern; }},
    {{"message_bytes", "bytes", "traffic.message_bytes", "bytes"},
     [](P p) -> Field { return int64_t{p.config->traffic.message_bytes}; }},
    {{"injection", "", "traffic.injection"},
     [](P p) -> Field { return Text(InjectionName(p.config->traffic.injection)); }},
    {{"rate", "flits/node/cycle",
      "traffic.rate (used by bernoulli injection; the table shows it when the first point "
      "uses bernoulli)",
      "rate"},
     [](P p) -> Field { return p.config->traffic.rate; }},
    {{"interval", "cycles",
      "traffic.interval (used by interval injection; the table shows it when the first point "
      "uses interval)",
      "interval"},
     [](P p) -> Field { return p.config->traffic.interval; }},
    {{"seed", "", "seed"}, [](P p) -> Field { return static_cast<int64_t>(p.config->seed); }},
    {{"vcs", "", "router.vcs"}, [](P p) -> Field { return int64_t{p.config->router.vcs}; }},
    {{"vc_buffer_flits", "flits", "router.vc_buffer_flits"},
     [](P p) -> Field { return int64_t{p.config->router.vc_buffer_flits}; }},
    {{"pe_vcs", "", "router.pe_vcs"},
     [](P p) -> Field { return int64_t{p.config->router.pe_vcs}; }},
    {{"switching", "", "router.switching"},
     [](P p) -> Field { return Text(SwitchingName(p.config->router.switching)); }},
    {{"hop_cycles", "cycles", "router.hop_cycles"},
     [](P p) -> Field { return int64_t{p.config->router.hop_cycles}; }},
    {{"link_cycles", "cycles", "router.link_cycles"},
     [](P p) -> Field { return int64_t{p.config->router.link_cycles}; }},
    {{"table_lookup_cycles", "cycles", "router.table_lookup_cycles"},
     [](P p) -> Field { return int64_t{p.config->router.table_lookup_cycles}; }},
    {{"flit_bytes", "bytes", "router.flit_bytes"},
     [](P p) -> Field { return int64_t{p.config->router.flit_bytes}; }},
    {{"measure_mode", "", "measure.mode"},
     [](P p) -> Field { return Text(MeasureModeName(p.config->measure.mode)); }},
};

constexpr F kFigureFields[] = {
    {{"clock_mhz", "MHz",
      "clock used to convert cycles to time (the algorithm's when router.clock_mhz = 0)"},
     [](P p) -> Field { return p.result->clock_mhz; }},
    {{"offered_flits_per_node_cycle", "flits/node/cycle",
      "offered load (idle nodes of a permutation count as offering 0)", "offered", kNum},
     [](P p) -> Field { return p.result->offered_flits_per_node_cycle; }},
    {{"accepted_flits_per_node_cycle", "flits/node/cycle",
      "delivered flits of measured messages per node per cycle", "accepted", kNum},
     [](P p) -> Field { return p.result->accepted_flits_per_node_cycle; }},
    {{"accepted_bytes_per_second", "bytes/s",
      "the accepted load in bytes per second per node at clock_mhz"},
     [](P p) -> Field { return p.result->accepted_bytes_per_second; }},
    {{"avg_latency_cycles", "cycles",
      "mean message latency: creation (including the wait in the source queue) to tail "
      "delivery; no value when no message was measured (note says why)",
      "latency", kNum},
     [](P p) -> Field { return Measured(p, p.result->avg_latency_cycles); }},
    {{"p50_latency_cycles", "cycles", "median message latency; no value when none was measured"},
     [](P p) -> Field { return Measured(p, p.result->p50_latency_cycles); }},
    {{"p99_latency_cycles", "cycles",
      "99th-percentile message latency; no value when none was measured", "p99"},
     [](P p) -> Field { return Measured(p, p.result->p99_latency_cycles); }},
    {{"max_latency_cycles", "cycles", "largest message latency; no value when none was measured"},
     [](P p) -> Field { return Measured(p, p.result->max_latency_cycles); }},
    {{"avg_network_latency_cycles", "cycles",
      "mean network latency: head injection into the network to tail delivery; no value when "
      "none was measured",
      "net_lat", kNum},
     [](P p) -> Field { return Measured(p, p.result->avg_network_latency_cycles); }},
    {{"avg_hops", "hops",
      "router-to-router channels traversed per measured message; no value when none was "
      "measured",
      "hops"},
     [](P p) -> Field { return Measured(p, p.result->avg_hops); }},
    {{"messages_measured", "messages", "messages in the measurement", "messages"},
     [](P p) -> Field { return p.result->messages_measured; }},
    {{"cycles", "cycles", "simulated cycles of the whole point (at most measure.max_cycles)",
      "cycles", 8},
     [](P p) -> Field { return p.result->cycles; }},
    {{"latency_trend", "",
      "mean latency of the later half of the measurement over the earlier half, minus 1 (0.3 = "
      "30 % higher): a growing latency means queues that grow (docs/simulator.md)"},
     [](P p) -> Field { return p.result->latency_trend; }},
    {{"saturated", "",
      "the verdict that the network does not keep up with the offered load: accepted clearly "
      "below offered, a growing latency well above zero-load, growing source queues, or the "
      "backlog bound (docs/simulator.md, \"Saturation rule\"); reaching measure.max_cycles alone "
      "is not saturation",
      "saturated"},
     [](P p) -> Field { return p.result->saturated; }},
    {{"wall_seconds", "s",
      "wall-clock time of the point (the only field that differs between two runs with the "
      "same seed)",
      "wall_s", kNum},
     [](P p) -> Field { return p.result->wall_seconds; }},
    {{"bandwidth_mbytes_per_second", "MB/s",
      "network-wide delivered payload of measured messages in 10^6 bytes per second at "
      "clock_mhz (the Detour-UD paper's bandwidth: accepted_bytes_per_second x nodes / 10^6)",
      "MB/s", kNum},
     [](P p) -> Field { return p.result->bandwidth_mbytes_per_second; }},
};

constexpr F kFaultFields[] = {
    {{"recovered_messages", "messages",
      "measured messages that entered deadlock recovery (detour-ud)"},
     [](P p) -> Field { return p.result->recovered_messages; }},
    {{"recovery_ratio", "", "recovered_messages / messages_measured", "recovery", kNum},
     [](P p) -> Field { return p.result->recovery_ratio; }},
    {{"table_messages", "messages",
      "measured messages that used a fault-region routing table (detour-ud's torus table)"},
     [](P p) -> Field { return p.result->table_messages; }},
    {{"table_ratio", "", "table_messages / messages_measured"},
     [](P p) -> Field { return p.result->table_ratio; }},
    {{"misrouted_hops", "hops",
      "hops of measured messages that did not lower the fault-free minimal distance to the "
      "destination (detours, 180-degree turns, non-minimal up*/down* hops; counted by updown, "
      "detour-ud and detour-nf on k-ary n-cubes)"},
     [](P p) -> Field { return p.result->misrouted_hops; }},
    {{"avg_misrouted_hops", "hops", "misrouted_hops per measured message"},
     [](P p) -> Field { return p.result->avg_misrouted_hops; }},
    {{"undeliverable_messages", "messages",
      "messages of the whole run that became undeliverable (queued at a node that failed, drained "
      "by a router "
      "with no live route, destination failed)"},
     [](P p) -> Field { return p.result->undeliverable_messages; }},
    {{"not_generated_messages", "messages",
      "messages of the whole run not created because their source or destination was faulty"},
     [](P p) -> Field { return p.result->not_generated_messages; }},
    {{"retransmitted_messages", "messages",
      "messages of the whole run resent from their source after a reconfiguration discarded them"},
     [](P p) -> Field { return p.result->retransmitted_messages; }},
    {{"discarded_messages", "messages",
      "messages of the whole run discarded by reconfigurations (reconfig.discard)"},
     [](P p) -> Field { return p.result->discarded_messages; }},
    {{"reconfigurations", "", "reconfigurations completed in the run"},
     [](P p) -> Field { return p.result->reconfigurations; }},
    {{"reconfiguration_cycles", "cycles",
      "summed duration of the reconfigurations (fault to the last node's restart)"},
     [](P p) -> Field { return p.result->reconfiguration_cycles; }},
    {{"reconfiguration_regions", "",
      "fault regions handled by the reconfigurations (docs/simulator.md, \"Reconfiguration\")"},
     [](P p) -> Field { return p.result->reconfiguration_regions; }},
    {{"cancelled_root_candidates", "",
      "root candidates whose reconfiguration was cancelled because a higher-priority root won"},
     [](P p) -> Field { return p.result->cancelled_root_candidates; }},
};

// The router options of the point (docs/simulator.md, "Router options"), then the note.
constexpr F kOptionFields[] = {
    {{"eject_flits", "flits/cycle", "router.eject_flits"},
     [](P p) -> Field { return int64_t{p.config->router.eject_flits}; }},
    {{"switch_bubble_cycles", "cycles", "router.switch_bubble_cycles"},
     [](P p) -> Field { return int64_t{p.config->router.switch_bubble_cycles}; }},
    {{"header_units", "", "router.header_units"},
     [](P p) -> Field { return Text(HeaderUnitsName(p.config->router.header_units)); }},
    {{"table_read_ports", "", "router.table_read_ports"},
     [](P p) -> Field { return int64_t{p.config->router.table_read_ports}; }},
    {{"source_queue", "messages", "traffic.source_queue"},
     [](P p) -> Field { return int64_t{p.config->traffic.source_queue}; }},
    {{"dor_tie", "", "routing.dor_tie"},
     [](P p) -> Field { return Text(DorTieName(p.config->routing.dor_tie)); }},
    {{"dor_dateline", "", "routing.dor_dateline"},
     [](P p) -> Field { return Text(DorDatelineName(p.config->routing.dor_dateline)); }},
    {{"duato_atomic", "", "routing.duato_atomic"},
     [](P p) -> Field { return Text(DuatoAtomicName(p.config->routing.duato_atomic)); }},
    {{"note", "",
      "empty, or why the point stopped before its measurement completed (e.g. the backlog "
      "bound of docs/simulator.md, \"Overload and memory\")",
      "note"},
     [](P p) -> Field { return p.result->note; }},
};

// The gateway model's figures (docs/gateway.md).
constexpr F kGatewayFields[] = {
    {{"nic_detours", "", "nic.detours", "", 0, kIfNic},
     [](P p) -> Field { return Text(DetourPolicyName(p.config->nic.detours)); },
     &HasGateway},
    {{"frames_in", "frames", "ingress frames that reached the external switch (first tries)",
      "frames_in", 0, kIfNic},
     [](P p) -> Field { return Gw(p).frames_in; },
     &HasGateway},
    {{"frames_fcs_discarded", "frames", "ingress frames discarded for a bad FCS (S33)", "fcs_bad",
      0, kIfNic},
     [](P p) -> Field { return Gw(p).frames_fcs_discarded; },
     &HasGateway},
    {{"frames_delivered", "frames", "ingress frames kept by their owner node", "delivered", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).frames_delivered; },
     &HasGateway},
    {{"frames_lost", "frames", "good frames whose owner is healthy and never got them", "lost", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).frames_lost; },
     &HasGateway},
    {{"frames_retransmitted", "frames", "ingress re-sends after a loss (nic.retransmit)", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).frames_retransmitted; },
     &HasGateway},
    {{"frames_no_owner", "frames", "ingress frames whose destination MAC is no compute node's", "",
      0, kIfNic},
     [](P p) -> Field { return Gw(p).frames_no_owner; },
     &HasGateway},
    {{"frames_owner_faulty", "frames", "ingress frames whose owner node is faulty", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).frames_owner_faulty; },
     &HasGateway},
    {{"broadcasts", "frames", "broadcast frames (S37)", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).broadcasts; },
     &HasGateway},
    {{"egress_frames", "frames", "egress frames sent to the outside through the NICs", "egress", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).egress_frames; },
     &HasGateway},
    {{"egress_bytes", "bytes", "bytes of those egress frames", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).egress_bytes; },
     &HasGateway},
    {{"egress_lost", "frames", "egress frames lost (after the last try with nic.retransmit)",
      "egr_lost", 0, kIfNic},
     [](P p) -> Field { return Gw(p).egress_lost; },
     &HasGateway},
    {{"table_updates_sent", "messages", "address-table updates sent to the NICs", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).table_updates_sent; },
     &HasGateway},
    {{"avg_frame_latency_cycles", "cycles",
      "mean ingress frame latency: switch arrival to being kept by the owner", "frame_lat", 9,
      kIfNic},
     [](P p) -> Field { return Gw(p).avg_frame_latency_cycles; },
     &HasGateway},
    {{"p99_frame_latency_cycles", "cycles", "99th-percentile ingress frame latency", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).p99_frame_latency_cycles; },
     &HasGateway},
    {{"max_frame_latency_cycles", "cycles", "largest ingress frame latency", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).max_frame_latency_cycles; },
     &HasGateway},
    {{"nic_frames", "frames",
      "per NIC the run uses (nic.enabled, then those nic.jobs adds): frames in + out", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).nic_frames; },
     &HasGateway},
    {{"io_cpu_busy_cycles", "cycles",
      "per NIC: the I/O CPU's busy cycles (the Fig. 1 baseline, nic.cpu_cycles_per_frame)", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).io_cpu_busy_cycles; },
     &HasGateway},
    {{"max_io_cpu_load", "", "the busiest I/O CPU's busy share of the run", "cpu_load", 9, kIfNic},
     [](P p) -> Field { return Gw(p).max_io_cpu_load; },
     &HasGateway},
    {{"job_launches", "", "nic.jobs launches applied by the management node", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).job_launches; },
     &HasGateway},
    {{"nic_commands_sent", "messages", "enable/disable commands the management node sent to NICs",
      "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).nic_commands_sent; },
     &HasGateway},
    {{"frames_dropped_disabled", "frames",
      "ingress frames at a NIC when it went down, or with no NIC up (then retransmitted or lost)",
      "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).frames_dropped_disabled; },
     &HasGateway},
    {{"egress_dropped_disabled", "frames", "egress packets that reached a disabled NIC", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).egress_dropped_disabled; },
     &HasGateway},
    {{"egress_updates_sent", "messages", "assignments (I/O node, detours) sent to compute nodes",
      "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).egress_updates_sent; },
     &HasGateway},
    {{"egress_retransmitted", "frames", "egress re-sends after a loss (nic.retransmit)", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).egress_retransmitted; },
     &HasGateway},
    {{"table_rows_cleared", "", "address-table rows whose detour a repair made unneeded", "", 0,
      kIfNic},
     [](P p) -> Field { return Gw(p).table_rows_cleared; },
     &HasGateway},
    {{"management_messages_lost", "messages",
      "management commands that were undeliverable (re-sent on the next event)", "", 0, kIfNic},
     [](P p) -> Field { return Gw(p).management_messages_lost; },
     &HasGateway},
};

// Every part, in record order.
constexpr std::span<const F> kParts[] = {kConfigFields, kFigureFields, kFaultFields, kOptionFields,
                                         kGatewayFields};

}  // namespace

std::vector<output::FieldSpec> FlitFields() {
  std::vector<output::FieldSpec> out;
  for (std::span<const F> part : kParts) {
    for (output::FieldSpec& s : output::SpecsOf(part)) out.push_back(s);
  }
  return out;
}

output::Record PointRecord(size_t index, const SimConfig& config, const PointResult& result) {
  const PointContext context{index, &config, &result};
  output::Record rec;
  for (std::span<const F> part : kParts) output::AppendFields(part, context, &rec);
  return rec;
}

std::vector<output::TableColumn> FlitTableColumns(const std::vector<SimConfig>& points) {
  size_t routing = 0, pattern = 0;
  for (const SimConfig& p : points) {
    routing = std::max(routing, p.routing.algorithm.size());
    pattern = std::max(pattern, p.traffic.pattern.size());
  }
  const bool bernoulli =
      points.empty() || points.front().traffic.injection == InjectionKind::kBernoulli;
  const bool gateway =
      std::any_of(points.begin(), points.end(), [](const SimConfig& p) { return p.nic.active(); });
  std::vector<output::FieldSpec> fields = FlitFields();
  // The gateway model's columns only in a sweep where it runs.
  std::erase_if(fields, [&](const output::FieldSpec& f) { return !gateway && f.when == kIfNic; });
  std::vector<output::TableColumn> columns;
  for (output::TableColumn& c : output::TableColumnsOf(fields)) {
    if (c.field == (bernoulli ? "interval" : "rate")) continue;
    if (c.field == "routing") c.min_width = std::max(c.min_width, routing);
    if (c.field == "pattern") c.min_width = std::max(c.min_width, pattern);
    columns.push_back(std::move(c));
  }
  // The note, whose text varies most, last.
  std::stable_partition(columns.begin(), columns.end(),
                        [](const output::TableColumn& c) { return c.field != "note"; });
  return columns;
}

}  // namespace ukai::sim
