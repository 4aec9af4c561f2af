// A gateway point's result (nic/run_gateway.h): the internal traffic's latency, hops and
// bandwidth are filled; `saturated` follows the gateway saturation rule and its note says
// why; a timed fault after the end of the run is noted, not ignored. And the synthetic
// saturation rule does not count undeliverable messages as a shortfall.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gateway_test_util.h"
#include "sim/experiment/run.h"

namespace ukai::sim {
namespace {

using testing::Group24;
using ::testing::HasSubstr;
using testing::Name;
using testing::NodeEvent;

// group24 with internal uniform traffic of 256-byte messages beside 1000-byte frames.
SimConfig Loaded(int nics, int64_t frames, double rate) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.nic.internal_traffic = true;
  c.traffic.rate = 0.02;
  c.traffic.message_bytes = 256;
  c.nic.enabled =
      nics == 1 ? std::vector<std::string>{"3G0"} : std::vector<std::string>{"3G0", "3G1"};
  c.nic.frames = frames;
  c.nic.ingress_rate = rate;
  c.nic.ingress_frame_bytes = 1000;
  c.router.vcs = 6;
  c.router.vc_buffer_flits = 64;
  return c;
}

TEST(GatewayPointTest, InternalTrafficFiguresAreFilled) {
  Result<PointResult> r = RunPoint(Loaded(2, 200, 0.002));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->messages_measured, 1000);
  EXPECT_GT(r->avg_network_latency_cycles, 0);
  EXPECT_LE(r->avg_network_latency_cycles, r->avg_latency_cycles);
  EXPECT_GT(r->avg_hops, 1);  // uniform traffic on the group topology (diameter 4)
  EXPECT_LT(r->avg_hops, 4);
  // Delivered payload: messages x 256 bytes over the run, at the routing's 79 MHz.
  EXPECT_EQ(r->clock_mhz, 79);
  const double expected = static_cast<double>(r->messages_measured) * 256 /
                          static_cast<double>(r->cycles) * r->clock_mhz;
  EXPECT_NEAR(r->bandwidth_mbytes_per_second, expected, 1e-9 * expected);
  EXPECT_FALSE(r->saturated) << r->note;
  EXPECT_EQ(r->note, "");
}

TEST(GatewayPointTest, SaturatedWhenTheNicsFallBehindAndTheNoteSaysWhy) {
  Result<PointResult> r = RunPoint(Loaded(1, 600, 0.02));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->saturated);
  EXPECT_THAT(r->note, HasSubstr("saturated: when the last of the 600 ingress frames arrived"));
  EXPECT_THAT(r->note, HasSubstr("were still waiting to be settled"));
  EXPECT_EQ(r->gateway.frames_delivered, 600);  // every frame arrives in the end

  SimConfig capped = Loaded(1, 600, 0.02);
  capped.measure.max_cycles = 5000;
  r = RunPoint(capped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->saturated);
  EXPECT_THAT(r->note, HasSubstr("saturated: measure.max_cycles = 5000 reached with"));
}

TEST(GatewayPointTest, AFaultAfterTheEndOfTheRunIsNoted) {
  SimConfig c = Loaded(2, 50, 0.002);
  c.faults.events = {NodeEvent(900000000, FaultEventSpec::Kind::kFailNode, "4G1")};
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(r->note, HasSubstr("faults.events: 1 timed event after the end of the run did "
                                 "not happen (the first at cycle 900000000; the run ended at "
                                 "cycle " +
                                 std::to_string(r->cycles) + ")"));
  // The same for a synthetic point.
  SimConfig s;
  s.network.topology = TopologyKind::kTorus;
  s.network.k = {4, 4};
  s.routing.algorithm = "updown";
  s.measure.warmup_messages = 100;
  s.measure.measure_messages = 200;
  s.traffic.rate = 0.05;
  s.faults.events = c.faults.events;
  s.faults.events[0].node = Name("2,2");
  r = RunPoint(s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(r->note, HasSubstr("faults.events: 1 timed event after the end of the run"));
}

// dor-detour without the NIC model: messages without a detour whose path crosses the
// faulty node are undeliverable (counted); that is no shortfall of the network.
TEST(GatewayPointTest, UndeliverableMessagesAreNoSaturation) {
  SimConfig c = Loaded(2, 0, 0.002);
  c.traffic.rate = 0.01;
  c.faults.nodes = {Name("4G1")};
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->undeliverable_messages, 100);
  EXPECT_FALSE(r->saturated) << r->note;
}

}  // namespace
}  // namespace ukai::sim
