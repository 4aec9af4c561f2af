// The explicit table of built-in communication modules (src/rt/modules/registry.cc).
// A module is added by one line in that table; --ukai-modules= / RuntimeOptions::modules
// choose among the entries by name.
#ifndef UKAI_RT_MODULES_REGISTRY_H_
#define UKAI_RT_MODULES_REGISTRY_H_

#include <memory>
#include <span>
#include <string_view>

#include "core/status.h"
#include "rt/core/module.h"

namespace ukai::rt {

class InprocFabric;
class SimFabric;

// What a factory gets: things shared beyond one runtime (the inproc fabric, the simulated
// machine of the sim module).
struct ModuleEnv {
  std::shared_ptr<InprocFabric> fabric;
  std::shared_ptr<SimFabric> sim_fabric;
};

struct ModuleEntry {
  const char* name;
  const char* description;
  bool default_on;  // loaded when no module list is given
  std::unique_ptr<Module> (*create)(const ModuleEnv& env);
};

std::span<const ModuleEntry> ModuleTable();
// The entry named `name`, or kNotFound listing the known names.
Result<const ModuleEntry*> FindModule(std::string_view name);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_REGISTRY_H_
