// RunSssPoint: one point of the SSS-CORE NIC model (traffic.operation = write / read;
// docs/sss.md): the machine (nic/sss_nic.h) with its synthetic operations
// (nic/sss_traffic.h), measured like messages mode: the first measure.warmup_messages
// operations (by start) are the warm-up, the next measure.measure_messages are measured,
// and the point ends when they are all complete (or at measure.max_cycles, or when the
// operations in flight pass the backlog bound: saturated). traffic.operations caps the
// operations started. Latency figures are operation latencies (start to completion).
//
// Errors: the config's (naming the key); kDeadlock from the watchdog; kInternal when a
// packet was lost (packets_dropped is checked to be 0).
#ifndef UKAI_SIM_NIC_RUN_SSS_H_
#define UKAI_SIM_NIC_RUN_SSS_H_

#include <cstdint>
#include <functional>

#include "core/status.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

Result<PointResult> RunSssPoint(const SimConfig& config,
                                const std::function<void(int64_t, int64_t)>& progress);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_RUN_SSS_H_
