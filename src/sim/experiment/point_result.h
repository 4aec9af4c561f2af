// PointResult: the measured figures of one simulation point, as printed by
// `ukai sim run --format table|csv|json` (the JSON field names are in comments).
//
// Latency definitions: message latency runs from the message's creation (it waits in the
// source queue) to delivery of its tail flit; network latency from injection of
// its head flit into the router to delivery of its tail flit. Hops count router-to-router
// channels traversed. Throughput counts delivered flits of measured messages.
#ifndef UKAI_SIM_EXPERIMENT_POINT_RESULT_H_
#define UKAI_SIM_EXPERIMENT_POINT_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

// The gateway model's figures (docs/gateway.md), present when nic.* traffic runs. Frame
// latency runs from a frame's arrival at the external switch to its owner keeping it.
struct GatewayFigures {
  bool present = false;
  int64_t frames_in = 0, frames_fcs_discarded = 0, frames_delivered = 0, frames_lost = 0;
  int64_t frames_retransmitted = 0, frames_no_owner = 0, frames_owner_faulty = 0;
  int64_t broadcasts = 0, egress_frames = 0, egress_bytes = 0, egress_lost = 0;
  int64_t table_updates_sent = 0;
  double avg_frame_latency_cycles = 0, p99_frame_latency_cycles = 0;
  double max_frame_latency_cycles = 0;
  std::vector<int64_t> nic_frames;          // per NIC (nic.enabled, then nic.jobs): in + out
  std::vector<int64_t> io_cpu_busy_cycles;  // per NIC: the I/O CPU's work (Fig. 1)
  double max_io_cpu_load = 0;               // the busiest I/O CPU's busy share of the run
  // The management node at run time (nic/management.cc; gateway.h: GatewayCounters).
  int64_t job_launches = 0, nic_commands_sent = 0, frames_dropped_disabled = 0;
  int64_t egress_dropped_disabled = 0, egress_updates_sent = 0, egress_retransmitted = 0;
  int64_t table_rows_cleared = 0, management_messages_lost = 0;
};

// BookSim2's statistics (measure.mode = booksim, booksim_throughput; docs/booksim.md), as
// its overall summary prints them: for each statistic its average, minimum and maximum.
// Latencies are over measured packets (flit latency over their flits), in cycles; rates are
// per node and cycle over the measurement (average over nodes, and the least and most of
// any node).
struct BooksimFigures {
  enum Stat {
    kPacketLatency,
    kNetworkLatency,
    kFlitLatency,
    kFragmentation,
    kInjectedPacketRate,
    kAcceptedPacketRate,
    kInjectedFlitRate,
    kAcceptedFlitRate,
    kStats
  };
  enum Part { kAvg, kMin, kMax };
  bool present = false;
  bool unstable = false;  // BookSim2's "Simulation unstable, ending ..."
  double stat[kStats][3] = {};
  double hops = 0;  // router-to-router channels per measured packet
  std::string log;  // BookSim2's progress lines that say how the run ended
};

// The SSS-CORE NIC model's figures (docs/sss.md), present when traffic.operation is write
// or read. Counts are over the measured operations' packets unless said otherwise; rates
// over the window from the end of the warm-up (its last completion) to the last measured
// completion.
struct SssFigures {
  bool present = false;
  int64_t operations = 0;          // measured operations completed
  int64_t payload_bytes = 0;       // payload of their packets
  int64_t wire_bytes = 0;          // bytes those packets put on the wire
  double link_efficiency = 0;      // payload_bytes / wire_bytes
  double line_efficiency = 0;      // the same against the line bits (8b/10b: x 0.8)
  double data_rate_mbps = 0;       // link data rate after the line code, 10^6 b/s
  double packets_per_second = 0;   // data packets into memory per second per sending NIC
  int64_t upper_link_bytes = 0;    // bytes over channels between two switches
  int64_t upper_link_packets = 0;  // packets over them (per channel crossed)
  double upper_link_bytes_per_operation = 0;
  double multicast_completion_cycles = 0;      // mean, multicasts
  double multicast_completion_p99_cycles = 0;  // multicasts
  int64_t acks_returned = 0;                   // acks that reached the initiators
  int64_t ack_packets = 0;                     // ack packets sent (combining steps included)
  int64_t packets_stored = 0;                  // whole run: store-and-forward fallbacks in switches
  int64_t packets_dropped = 0;                 // whole run: packets lost (checked to be 0)
  int64_t dma_bytes = 0;                       // whole run: bytes the NICs' buses moved
  int64_t receive_ring_peak_bytes = 0;         // whole run: the fullest receive ring
};

// A trace workload's figures (workload.kind = "netrace" | "otf2"; docs/workloads.md),
// present when a trace drove the network. Cycles are router cycles; times are
// microseconds at PointResult::clock_mhz.
struct WorkloadFigures {
  bool present = false;
  std::string kind;                       // workload: "netrace" | "otf2"
  int64_t messages = 0;                   // workload_messages: trace messages delivered
  int64_t lost_messages = 0;              // workload_lost_messages: undeliverable (faults)
  int64_t blocked_messages = 0;           // workload_blocked_messages: never started (waited for a
                                          // lost message, or the run stopped first)
  double avg_message_latency_cycles = 0;  // avg_message_latency_cycles: creation to delivery
  double p99_message_latency_cycles = 0;  // p99_message_latency_cycles
  // netrace.
  int64_t trace_packets = 0;         // trace_packets: packets read (each delivered exactly once)
  int64_t trace_cycles = 0;          // trace_cycles: span of the replayed packets, network cycles
  int64_t runtime_cycles = 0;        // runtime_cycles: cycle of the last delivery
  double slowdown = 0;               // slowdown = runtime_cycles / trace_cycles
  int64_t missing_dependencies = 0;  // trace_missing_dependencies: ids never seen
  std::string latency_by_type;       // latency_by_type: JSON object, per packet type
  // OTF2.
  int64_t ranks = 0;                          // ranks
  double program_time_us = 0;                 // program_time_us: end of the last rank
  std::vector<double> rank_finish_us;         // rank_finish_us: per rank
  std::vector<double> rank_communication_us;  // rank_communication_us: per rank, not compute
  double communication_time_us = 0;           // communication_time_us: mean over ranks
  int64_t replayed_messages = 0;              // replayed_messages: what the network carried
  int64_t replayed_bytes = 0;                 // replayed_bytes
  int64_t p2p_messages = 0;                   // p2p_messages: sends replayed
  int64_t collectives = 0;                    // collectives: operations replayed
  int64_t rma_operations = 0;                 // rma_operations: puts, gets, atomics
  std::string unmodelled_events;              // unmodelled_events: JSON object, name -> count
};

struct PointResult {
  double offered_flits_per_node_cycle = 0;   // offered_flits_per_node_cycle
  double accepted_flits_per_node_cycle = 0;  // accepted_flits_per_node_cycle
  double accepted_bytes_per_second = 0;      // accepted_bytes_per_second (per node)
  double clock_mhz = 0;                      // clock_mhz actually used
  double avg_latency_cycles = 0;             // avg_latency_cycles
  double p50_latency_cycles = 0;             // p50_latency_cycles
  double p99_latency_cycles = 0;             // p99_latency_cycles
  double max_latency_cycles = 0;             // max_latency_cycles
  double avg_network_latency_cycles = 0;     // avg_network_latency_cycles
  double avg_hops = 0;                       // avg_hops
  int64_t messages_measured = 0;             // messages_measured
  int64_t cycles = 0;                        // cycles (simulated, total)
  double wall_seconds = 0;                   // wall_seconds

  // Fault tolerance and deadlock recovery (routing/route_state.h). Ratios and hop counts
  // are over the measured messages; the message counts marked "run" over the whole run.
  double bandwidth_mbytes_per_second = 0;  // bandwidth_mbytes_per_second: network-wide
                                           // delivered payload, 10^6 bytes/s at clock_mhz
  int64_t recovered_messages = 0;          // recovered_messages: entered deadlock recovery
  double recovery_ratio = 0;               // recovery_ratio = recovered / measured
  int64_t table_messages = 0;              // table_messages: used a fault-region table
  double table_ratio = 0;                  // table_ratio = table_messages / measured
  int64_t misrouted_hops = 0;              // misrouted_hops: non-minimal hops (fault-free
                                           // distance not lowered), summed
  double avg_misrouted_hops = 0;           // avg_misrouted_hops per measured message
  int64_t undeliverable_messages = 0;      // undeliverable_messages (run)
  int64_t not_generated_messages = 0;      // not_generated_messages (run): faulty end node
  int64_t retransmitted_messages = 0;      // retransmitted_messages (run)
  int64_t discarded_messages = 0;          // discarded_messages (run): by reconfigurations
  int64_t reconfigurations = 0;            // reconfigurations (run): completed
  int64_t reconfiguration_cycles = 0;      // reconfiguration_cycles (run): their durations
  int64_t reconfiguration_regions = 0;     // reconfiguration_regions (run): fault regions
  int64_t cancelled_root_candidates = 0;   // cancelled_root_candidates (run): roots that lost

  // latency_trend: mean latency of the later half of the measurement relative to the
  // earlier half, minus 1 (0.3 = 30 % higher); 0 when a half is empty.
  double latency_trend = 0;
  bool saturated = false;  // saturated (the rule of docs/simulator.md, "Saturation")
  // Not a result field (results are identical however the point ran): how the engine
  // split the network when it used fewer partitions than asked (engine/partition.h), for
  // the program to say on stderr; empty otherwise.
  std::string partition_note;
  // note: why the point stopped before its measurement completed (e.g. the source-queue
  // backlog bound of experiment/memory_budget.h), or why a figure is missing; "" otherwise.
  std::string note;
  GatewayFigures gateway;    // nic.*: frames_in, frames_delivered, ...
  BooksimFigures booksim;    // measure.mode = booksim*: packet_latency_avg, ...
  SssFigures sss;            // traffic.operation = write / read: payload_bytes, wire_bytes, ...
  WorkloadFigures workload;  // workload.*: trace_packets, program_time_us, ...
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_POINT_RESULT_H_
