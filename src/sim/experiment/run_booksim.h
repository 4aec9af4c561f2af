// BookSim2's measurement method (measure.mode = "booksim" for sim_type = latency,
// "booksim_throughput" for throughput) on a built network; RunPoint (run.h) calls it.
//
// Sample periods of measure.sample_cycles. The first measure.warmup_periods are warm-up
// (statistics cleared at every even period); then statistics are cleared once and every
// packet created from then on is measured. After each period: the run is unstable when the
// mean latency of the recorded packets, counting every flit still in flight (source queues
// included) at its age, exceeds measure.latency_threshold (latency mode); a period
// converges when the mean packet latency (latency mode) and the accepted flit rate changed
// by at most measure.stopping_threshold / measure.accepted_stopping_threshold from the
// period before. Three converged periods in a row end the measurement; measure.max_samples
// periods (warm-up included) without that make the run unstable. Then (latency mode) the
// network runs until every measured packet is delivered (checking the threshold every 1000
// cycles), traffic stops and the rest drains; "Time taken" is the cycle the network is empty.
// Rates divide the flits and packets counted from the measurement's start to the end by the
// cycles from the start to the drain's start, as BookSim2 does.
//
// Thread safety: one call per network.
#ifndef UKAI_SIM_EXPERIMENT_RUN_BOOKSIM_H_
#define UKAI_SIM_EXPERIMENT_RUN_BOOKSIM_H_

#include "core/status.h"
#include "sim/engine/network.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/run.h"

namespace ukai::sim {

// Runs `net` under BookSim2's method and fills r->booksim and the common figures of `r`
// (latencies, accepted and offered load, hops, cycles, saturated = unstable). Errors: a
// deadlock seen by the watchdog (kDeadlock).
Status RunBooksimMeasurement(Network& net, const ProgressFn& progress, PointResult* r);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_RUN_BOOKSIM_H_
