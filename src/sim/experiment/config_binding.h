// ConfigBinding: one row of the simulation config's schema (experiment/config_schema.h):
// the key's spec, how its checked items are stored into a SimConfig, and how the default
// is printed (from SimConfig's own defaults). config_schema.cc holds most rows; a model
// with many keys of its own keeps its rows in its own file (experiment/sss_keys.h,
// experiment/gateway_keys.h).
//
// Thread safety: plain values.
#ifndef UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_
#define UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// The checked items of a key, as a row's `set` reads them (the schema has checked the type).
inline int I32(const config::Scalar& s) { return static_cast<int>(std::get<int64_t>(s)); }
inline int64_t I64(const config::Scalar& s) { return std::get<int64_t>(s); }
inline double F64(const config::Scalar& s) { return std::get<double>(s); }
inline const std::string& Str(const config::Scalar& s) { return std::get<std::string>(s); }
// A number as the config writes it (a row's `show`).
inline std::string Num(double v) { return config::ScalarToString(config::Scalar(v)); }

struct ConfigBinding {
  config::KeySpec spec;
  void (*set)(const std::vector<config::Scalar>& items, SimConfig* c);
  std::string (*show)(const SimConfig& c);
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_BINDING_H_
