// The shm module's raw ring (src/rt/modules/shm/shm_ring.h) between two forked processes,
// each pinned to its own core, without the runtime on top: the transport's ceiling.
// Latency: a record of `size` bytes echoed back, median of timed round trips / 2.
// Bandwidth: records of `size` bytes streamed one way, the consumer releasing each in place.
#ifndef UKAI_BENCH_RT_SHM_RING_BENCH_H_
#define UKAI_BENCH_RT_SHM_RING_BENCH_H_

#include <vector>

#include "figures.h"

namespace ukai::bench {

Figures RunShmRing(const std::vector<size_t>& sizes, double seconds);

}  // namespace ukai::bench

#endif  // UKAI_BENCH_RT_SHM_RING_BENCH_H_
