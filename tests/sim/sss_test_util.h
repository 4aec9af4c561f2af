// Helpers for the SSS-CORE network tests: a small tree config for the NIC model and a
// driver that runs one operation to completion.
#ifndef UKAI_TESTS_SIM_SSS_TEST_UTIL_H_
#define UKAI_TESTS_SIM_SSS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/nic/sss_nic.h"

namespace ukai::sim::testing {

// A tree of `levels` levels of `arity`, source routing, vct-saf, 1 VC, 2-byte flits, a
// switch that forwards a header in the cycle it arrives (hop_cycles 1: back-to-back
// packets through its single FIFO), the NIC model with remote writes.
inline SimConfig SssTree(int arity, int levels) {
  SimConfig c;
  c.network.topology = TopologyKind::kTree;
  c.network.tree_arity = arity;
  c.network.tree_levels = levels;
  c.routing.algorithm = "source";
  c.router.switching = Switching::kVctSaf;
  c.router.vcs = 1;
  c.router.pe_vcs = 1;
  c.router.flit_bytes = 2;
  c.router.vc_buffer_flits = 2200;
  c.router.hop_cycles = 1;
  c.sss.operation = RmaOperation::kWrite;
  return c;
}

// Runs the machine until operation `id` completes (fails the test after `limit` cycles);
// returns its completion.
inline SssCompletion RunUntilDone(SssMachine& m, int64_t id, int64_t limit = 2000000) {
  const int64_t start = m.now();
  while (m.now() - start < limit) {
    m.Step();
    for (const SssCompletion& c : m.completions()) {
      if (c.op == id) return c;
    }
  }
  ADD_FAILURE() << "operation " << id << " not complete after " << limit << " cycles";
  return {};
}

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_SSS_TEST_UTIL_H_
