// Figures of one ping-pong/streaming benchmark series, per message size, and the helpers the
// rt benchmark driver shares (sizes, timing, running a command and capturing its output).
//
// Units: latency in microseconds (one way = half a round trip, median), bandwidth in GB/s
// (1e9 bytes per second). Thread safety: plain values.
#ifndef UKAI_BENCH_RT_FIGURES_H_
#define UKAI_BENCH_RT_FIGURES_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::bench {

struct Figures {
  std::map<size_t, double> latency_us;     // size -> median one-way latency
  std::map<size_t, double> bandwidth_gbs;  // size -> streaming bandwidth
  std::string note;                        // why a series is missing, when it is
};

// 8 B ... 1 MiB in steps of 8x.
inline std::vector<size_t> DefaultSizes() { return {8, 64, 512, 4096, 32768, 262144, 1048576}; }

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `command` with /bin/sh, returns its stdout; an error when it exits non-zero (the
// message carries the command and the tail of its output).
Result<std::string> RunCapture(const std::string& command);

// The directory of the running executable (helpers are looked up beside it).
std::string SelfDirectory();

// Median of `samples` (reorders them); 0 when empty.
double Median(std::vector<double>& samples);

}  // namespace ukai::bench

#endif  // UKAI_BENCH_RT_FIGURES_H_
