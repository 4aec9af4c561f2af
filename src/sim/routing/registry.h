// The routing registry: an explicit table of the routing algorithms `ukai sim` knows, each
// with its factory, parameter schema (for `ukai sim describe`), a Supports() check of the
// topology and router configuration, and its default clock (the synthesized router clock
// of the spec's Table 1, used to turn cycles into seconds when router.clock_mhz is 0).
//
// Adding an algorithm = one file pair under routing/ plus one row in registry.cc.
// Thread safety: the table is immutable.
#ifndef UKAI_SIM_ROUTING_REGISTRY_H_
#define UKAI_SIM_ROUTING_REGISTRY_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/routing/routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// One parameter of an algorithm (name under [routing], type "int"/"float"/"bool"/"string",
// default as text, one-line doc).
struct ParamSpec {
  std::string_view name;
  std::string_view type;
  std::string_view default_value;
  std::string_view doc;
};

struct RoutingEntry {
  std::string_view name;
  std::string_view doc;
  std::span<const ParamSpec> params;
  double default_clock_mhz;
  // OK, or kInvalidArgument naming the config keys that make the combination impossible.
  Status (*supports)(const Topology& topology, const SimConfig& config);
  // Builds the routing function; `topology` must outlive it. Call supports() first.
  std::unique_ptr<RoutingFunction> (*create)(const Topology& topology, const SimConfig& config);
  // Accepts faults.* (the "not fault tolerant" error of the others lists these).
  bool fault_tolerant = false;
};

// Every registered algorithm, in a fixed order.
std::span<const RoutingEntry> RoutingAlgorithms();

// The entry called `name`, or kNotFound listing the known names.
Result<const RoutingEntry*> FindRoutingAlgorithm(std::string_view name);

// FindRoutingAlgorithm + supports + create, with errors naming routing.algorithm.
Result<std::unique_ptr<RoutingFunction>> MakeRouting(const Topology& topology,
                                                     const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_REGISTRY_H_
