// The config schema of the flit-level model (experiment/flit_model.h): every SimConfig field
// as a key with its type, unit, default (taken from SimConfig's own defaults), range and
// meaning, and the expansion of checked values into one SimConfig per point of a sweep.
// Files are read by the front door (experiment/front_door.h: LoadSimConfigs); `ukai sim
// describe` prints the schema (docs/config.md holds the same table).
//
// Sweeps: router.switching, traffic.multicast, traffic.acks, traffic.multicast_group_size,
// routing.algorithm, traffic.pattern, traffic.message_bytes, traffic.interval,
// traffic.rate and seed may each be a list. Every combination is run (the cross product),
// in SweepKeyOrder(): the first key varies slowest, the last fastest. For example
//   routing.algorithm = ["dor", "duato"], traffic.rate = [0.1, 0.2]
// gives (dor, 0.1), (dor, 0.2), (duato, 0.1), (duato, 0.2).
//
// Cross-key rules checked here (errors name the key and file position):
//   - network.k is one int (every dimension) or a list of exactly network.n ints;
//     when network.k is absent every dimension gets the default radix (10);
//   - the network has at most 2^26 nodes, fits the router state index
//     (Fabric::MaxRouters) and its estimated memory fits run.memory_limit
//     (experiment/memory_budget.h): all arithmetic, checked before any topology is built;
//     traffic.hotspot_nodes are node numbers < N;
//   - a list of traffic.rate needs traffic.injection = "bernoulli", a list of
//     traffic.interval needs "interval" (otherwise the points would be identical);
//   - a sweep has at most 100000 points.
// Then every point is checked with the simulator's own rules, without running it (engine
// limits, KaryNCube::Create, the routing registry's Supports(), MakePattern,
// MakeInjection), so that e.g. `duato` with too few VCs is reported before any point runs;
// each distinct problem is reported once, with the place of the key it names and the first
// point that has it.
//
// Adding a SimConfig field: one Binding row (spec, setter, default printer) in
// config_schema.cc, then regenerate the reference in docs/config.md
// (tools/update_reference_docs.py; tests/cli/config_docs_test.cc fails until it is there).
//
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_EXPERIMENT_CONFIG_SCHEMA_H_
#define UKAI_SIM_EXPERIMENT_CONFIG_SCHEMA_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/schema.h"
#include "core/status.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// Every key of a simulation config, in the order describe prints them.
config::Schema SimConfigSchema();

// The keys that may be lists giving one point per value, outermost (slowest) first.
std::span<const std::string_view> SweepKeyOrder();

// Turns checked values into SimConfigs (defaults for absent keys), expands sweeps and
// checks every point as described above.
Result<std::vector<SimConfig>> ExpandSimConfigs(const config::ConfigValues& values);

// The reference after the keys in `ukai sim describe`: the sweep order, the registered
// routing algorithms and traffic patterns. Plain text, or Markdown tables when `markdown`.
std::string DescribeSimLists(bool markdown);

// Config names of the enums ("torus", "vct", "interval", "cycles").
std::string_view TopologyName(TopologyKind t);
std::string_view SwitchingName(Switching s);
std::string_view FlowControlName(FlowControl f);
std::string_view InjectionName(InjectionKind i);
std::string_view MeasureModeName(MeasureMode m);
// The router options' names as in the config (docs/simulator.md, "Router options").
std::string_view HeaderUnitsName(HeaderUnits h);
std::string_view DorTieName(DorTieRule t);
std::string_view DorDatelineName(DorDateline d);
std::string_view DuatoAtomicName(DuatoAtomic a);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_SCHEMA_H_
