// The zero-load latency of docs/simulator.md, for the sim module's exact-latency tests (in
// one process: tests/rt/sim_module_test.cc; under `ukai launch --sim`:
// tests/cli/launch_sim_itest.cc): a message of `wire_bytes` over `hops` router-to-router
// channels takes (H + 1) * hop_cycles + H * link_cycles + L cycles, L = ceil(wire_bytes /
// flit_bytes) flits.
#ifndef UKAI_TESTS_SIM_ZERO_LOAD_H_
#define UKAI_TESTS_SIM_ZERO_LOAD_H_

#include <cstdint>

namespace ukai::testing {

inline int64_t ZeroLoadCycles(int64_t hops, int64_t hop_cycles, int64_t link_cycles,
                              int64_t wire_bytes, int64_t flit_bytes) {
  const int64_t flits = (wire_bytes + flit_bytes - 1) / flit_bytes;
  return (hops + 1) * hop_cycles + hops * link_cycles + flits;
}

}  // namespace ukai::testing

#endif  // UKAI_TESTS_SIM_ZERO_LOAD_H_
