// Memory bounds of a simulation point, so that a config too large for the machine ends in
// a clear error instead of std::bad_alloc or the OOM killer:
//   - the limit: run.memory_limit bytes, or, when it is 0 (the default), half of the
//     physical memory, and never more than half of the address-space limit (ulimit -v)
//     when one is set;
//   - CheckMemory(): the network's estimated state (Network::StateBytes, computed from
//     the config alone) against that limit, before anything is allocated; the error names
//     the keys that drive the size;
//   - BacklogBound(): the most messages the source queues may hold before the point is
//     stopped as saturated (kBacklogPerSendingNode per sending node, never more than the
//     memory left under the limit, nor than half of the message pool's 2^30 indices).
// Container (cgroup) memory limits are not read: set run.memory_limit there.
//
// Thread safety: free functions; they read system figures (sysconf, getrlimit) only.
#ifndef UKAI_SIM_EXPERIMENT_MEMORY_BUDGET_H_
#define UKAI_SIM_EXPERIMENT_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>

#include "core/status.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// Queued messages per sending node at which a point is stopped as saturated (a node whose
// queue holds 1000 messages delays its next message by at least 1000 message times).
inline constexpr int64_t kBacklogPerSendingNode = 1000;
// Memory counted per queued message: the pool entry, and the pool's copy while it grows.
inline constexpr int64_t kBytesPerQueuedMessage = 120;

struct MemoryLimit {
  int64_t bytes = 0;
  std::string origin;  // "run.memory_limit = ..." or "half of the ... of physical memory"
};

// The limit that applies to `run` (see above).
MemoryLimit EffectiveMemoryLimit(const RunConfig& run);

// kInvalidArgument starting "run.memory_limit:" when the network of `config` needs more
// than the limit; names the driving keys and both sizes.
Status CheckMemory(const SimConfig& config);

// The backlog (queued messages, all nodes) past which a point stops as saturated.
int64_t BacklogBound(const SimConfig& config, int sending_nodes);

// "1.5 GiB", "320 MiB", "12 KiB", "100 B".
std::string FormatBytes(double bytes);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_MEMORY_BUDGET_H_
