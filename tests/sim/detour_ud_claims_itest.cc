// The Detour-UD paper's orderings that our full reproduction (experiments/detour-ud/
// REPORT.md) shows with wide margins, checked on a reduced run (10x10 torus, the paper's
// VCs and buffers, 300 + 1200 messages, PEs sending back to back):
//   - a shorter deadlock-detection timeout gives more recovery (64 > 128 > 256 clocks);
//   - uniform traffic gives more bandwidth than transpose;
//   - faulty nodes lower Detour-UD's bandwidth.
#include <gtest/gtest.h>

#include "sim/experiment/run.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

SimConfig Paper(const char* pattern, int message_bytes) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {10, 10}, "detour-ud");
  c.traffic.pattern = pattern;
  c.traffic.message_bytes = message_bytes;
  c.traffic.injection = InjectionKind::kInterval;
  c.traffic.interval = 1;
  c.traffic.source_queue = 1;  // the paper's waiting sender: back to back, no queue
  c.measure.warmup_messages = 300;
  c.measure.measure_messages = 1200;
  return c;
}

void AddFaults(SimConfig* c) {
  for (auto [x, y] : {std::pair{2, 5}, {7, 4}, {4, 1}, {5, 8}}) {
    NodeRef r;
    r.form = NodeRef::Form::kCoords;
    r.coords = {x, y};
    r.text = "coords";
    c->faults.nodes.push_back(r);
  }
}

PointResult RunOk(const SimConfig& c) {
  Result<PointResult> r = RunPoint(c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : PointResult{};
}

TEST(DetourUdClaimsTest, ShorterTimeoutMoreRecovery) {
  for (const char* pattern : {"transpose", "uniform"}) {
    SimConfig c = Paper(pattern, 128);
    AddFaults(&c);
    double previous = 2;
    for (int64_t timeout : {64, 128, 256}) {
      c.routing.timeout_cycles = timeout;
      const double ratio = RunOk(c).recovery_ratio;
      EXPECT_LT(ratio, previous) << pattern << " timeout " << timeout;
      previous = ratio;
    }
  }
}

TEST(DetourUdClaimsTest, UniformAboveTransposeAndFaultsCost) {
  const double uniform = RunOk(Paper("uniform", 64)).bandwidth_mbytes_per_second;
  const double transpose = RunOk(Paper("transpose", 64)).bandwidth_mbytes_per_second;
  EXPECT_GT(uniform, 1.1 * transpose);  // 9936 vs 7696 MB/s at this commit
  SimConfig faulty = Paper("uniform", 64);
  AddFaults(&faulty);
  EXPECT_LT(RunOk(faulty).bandwidth_mbytes_per_second, uniform);
}

}  // namespace
}  // namespace ukai::sim
