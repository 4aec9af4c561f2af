// Running a trace workload point (workload.kind = "netrace" | "otf2"; docs/workloads.md):
// the network of the config, the workload layer (workload/workload.h) as its message
// source, and the trace's source from the table of trace kinds. The run lasts until every
// message of the trace has been delivered (or lost), until nothing can happen any more
// (messages wait for lost ones), or until measure.max_cycles if the config sets it (a
// finite trace always ends, so by default the replay runs to its end); the deadlock watchdog
// (measure.watchdog_cycles) applies as in a synthetic run.
//
// Figures: the PointResult's usual fields over the trace's packets (latency from a
// packet's creation to its tail's delivery, hops, accepted throughput over the run), and
// WorkloadFigures (experiment/point_result.h) from the workload layer and the trace's
// source. A corrupt or truncated trace ends the point with the reader's error (it names
// the file and the packet); kinds of events the reader does not model are counted.
//
// Thread safety: free functions; each call owns its whole simulation.
#ifndef UKAI_SIM_WORKLOAD_RUN_WORKLOAD_H_
#define UKAI_SIM_WORKLOAD_RUN_WORKLOAD_H_

#include <memory>

#include "core/status.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/run.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"
#include "sim/workload/trace_source.h"
#include "sim/workload/workload.h"

namespace ukai::sim {

// Opens the trace of `config` for `topology` (header, definitions, node and rank maps)
// without running it: the config check of every point.
Status CheckWorkload(const SimConfig& config, const Topology& topology);

// Opens the trace source of `config.workload.kind` (kNotFound for "synthetic").
Result<std::unique_ptr<TraceSource>> OpenTraceSource(const SimConfig& config,
                                                     const Topology& topology, double clock_mhz);

// The layer's options for `config`: flit size, and the largest packet (workload.packet_bytes,
// at most 32767 flits, at most one VC buffer with virtual cut-through).
WorkloadOptions WorkloadOptionsFor(const SimConfig& config);
// The same with packets of at most `packet_bytes` (the sim module's sim.packet_bytes).
WorkloadOptions WorkloadOptionsFor(const SimConfig& config, int64_t packet_bytes);

// The clock of `config`: router.clock_mhz, else the routing algorithm's default (0: none).
double ClockMhz(const SimConfig& config);

// The PointResult's usual fields over the workload's packets (latency from a packet's
// creation to its tail's delivery, hops, accepted throughput over the run so far).
void NetworkFigures(const Network& net, const Workload& w, double clock, PointResult* r);

// Runs one trace workload point.
Result<PointResult> RunWorkloadPoint(const SimConfig& config, const ProgressFn& progress);

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_RUN_WORKLOAD_H_
