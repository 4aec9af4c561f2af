// inproc: runtimes (and the contexts of one runtime) in one process. A frame is handed over
// as its ByteBlock (no copy) into the target runtime's inbox; the target's progress engine
// delivers it with the storage, so threaded handlers get it without a copy either.
//
// Runtimes find each other through an InprocFabric (no globals): each Runtime has its own
// unless RuntimeOptions::inproc_fabric shares one. The descriptor is the fabric's id.
#ifndef UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_
#define UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_

#include <memory>
#include <mutex>
#include <unordered_map>

#include "rt/modules/registry.h"

namespace ukai::rt {

class InprocModule;

// The meeting point of inproc modules. Thread safe. Runtimes register on Init and leave on
// Close (the others are then told: an orderly departure).
class InprocFabric {
 public:
  InprocFabric();
  uint64_t id() const { return id_; }
  void Join(RuntimeId rt, InprocModule* m);
  void Leave(RuntimeId rt);
  // Hands `frame` to runtime `target`'s inbox. kUnavailable when it is not (or no longer)
  // in the fabric.
  Status Post(RuntimeId target, ByteBlock&& frame);
  // Whether runtime `rt` is in the fabric (the runtime's reply path uses it).
  bool Has(RuntimeId rt);

 private:
  const uint64_t id_;
  std::mutex mu_;
  std::unordered_map<RuntimeId, InprocModule*> members_;
};

std::unique_ptr<Module> NewInprocModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_
