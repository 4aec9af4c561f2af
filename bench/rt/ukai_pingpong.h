// ukai runtime series of the rt benchmark: RSR ping-pong latency and streaming bandwidth
// per communication module, measured with the public API (<ukai/ukai.hpp>).
#ifndef UKAI_BENCH_RT_UKAI_PINGPONG_H_
#define UKAI_BENCH_RT_UKAI_PINGPONG_H_

#include <functional>
#include <string>
#include <vector>

#include "figures.h"

namespace ukai::bench {

struct PingPongSeries {
  std::string name;  // "ukai shm", ...
  bool tcp_like;     // compared with the TCP baselines (else the shared-memory ones)
  std::function<Figures(const std::vector<size_t>& sizes, double seconds)> run;
};

// The runtime's series (empty until the runtime is built).
std::vector<PingPongSeries> UkaiSeries();

}  // namespace ukai::bench

#endif  // UKAI_BENCH_RT_UKAI_PINGPONG_H_
