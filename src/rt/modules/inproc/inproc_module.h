// inproc: runtimes (and the contexts of one runtime) in one process. A frame is handed over
// as its ByteBlock (no copy) into the target runtime's inbox; the target's progress engine
// delivers it with the storage, so threaded handlers get it without a copy either.
//
// Runtimes find each other through an InprocFabric (no globals): each Runtime has its own
// unless RuntimeOptions::inproc_fabric shares one. The descriptor is the fabric's id.
#ifndef UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_
#define UKAI_RT_MODULES_INPROC_INPROC_MODULE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "rt/modules/registry.h"

namespace ukai::rt {

class InprocModule;

// Frames one sender posted to one target that the target's progress engine has not taken
// from its inbox yet (flow control: CommObject::QueuedBytes / Outstanding). Thread safe.
struct InprocInFlight {
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> bytes{0};
};

// The meeting point of inproc modules. Thread safe. Runtimes register on Init and leave on
// Close (the others are then told: an orderly departure).
class InprocFabric {
 public:
  InprocFabric();
  uint64_t id() const { return id_; }
  void Join(RuntimeId rt, InprocModule* m);
  void Leave(RuntimeId rt);
  // Hands `frame` to runtime `target`'s inbox, counted in `in_flight` until the target
  // takes it. kUnavailable when it is not (or no longer) in the fabric.
  Status Post(RuntimeId target, ByteBlock&& frame, std::shared_ptr<InprocInFlight> in_flight);
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
