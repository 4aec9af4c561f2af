// Helpers shared by the gateway tests (gateway_nic_test.cc, gateway_management_test.cc): the
// patent's 24-node machine as a config, node names, and a driver that runs a gateway until
// everything in flight is accounted for.
#ifndef UKAI_TESTS_SIM_GATEWAY_TEST_UTIL_H_
#define UKAI_TESTS_SIM_GATEWAY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/experiment/sim_config.h"
#include "sim/nic/gateway.h"

namespace ukai::sim::testing {

// The 6 x 4 group topology with the gateway model and no internal traffic.
inline SimConfig Group24(DetourPolicy policy) {
  SimConfig c;
  c.network.topology = TopologyKind::kGroup;
  c.routing.algorithm = "dor-detour";
  c.nic.detours = policy;
  c.nic.internal_traffic = false;
  c.router.flit_bytes = 32;  // 1500-byte frames in 47 flits: quick under ASan
  return c;
}

inline NodeRef Name(const std::string& s) {
  NodeRef r;
  r.form = NodeRef::Form::kName;
  r.name = s;
  r.text = s;
  return r;
}

// A faults.events entry: `kind` of node `name` at `cycle`.
inline FaultEventSpec NodeEvent(int64_t cycle, FaultEventSpec::Kind kind, const std::string& name) {
  FaultEventSpec e;
  e.cycle = cycle;
  e.kind = kind;
  e.node = Name(name);
  return e;
}

inline void RunToEnd(Gateway& g, int64_t limit = 2000000) {
  for (int64_t i = 0; i < limit && !g.Done(); ++i) ASSERT_TRUE(g.Step().ok());
  ASSERT_TRUE(g.Done());
}

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_GATEWAY_TEST_UTIL_H_
