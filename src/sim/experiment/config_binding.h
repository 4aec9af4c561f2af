// ConfigBinding: one row of the simulation config's schema (experiment/config_schema.h):
// the key's spec, how its checked items are stored into a SimConfig, and how the default
// is printed (from SimConfig's own defaults). config_schema.cc holds most rows; a model
// with many keys of its own keeps its rows in its own file (experiment/sss_keys.h).
//
// Thread safety: plain values.
#ifndef UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_
#define UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

struct ConfigBinding {
  config::KeySpec spec;
  void (*set)(const std::vector<config::Scalar>& items, SimConfig* c);
  std::string (*show)(const SimConfig& c);
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_
