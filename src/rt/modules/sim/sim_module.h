// sim: runtimes on a simulated machine (docs/sim-module.md). Every frame goes through the
// flit-level simulator as a message of its wire size and reaches the peer, unchanged, when
// the simulator delivers it; the runtime's clock is simulated time (Runtime::Now()).
//
// The machine is a SimFabric (sim_fabric.h) that the runtimes share through
// RuntimeOptions::sim_fabric (rt/sim_machine/sim_machine.h builds one from a simulator
// config). The module is exclusive: with "sim" in the module list no other module is loaded,
// so no frame bypasses the simulator (nor do the shm direct RMA path and MPI one-sided).
#ifndef UKAI_RT_MODULES_SIM_SIM_MODULE_H_
#define UKAI_RT_MODULES_SIM_SIM_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewSimModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SIM_SIM_MODULE_H_
