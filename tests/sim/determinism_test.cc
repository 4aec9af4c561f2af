// Same seed -> identical results; different seeds -> different samples.
#include <gtest/gtest.h>

#include "sim/experiment/run.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

bool SameFigures(const PointResult& a, const PointResult& b) {
  return a.offered_flits_per_node_cycle == b.offered_flits_per_node_cycle &&
         a.accepted_flits_per_node_cycle == b.accepted_flits_per_node_cycle &&
         a.avg_latency_cycles == b.avg_latency_cycles &&
         a.p50_latency_cycles == b.p50_latency_cycles &&
         a.p99_latency_cycles == b.p99_latency_cycles &&
         a.max_latency_cycles == b.max_latency_cycles &&
         a.avg_network_latency_cycles == b.avg_network_latency_cycles && a.avg_hops == b.avg_hops &&
         a.messages_measured == b.messages_measured && a.cycles == b.cycles &&
         a.saturated == b.saturated;
}

SimConfig Config(const char* routing, uint64_t seed) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, routing);
  c.traffic.rate = 0.4;
  c.measure.warmup_messages = 300;
  c.measure.measure_messages = 1500;
  c.seed = seed;
  return c;
}

TEST(DeterminismTest, SameSeedSameResults) {
  for (const char* routing : {"dor", "duato"}) {
    auto a = RunPoint(Config(routing, 7));
    auto b = RunPoint(Config(routing, 7));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(SameFigures(*a, *b)) << routing;
  }
}

TEST(DeterminismTest, DifferentSeedsDiffer) {
  for (const char* routing : {"dor", "duato"}) {
    auto a = RunPoint(Config(routing, 7));
    auto b = RunPoint(Config(routing, 8));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_FALSE(SameFigures(*a, *b)) << routing;
    EXPECT_NE(a->avg_latency_cycles, b->avg_latency_cycles);
  }
}

TEST(DeterminismTest, IntervalInjectionAndCyclesModeAreDeterministic) {
  SimConfig c = Config("duato", 3);
  c.traffic.injection = InjectionKind::kInterval;
  c.traffic.interval = 60;
  c.measure.mode = MeasureMode::kCycles;
  c.measure.warmup_cycles = 2000;
  c.measure.sample_cycles = 2000;
  auto a = RunPoint(c);
  auto b = RunPoint(c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(SameFigures(*a, *b));
  EXPECT_NEAR(a->offered_flits_per_node_cycle, 16.0 / 60.0, 1e-12);
  EXPECT_NEAR(a->accepted_flits_per_node_cycle, 16.0 / 60.0, 0.02);
  EXPECT_FALSE(a->saturated);
  c.seed = 4;
  auto d = RunPoint(c);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(SameFigures(*a, *d));
}

}  // namespace
}  // namespace ukai::sim
