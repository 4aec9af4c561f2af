// SimLink: how a `sim` module reaches its simulated machine. In one process that is the
// SimFabric itself (LocalSimLink, sim_module.cc); under `ukai launch --sim` it is the channel
// to the launcher, which hosts the fabric (sim_remote.h). The time rules live in SimFabric
// only: a remote link forwards every call, in order, and the launcher replays it on the
// fabric on behalf of the calling thread (SimCaller).
//
// Thread safety: every method may be called from any thread.
#ifndef UKAI_RT_MODULES_SIM_SIM_LINK_H_
#define UKAI_RT_MODULES_SIM_SIM_LINK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "rt/modules/sim/sim_fabric.h"

namespace ukai::rt {

class SimLink {
 public:
  virtual ~SimLink() = default;
  virtual uint64_t machine_id() const = 0;
  virtual double clock_mhz() const = 0;
  // Joins runtime `rt` (its frames and peer events go to `m`); the process number.
  virtual Result<int> Join(RuntimeId rt, SimMember* m) = 0;
  virtual void Leave(RuntimeId rt) = 0;
  virtual bool Has(RuntimeId rt) = 0;
  // SimFabric's methods of the same names.
  virtual Status Post(RuntimeId from, RuntimeId to, ByteBlock&& frame,
                      std::shared_ptr<SimInFlight> in_flight) = 0;
  virtual void Dispatched(RuntimeId rt, int n) = 0;
  virtual void ThreadIdle(RuntimeId rt, const char* call) = 0;
  virtual void ThreadCall(RuntimeId rt, const char* call) = 0;
  virtual int64_t NowCycles(RuntimeId rt) = 0;
  virtual void HandlerQueued(RuntimeId rt) = 0;
  virtual void HandlerBegin(RuntimeId rt) = 0;
  virtual void HandlerEnd(RuntimeId rt) = 0;
  virtual std::map<std::string, uint64_t> Counters() = 0;
  // A thread of this process waits in the runtime (its last call was an idle round): it
  // polls Progress() and takes arrivals itself, so the progress thread need not be woken
  // for them (under `ukai launch --sim`; in one process the fabric's driver dispatches).
  virtual bool ThreadWaits() { return false; }
  // A progress pass that dispatched nothing new: sends what waits for a program thread's
  // next message (a dispatch report it made, calls and posts of a thread the launcher has
  // busy: sim_remote.cc), unless on such a thread.
  virtual void FlushHeld() {}
};

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SIM_SIM_LINK_H_
