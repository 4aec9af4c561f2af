// inproc: runtimes (and the contexts of one runtime) in one process. A frame is handed over
// as its ByteBlock (no copy) into the target runtime's inbox; the target's progress engine
// delivers it with the storage, so threaded handlers get it without a copy either.
//
// Runtimes find each other through an InprocFabric (no globals): each Runtime has its own
// unless RuntimeOptions::inproc_fabric shares one. The descriptor is the fabric's id.
#ifndef UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_
#define UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewInprocModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_
