#include "sim/experiment/sim_module_keys.h"

#include <fmt/format.h>

namespace ukai::sim {

using config::KeySpec;
using config::Tree;
using config::ValueType;

std::vector<KeySpec> SimModuleKeySpecs() {
  const SimModuleConfig d;
  return {
      KeySpec::Make("sim.cpu_scale", ValueType::kFloat)
          .Min(0)
          .Max(1e6)
          .Default("1")
          .Doc("the runtime's sim module: simulated seconds per second of CPU time a process "
               "uses between runtime calls (0: only communication takes time; "
               "docs/sim-module.md)"),
      KeySpec::Make("sim.node_map", ValueType::kStructured)
          .Default("[]")
          .Doc("the runtime's sim module: a list [n0, n1, ...]: process i runs on network "
               "node n_i (several processes may share a node); [] : process i on node i"),
      KeySpec::Make("sim.stall_ms", ValueType::kInt)
          .Unit("ms")
          .Min(1)
          .Max(86400000)
          .Default(std::to_string(d.stall_ms))
          .Doc("the runtime's sim module: wall time a process may run without a runtime call "
               "while the simulation waits for it; then the run stops with an error naming "
               "the process and its last call. Under ukai launch --sim also the wall time "
               "every process may wait in the runtime with nothing in flight or due (a frame "
               "lost to a fault that they wait for); then the run stops saying so"),
      KeySpec::Make("sim.packet_bytes", ValueType::kInt)
          .Unit("bytes")
          .Min(1)
          .Max(double(int64_t{1} << 30))
          .Default(std::to_string(d.packet_bytes))
          .Doc("the runtime's sim module: a frame is cut into packets of at most this size "
               "(and at most 32767 flits, and one VC buffer with vct)"),
  };
}

void ReadSimModuleConfig(const config::ConfigValues& values, SimModuleConfig* out,
                         std::vector<std::string>* errors) {
  if (const config::Value* v = values.Find("sim.cpu_scale")) {
    out->cpu_scale = std::get<double>(v->items[0]);
  }
  if (const config::Value* v = values.Find("sim.stall_ms")) {
    out->stall_ms = std::get<int64_t>(v->items[0]);
  }
  if (const config::Value* v = values.Find("sim.packet_bytes")) {
    out->packet_bytes = std::get<int64_t>(v->items[0]);
  }
  const config::Value* v = values.Find("sim.node_map");
  if (v == nullptr) return;
  const Tree& t = v->tree;
  out->node_map_where = t.origin.Where();
  const std::string form = "expected a list of network node numbers [n0, n1, ...]";
  if (t.kind != Tree::Kind::kList) {
    errors->push_back(config::KeyError("sim.node_map", form, t.origin).message());
    return;
  }
  out->node_map.clear();
  for (size_t i = 0; i < t.items.size(); ++i) {
    const Tree& item = t.items[i];
    const int64_t* n =
        item.kind == Tree::Kind::kScalar ? std::get_if<int64_t>(&item.scalar) : nullptr;
    if (n == nullptr || *n < 0 || *n >= (int64_t{1} << 26)) {
      errors->push_back(config::KeyError("sim.node_map",
                                         fmt::format("item {} is not a node number ({})", i, form),
                                         item.origin)
                            .message());
      return;
    }
    out->node_map.push_back(static_cast<int>(*n));
  }
}

}  // namespace ukai::sim
