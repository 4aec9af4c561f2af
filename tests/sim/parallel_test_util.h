// Helpers shared by the parallel-simulation tests (parallel_test.cc, parallel_ranks_test.cc):
// the gateway point with pcap in and out, and a whole file read back.
#ifndef UKAI_TESTS_SIM_PARALLEL_TEST_UTIL_H_
#define UKAI_TESTS_SIM_PARALLEL_TEST_UTIL_H_

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/nic/pcap_io.h"
#include "sim_test_util.h"

namespace ukai::sim::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes an ingress capture for the gateway below: 40 frames of 600 bytes to the 24 nodes'
// MACs, with FCS (5 % of them bad).
inline Status WriteGatewayIngress(const std::string& path) {
  std::vector<Mac> macs;
  for (int i = 0; i < 24; ++i) macs.push_back(0x020000000000ULL | static_cast<uint64_t>(i));
  return WriteSyntheticPcap(path, macs, 40, 600, 0.002, true, 0.05, 1e9, 5);
}

// The gateway NIC (group topology, dor-detour with via nodes, tagged messages) reading
// `in` and writing its egress frames to `out`.
inline SimConfig GatewayConfig(const std::string& in, const std::string& out) {
  SimConfig c;
  c.network.topology = TopologyKind::kGroup;
  c.routing.algorithm = "dor-detour";
  c.router.flit_bytes = 32;
  c.nic.ingress_pcap = in;
  c.nic.ingress_fcs = true;
  c.nic.egress_rate = 0.001;
  c.nic.egress_frames = 20;
  c.nic.egress_frame_bytes = 300;
  c.nic.egress_pcap = out;
  return c;
}

// Detour-UD on an 8 x 8 torus with timed faults and the reconfiguration protocol: node 18
// fails at cycle 600, node 45 (in the other half, whether cut in slabs or blocks) at 700,
// node 18 is repaired at 2500 — discards, retransmissions from the source, table commits
// node by node, paused PEs.
inline SimConfig DetourUdReconfigConfig(ReconfigConfig::Discard discard) {
  SimConfig c = SmallConfig(TopologyKind::kTorus, {8, 8}, "detour-ud");
  c.router.vcs = 2;
  c.routing.timeout_cycles = 16;
  c.traffic.rate = 0.35;
  c.faults.reconfig.discard = discard;
  FaultEventSpec fail, fail2, repair;
  fail.cycle = 600;
  fail.node = NodeNumber(18);
  fail2 = fail;
  fail2.cycle = 700;
  fail2.node = NodeNumber(45);
  repair = fail;
  repair.cycle = 2500;
  repair.kind = FaultEventSpec::Kind::kRepairNode;
  c.faults.events = {fail, fail2, repair};
  c.measure.warmup_messages = 300;
  c.measure.measure_messages = 2500;
  return c;
}

}  // namespace ukai::sim::testing

#endif  // UKAI_TESTS_SIM_PARALLEL_TEST_UTIL_H_
