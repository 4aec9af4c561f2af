#include "sim/experiment/run.h"

#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace ukai::sim {
namespace {

TEST(RunPointTest, UniformTorusGivesSaneFigures) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {10, 10});
  c.traffic.rate = 0.1;
  c.measure.warmup_messages = 1000;
  c.measure.measure_messages = 4000;
  auto r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->avg_hops, 5.05, 0.1);
  EXPECT_NEAR(r->accepted_flits_per_node_cycle, 0.1, 0.01);
  EXPECT_FALSE(r->saturated);
  EXPECT_EQ(r->messages_measured, 4000);
  EXPECT_GE(r->avg_latency_cycles, 6 * 5 + 5 + 16);
  EXPECT_DOUBLE_EQ(r->clock_mhz, 79.0);
}

}  // namespace
}  // namespace ukai::sim
