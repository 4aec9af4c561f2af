// The config schema of a simulation point: every SimConfig field as a TOML key with its
// type, unit, default (taken from SimConfig's own defaults), range and meaning; reading a
// config file plus `--set key=value` overrides into one SimConfig per point of a sweep; and
// `ukai sim describe`, which prints the schema (it is the config reference; docs/config.md
// holds the same table).
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
// config_schema.cc, then regenerate the table in docs/config.md with
// `ukai sim describe --markdown` (tests/cli/config_docs_test.cc fails until the key is there).
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

// Reads `path`, applies `overrides` ("key=value", in order; a later one wins), checks
// everything and expands sweeps. Errors (kIoError, kParseError, kInvalidArgument) name
// the key and file:line:column or the --set argument.
Result<std::vector<SimConfig>> LoadSimConfigs(const std::string& path,
                                              const std::vector<std::string>& overrides);

// Same from TOML text; `source_name` stands for the file name in messages.
Result<std::vector<SimConfig>> LoadSimConfigsFromString(std::string_view text,
                                                        const std::string& source_name,
                                                        const std::vector<std::string>& overrides);

// Turns checked values into SimConfigs (defaults for absent keys), expands sweeps and
// checks every point as described above.
Result<std::vector<SimConfig>> ExpandSimConfigs(const config::ConfigValues& values);

// The reference printed by `ukai sim describe`: every key with type, unit, default, range
// and meaning, then the sweep order and the registered routing algorithms and traffic
// patterns. Plain text, or Markdown tables when `markdown`.
std::string DescribeSimConfig(bool markdown);

// Config names of the enums ("torus", "vct", "interval", "cycles").
std::string_view TopologyName(TopologyKind t);
std::string_view SwitchingName(Switching s);
std::string_view InjectionName(InjectionKind i);
std::string_view MeasureModeName(MeasureMode m);
// The router options' names as in the config (docs/simulator.md, "Router options").
std::string_view HeaderUnitsName(HeaderUnits h);
std::string_view DorTieName(DorTieRule t);
std::string_view DorDatelineName(DorDateline d);
std::string_view DuatoAtomicName(DuatoAtomic a);
std::string_view DetourPolicyName(DetourPolicy d);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_SCHEMA_H_
