// Virtual time: the hooks through which the runtime tells the `sim` communication module
// (rt/modules/sim/) what its threads do, so that the simulated machine can keep each
// process's clock (docs/sim-module.md). Without the sim module nothing here is called:
// RuntimeImpl's hooks are a null pointer, and Runtime::Now() is the steady wall clock.
//
// Threads: a program thread (one that calls the runtime) is "busy" from a runtime call
// until it waits; waits (an idle Runtime::Progress(), a round of a runtime wait loop) call
// ThreadIdle, other calls ThreadCall. Threaded handlers call HandlerBegin/HandlerEnd on
// their pool thread; the progress thread calls HandlerQueued when it hands one to the pool.
//
// Thread safety: every method may be called from any thread.
#ifndef UKAI_RT_CORE_VIRTUAL_TIME_H_
#define UKAI_RT_CORE_VIRTUAL_TIME_H_

#include <chrono>
#include <cstdint>

#include "core/status.h"
#include "ukai/rt/startpoint.hpp"

namespace ukai::rt::internal {

class VirtualTime {
 public:
  virtual ~VirtualTime() = default;
  // The calling thread waits in a runtime call named `call` and has just checked (or is
  // about to check) what it waits for: the simulation may advance until a delivery.
  virtual void ThreadIdle(const char* call) = 0;
  // The calling thread runs runtime call `call` (not a wait).
  virtual void ThreadCall(const char* call) = 0;
  // This runtime's simulated time since the simulation started (a runtime call too).
  virtual std::chrono::nanoseconds Now() = 0;
  // A threaded handler was handed to the pool (progress thread), starts and ends on the
  // calling pool thread.
  virtual void HandlerQueued() = 0;
  virtual void HandlerBegin() = 0;
  virtual void HandlerEnd() = 0;
  // Runtime::Barrier() on the simulated machine: its rounds are frames through the simulated
  // network (RuntimeImpl::Barrier runs the algorithm). BarrierSend sends round `round` of
  // barrier `seq` to runtime `to`; BarrierArrived: whether that round came from `from`
  // (taking it), kUnavailable when `from` failed or left, or this runtime stopped.
  virtual Status BarrierSend(RuntimeId to, uint64_t seq, int round) = 0;
  virtual Result<bool> BarrierArrived(RuntimeId from, uint64_t seq, int round) = 0;
};

// True when the calling thread takes part in a simulated machine's virtual time: its runtime
// waits must poll (Runtime::Progress) instead of sleeping on a condition variable, so that
// each round tells the simulation that it still waits.
bool ThreadInSimulation();
// Set by the sim module for the calling thread.
void SetThreadInSimulation(bool on);
// For harnesses that wait outside the runtime on purpose (tests polling a flag): tells the
// simulated machine the calling thread waits, as an idle Runtime::Progress() would. No-op
// off a simulation. (rt/modules/sim/sim_fabric.cc)
void ThreadWaitsOutsideRuntime();

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_VIRTUAL_TIME_H_
