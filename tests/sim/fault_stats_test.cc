// The fault-tolerance figures of PointResult (experiment/point_result.h): recovery and
// table ratios, misrouted hops, undeliverable / not generated messages, MB/s.
#include <gtest/gtest.h>

#include "sim/experiment/run.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

SimConfig Base(const char* routing) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, routing);
  c.measure.warmup_messages = 300;
  c.measure.measure_messages = 1500;
  c.measure.watchdog_cycles = 5000;
  return c;
}

TEST(FaultStatsTest, FaultFreeLightLoadHasNoRecoveryTableOrMisrouting) {
  SimConfig c = Base("detour-ud");
  c.traffic.rate = 0.05;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->recovered_messages, 0);
  EXPECT_EQ(r->table_messages, 0);
  EXPECT_EQ(r->misrouted_hops, 0);
  EXPECT_EQ(r->undeliverable_messages, 0);
  EXPECT_EQ(r->not_generated_messages, 0);
  EXPECT_EQ(r->retransmitted_messages, 0);
  EXPECT_DOUBLE_EQ(r->clock_mhz, 48.0);
  // MB/s = bytes/node/s x nodes / 10^6.
  EXPECT_NEAR(r->bandwidth_mbytes_per_second, r->accepted_bytes_per_second * 36 / 1e6, 1e-9);
  EXPECT_NEAR(r->bandwidth_mbytes_per_second, r->accepted_flits_per_node_cycle * 36 * 4 * 48.0,
              1e-6);
}

// Messages to or from a faulty node are not generated, so they are not offered either: at
// a light load the accepted throughput matches the offered one and the point is not
// saturated (before, offered counted them and the point was flagged saturated).
TEST(FaultStatsTest, NotGeneratedMessagesAreNotOffered) {
  SimConfig c = Base("detour-ud");
  c.traffic.rate = 0.1;
  c.faults.random_nodes = 2;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->not_generated_messages, 0);
  EXPECT_LT(r->offered_flits_per_node_cycle, 0.1 * 0.95);  // about (34/36)^2 of 0.1
  EXPECT_NEAR(r->accepted_flits_per_node_cycle, r->offered_flits_per_node_cycle,
              0.08 * r->offered_flits_per_node_cycle);
  EXPECT_FALSE(r->saturated) << r->note;
}

TEST(FaultStatsTest, FaultsAndRecoveryAreCounted) {
  SimConfig c = Base("detour-ud");
  c.router.vcs = 2;
  c.traffic.rate = 0.6;
  c.routing.timeout_cycles = 16;
  c.faults.random_nodes = 2;
  c.router.clock_mhz = 100;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->recovered_messages, 0);
  EXPECT_NEAR(r->recovery_ratio, static_cast<double>(r->recovered_messages) / 1500, 1e-12);
  EXPECT_GT(r->table_messages, 0);
  EXPECT_GT(r->table_ratio, 0);
  EXPECT_LE(r->table_ratio, 1);
  EXPECT_GT(r->misrouted_hops, 0);  // detours round the faults and up*/down* recoveries
  EXPECT_NEAR(r->avg_misrouted_hops, static_cast<double>(r->misrouted_hops) / 1500, 1e-12);
  EXPECT_GT(r->not_generated_messages, 0);  // uniform traffic drew the faulty nodes
  EXPECT_DOUBLE_EQ(r->clock_mhz, 100.0);
  EXPECT_NEAR(r->bandwidth_mbytes_per_second, r->accepted_flits_per_node_cycle * 36 * 4 * 100.0,
              1e-6);
}

TEST(FaultStatsTest, UndeliverableMessagesAreReported) {
  SimConfig c = Base("updown");
  c.traffic.rate = 0.2;
  FaultEventSpec fail;
  fail.cycle = 500;
  fail.node.form = NodeRef::Form::kNumber;
  fail.node.number = 14;
  c.faults.events = {fail};
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->undeliverable_messages, 0);  // queued at 14 or in flight to it at cycle 500
  EXPECT_GT(r->not_generated_messages, 0);
}

}  // namespace
}  // namespace ukai::sim
