// SimFabric's records of its members and threads, shared by its two source files
// (sim_fabric.cc: membership, threads and clocks, frames; sim_fabric_driver.cc: stepping
// the network, failures, figures). Internal to the fabric: guarded by SimFabric::mu_.
#ifndef UKAI_RT_MODULES_SIM_SIM_FABRIC_RECORDS_H_
#define UKAI_RT_MODULES_SIM_SIM_FABRIC_RECORDS_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "rt/modules/sim/sim_fabric.h"

namespace ukai::rt {
namespace sim_fabric_internal {

// A horizon no process holds.
inline constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

// A runtime id as 16 hex digits (error messages).
inline std::string HexId(uint64_t v) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = kDigits[v & 15];
  return s;
}

}  // namespace sim_fabric_internal

struct SimFabric::Member {
  RuntimeId id = 0;
  SimMember* module = nullptr;
  int process = 0;
  int node = 0;
  int64_t clock = 0;         // cycles
  int pending_dispatch = 0;  // frames handed to it and not yet dispatched
  int handlers = 0;          // threaded handlers queued or running
  uint64_t sent = 0;         // frames it sent (ordering of ready messages)
  bool failed = false;
  bool to_kick = false;  // in kick_
  int kicking = 0;       // the driver is in its Kick (Leave waits: the module stays)
};

struct SimFabric::Thread {
  std::vector<RuntimeId> holds;  // runtimes it called
  bool idle = false;
  // The dispatch epoch (Epoch()) at its last call. A wait checks its condition between two
  // calls (a round: call, check, idle call), so an idle call shows that the thread saw
  // everything dispatched up to `seen` only when nothing was dispatched since the call before
  // it: `settled`. A dispatch that raced with the check (after it, before the idle call)
  // leaves the thread holding for one more round.
  uint64_t seen = 0;
  bool settled = false;
  int64_t clock = 0;  // cycles
  int64_t cpu_mark = 0;
  const char* last_call = "Init";
  std::chrono::steady_clock::time_point last_wall = std::chrono::steady_clock::now();
  int handler_depth = 0;
  bool program = false;   // called the runtime outside a handler
  uint64_t key = 0;       // SimCaller::key of a remote thread (0: a thread of this process)
  uint64_t activity = 0;  // SimFabric::activity_ at its last call
};

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SIM_SIM_FABRIC_RECORDS_H_
