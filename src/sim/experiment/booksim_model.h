// The keys of BookSim2's timing model in the flit-level model's schema (config_schema.h adds
// them): router.model ("ukai" or "booksim"), the stage delays of BookSim2's iq router
// (router.routing_delay, ...), router.speculative, router.vc_allocator, and the parameters of
// BookSim2's measurement method (measure.mode = "booksim" / "booksim_throughput":
// measure.warmup_periods, measure.max_samples, measure.latency_threshold,
// measure.stopping_threshold, measure.accepted_stopping_threshold; the sample period is
// measure.sample_cycles). docs/booksim.md describes the model and how it was checked against
// BookSim2.
//
// Thread safety: free functions.
#ifndef UKAI_SIM_EXPERIMENT_BOOKSIM_MODEL_H_
#define UKAI_SIM_EXPERIMENT_BOOKSIM_MODEL_H_

#include <string_view>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// The keys (with their defaults from SimConfig).
std::vector<config::KeySpec> BooksimKeySpecs();

// Stores the keys present in `values` into `config`; with router.model = "booksim" sets
// router.hop_cycles to BooksimHopCycles() (the stage delays replace it).
void ReadBooksimModelConfig(const config::ConfigValues& values, SimConfig* config);

std::string_view RouterModelName(RouterModel m);
std::string_view VcAllocatorName(VcAllocator a);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_BOOKSIM_MODEL_H_
