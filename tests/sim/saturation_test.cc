// Honest results (docs/simulator.md, "Measurement" and "Saturation rule"): the saturation
// verdict on both sides of the knee of a 10x10 torus with DOR, ties to "+" and split
// dateline classes (saturation throughput about 0.333 flits/node/cycle), no convergence on a
// growing latency, no latency figure when no message was measured, and `cycles` never past
// measure.max_cycles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/experiment/run.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

SimConfig Torus10(double rate) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {10, 10});
  c.traffic.rate = rate;
  // The DOR whose knee these tests straddle: ties to "+" and split dateline classes
  // (saturation about 0.333; the balanced defaults of routing.dor_tie / dor_dateline
  // saturate near 0.43).
  c.routing.dor_tie = DorTieRule::kPlus;
  c.routing.dor_dateline = DorDateline::kSplit;
  return c;
}

// Zero-load latency of the quickstart's 16-flit messages over 5.05 hops: 6.05 * 5 + 5.05 + 16.
constexpr double kZeroLoad = 51.3;

TEST(SaturationTest, BelowTheKneeWithNormalLatencyIsNotSaturated) {
  for (double rate : {0.30, 0.31, 0.32}) {
    for (uint64_t seed : {1, 2, 3}) {
      SimConfig c = Torus10(rate);
      c.seed = seed;
      Result<PointResult> r = RunPoint(c);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_LT(r->avg_latency_cycles, 3 * kZeroLoad) << rate;
      EXPECT_FALSE(r->saturated) << "rate " << rate << " seed " << seed << ": accepted "
                                 << r->accepted_flits_per_node_cycle << ", trend "
                                 << r->latency_trend;
    }
  }
}

TEST(SaturationTest, CyclesModeBelowTheKneeConvergesUnsaturated) {
  SimConfig c = Torus10(0.2);
  c.measure.mode = MeasureMode::kCycles;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->saturated);
  EXPECT_LT(r->cycles, c.measure.max_cycles);  // converged
  EXPECT_EQ(r->note, "");
  EXPECT_LT(std::abs(r->latency_trend), 0.05);
}

// Far past the knee in cycles mode, the latency grows every window: never "converged", and
// saturated (the point at 80x the zero-load latency was not).
TEST(SaturationTest, GrowingLatencyIsSaturatedAndNeverConverged) {
  SimConfig c = Torus10(0.6);
  c.measure.mode = MeasureMode::kCycles;
  c.measure.warmup_cycles = 2000;
  c.measure.sample_cycles = 2000;
  c.measure.max_cycles = 14000;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->avg_latency_cycles, 50 * kZeroLoad);
  EXPECT_GT(r->latency_trend, 0.2);
  EXPECT_TRUE(r->saturated);
  EXPECT_EQ(r->cycles, c.measure.max_cycles);
  EXPECT_THAT(r->note, HasSubstr("reached before the mean latency converged"));
  // A looser convergence does not make it converge either.
  c.measure.convergence = 0.5;
  r = RunPoint(c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cycles, c.measure.max_cycles);
  EXPECT_TRUE(r->saturated);
}

TEST(SaturationTest, PastTheKneeInMessagesModeIsSaturated) {
  Result<PointResult> r = RunPoint(Torus10(0.45));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->saturated);
  EXPECT_LT(r->accepted_flits_per_node_cycle, 0.9 * r->offered_flits_per_node_cycle);
}

// Reaching measure.max_cycles alone is not saturation: a sparse interval load capped early.
TEST(SaturationTest, CapAloneIsNotSaturationAndCyclesStopAtTheCap) {
  SimConfig c = Torus10(0.1);
  c.traffic.injection = InjectionKind::kInterval;
  c.traffic.interval = 1000;  // idle stretches: the clock skips to the next creation
  c.measure.warmup_messages = 0;
  c.measure.max_cycles = 2500;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->cycles, 2500);  // was max_cycles + 1 when an idle skip landed on the cap
  EXPECT_FALSE(r->saturated);
  EXPECT_GT(r->messages_measured, 0);
  EXPECT_THAT(r->note, HasSubstr("measure.max_cycles = 2500 reached after"));
  c.measure.mode = MeasureMode::kCycles;
  c.measure.warmup_cycles = 0;
  c.measure.sample_cycles = 700;
  r = RunPoint(c);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->cycles, 2500);
}

TEST(SaturationTest, NoMessageMeasuredSaysSo) {
  SimConfig c = Torus10(0.1);
  c.measure.max_cycles = 100;  // long before the 3000 warm-up deliveries
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->messages_measured, 0);
  EXPECT_EQ(r->cycles, 100);
  EXPECT_THAT(r->note, HasSubstr("no message was measured"));
}

}  // namespace
}  // namespace ukai::sim
