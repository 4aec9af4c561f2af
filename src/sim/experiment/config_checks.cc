#include "sim/experiment/config_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/memory_budget.h"
#include "sim/nic/gateway.h"
#include "sim/nic/sss_nic.h"
#include "sim/routing/registry.h"
#include "sim/topology/factory.h"
#include "sim/topology/faults.h"
#include "sim/topology/kary_ncube.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"
#include "sim/workload/run_workload.h"

namespace ukai::sim {
namespace {

// What only the simulator knows, for one point on an already built topology.
Status CheckSupported(const SimConfig& c, const Topology& topology) {
  UKAI_RETURN_IF_ERROR(ValidateConfig(c));
  Result<const RoutingEntry*> routing = FindRoutingAlgorithm(c.routing.algorithm);
  if (!routing.ok()) return routing.status();
  if (c.faults.any()) {
    Result<FaultPlan> faults = PlanFaults(topology, c.faults, c.seed);
    if (!faults.ok()) return faults.status();
    // The routing judges the network with its cycle-0 faults, as Network::Create builds it.
    if (const auto* cube = dynamic_cast<const KaryNCube*>(&topology)) {
      KaryNCube faulty = *cube;
      faults->initial.ApplyTo(&faulty);
      UKAI_RETURN_IF_ERROR((*routing)->supports(faulty, c));
    }
  }
  UKAI_RETURN_IF_ERROR((*routing)->supports(topology, c));
  if (c.workload.active()) return CheckWorkload(c, topology);  // workload/run_workload.h
  if (c.nic.active()) {  // the gateway model's nodes and MACs (nic/gateway.h)
    Result<NicNodes> nic = ResolveNicConfig(c, topology);
    if (!nic.ok()) return nic.status();
  }
  if (c.sss.active()) return CheckSssConfig(c, topology);  // nic/sss_nic.h
  Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(topology, c.traffic);
  if (!pattern.ok()) return pattern.status();
  Result<std::unique_ptr<InjectionProcess>> injection =
      MakeInjection(c.traffic, MeanMessageFlits(c.traffic, c.router.flit_bytes));
  return injection.ok() ? Status::Ok() : injection.status();
}

}  // namespace

// network.k against network.n, the node count, and the hot-spot node numbers.
void CheckNetwork(const config::ConfigValues& values, SimConfig* c,
                  std::vector<std::string>* errors) {
  const config::Value* k = values.Find("network.k");
  const config::Value* n = values.Find("network.n");
  const int dims = c->network.n;
  if (c->network.topology == TopologyKind::kGroup) return;  // MakeTopology checks it
  if (c->network.topology == TopologyKind::kGraph || c->network.topology == TopologyKind::kTree) {
    if (Status st = CheckMemory(*c); !st.ok()) {  // MakeTopology checks the rest
      const config::Value* at = values.Find("run.memory_limit");
      errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    }
    return;
  }
  if (k == nullptr) {
    c->network.k.assign(dims, SimConfig().network.k[0]);
  } else if (!k->is_list) {
    c->network.k.assign(dims, c->network.k[0]);
  } else if (static_cast<int>(k->items.size()) != dims) {
    errors->push_back(
        config::KeyError("network.k",
                         fmt::format("has {} radices but network.n = {}{} (give one int for "
                                     "every dimension, or a list of network.n ints)",
                                     k->items.size(), dims, n ? "" : " (the default)"),
                         k->origin)
            .message());
    return;
  }
  const TopologyKind kind = c->network.topology;
  if (kind != TopologyKind::kMesh && kind != TopologyKind::kTorus) {  // indirect: MakeTopology
    if (Status st = CheckMemory(*c); !st.ok()) {
      const config::Value* at = values.Find("run.memory_limit");
      if (at == nullptr) at = k ? k : n;
      errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    }
    return;
  }
  int64_t nodes = 1;
  for (int r : c->network.k) nodes = std::min(nodes * r, kKaryNCubeMaxNodes + 1);
  if (nodes > kKaryNCubeMaxNodes) {
    errors->push_back(config::KeyError("network.k",
                                       fmt::format("the network would have more than {} "
                                                   "nodes, the most ukai simulates",
                                                   kKaryNCubeMaxNodes),
                                       k ? k->origin : n->origin)
                          .message());
    return;
  }
  // The router state index and the memory estimate: arithmetic only, so that a network too
  // large is refused at once (before any topology is built).
  const int ports = 2 * dims + 1;
  if (nodes > Fabric::MaxRouters(ports, c->router)) {
    errors->push_back(config::KeyError("network.k",
                                       fmt::format("{} nodes are too many for the router state "
                                                   "index with router.vcs = {} and "
                                                   "router.pe_vcs = {} (at most {})",
                                                   nodes, c->router.vcs, c->router.pe_vcs,
                                                   Fabric::MaxRouters(ports, c->router)),
                                       k   ? k->origin
                                       : n ? n->origin
                                           : config::Origin{})
                          .message());
    return;
  }
  if (Status st = CheckMemory(*c); !st.ok()) {
    const config::Value* at = values.Find("run.memory_limit");
    if (at == nullptr) at = k ? k : n;
    errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    return;
  }
  if (const config::Value* hot = values.Find("traffic.hotspot_nodes")) {
    for (int node : c->traffic.hotspot_nodes) {
      if (node >= nodes) {
        errors->push_back(config::KeyError("traffic.hotspot_nodes",
                                           fmt::format("node {} does not exist (the network "
                                                       "has nodes 0..{})",
                                                       node, nodes - 1),
                                           hot->origin)
                              .message());
        break;
      }
    }
  }
}

// A swept injection parameter that the chosen injection process does not use.
void CheckUnusedSweeps(const config::ConfigValues& values, const SimConfig& c,
                       std::vector<std::string>* errors) {
  struct Rule {
    std::string_view key;
    InjectionKind needs;
  };
  for (const Rule& r : {Rule{"traffic.rate", InjectionKind::kBernoulli},
                        Rule{"traffic.interval", InjectionKind::kInterval}}) {
    const config::Value* v = values.Find(r.key);
    const bool used = r.needs == InjectionKind::kBernoulli ? UsesRate(c.traffic.injection)
                                                           : !UsesRate(c.traffic.injection);
    if (v != nullptr && v->items.size() > 1 && !used) {
      errors->push_back(
          config::KeyError(r.key,
                           fmt::format("is swept but traffic.injection = \"{}\" "
                                       "does not use it (set traffic.injection "
                                       "= \"{}\")",
                                       InjectionName(c.traffic.injection), InjectionName(r.needs)),
                           v->origin)
              .message());
    }
  }
}

// Runs CheckSupported on every point; reports each distinct problem once, with the place
// of the key it names and the first point that has it.
void CheckPointsSupported(const config::ConfigValues& values, const std::vector<SimConfig>& points,
                          std::vector<std::string>* errors) {
  Result<std::unique_ptr<Topology>> topology = MakeTopology(points.front().network);
  std::vector<std::string> seen;
  for (size_t i = 0; i < points.size(); ++i) {
    const SimConfig& c = points[i];
    Status st = topology.ok() ? CheckSupported(c, **topology) : topology.status();
    if (st.ok() || std::find(seen.begin(), seen.end(), st.message()) != seen.end()) continue;
    seen.push_back(st.message());
    std::string where;
    // The key the simulator's error is about (Status::key()) gives the place in the file.
    if (const config::Value* v = st.key().empty() ? nullptr : values.Find(st.key())) {
      where = fmt::format(" {}", v->origin.Where());
    }
    std::string point;
    if (points.size() > 1) {
      point = fmt::format(" (point {} of {}: routing.algorithm = {}, traffic.pattern = {})", i + 1,
                          points.size(), c.routing.algorithm, c.traffic.pattern);
    }
    errors->push_back(fmt::format("{}{}{}", st.message(), where, point));
    if (!topology.ok()) break;
  }
}

}  // namespace ukai::sim
