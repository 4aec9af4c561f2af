// The deadlock watchdog: a test-only routing without dateline classes on a torus ring
// really deadlocks at high load, and RunPoint reports kDeadlock with the blocked channels.
#include <gtest/gtest.h>

#include <memory>

#include "sim/engine/network.h"
#include "sim/experiment/run.h"
#include "sim/routing/dimension_order.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// Always "+" around the ring on VC 0 only: a cyclic channel dependency.
class RingNoDateline final : public RoutingFunction {
 public:
  void Route(const RouteRequest&, RouteResult* out) const override { out->Add(0, 1u); }
};

TEST(WatchdogTest, CyclicRoutingDeadlocksAndIsReported) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6});
  c.router.vcs = 2;
  c.traffic.rate = 1.0;
  c.traffic.message_bytes = 4 * 40;  // 40 flits: longer than the 8-flit buffers
  c.measure.watchdog_cycles = 500;
  auto net = Network::Create(c, std::make_unique<RingNoDateline>());
  ASSERT_TRUE(net.ok());
  bool stalled = false;
  for (int i = 0; i < 20000 && !stalled; ++i) {
    (*net)->Step();
    ASSERT_TRUE((*net)->CheckInvariants().ok());
    stalled = (*net)->Stalled(c.measure.watchdog_cycles);
  }
  ASSERT_TRUE(stalled);
  const Status s = (*net)->DeadlockStatus(c.measure.watchdog_cycles);
  EXPECT_EQ(s.code(), StatusCode::kDeadlock);
  EXPECT_NE(s.message().find("measure.watchdog_cycles"), std::string::npos);
  EXPECT_NE(s.message().find("in-port -x vc 0"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("holds out-port +x vc 0 (credits 0)"), std::string::npos)
      << s.message();
}

TEST(WatchdogTest, CyclicRoutingWithLongLinksIsStillCaught) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6});
  c.router.vcs = 2;
  c.router.link_cycles = 200;
  c.traffic.rate = 1.0;
  c.traffic.message_bytes = 4 * 40;
  c.measure.watchdog_cycles = 100;
  auto net = Network::Create(c, std::make_unique<RingNoDateline>());
  ASSERT_TRUE(net.ok());
  EXPECT_EQ((*net)->PipelineCycles(), 200 + 5 + 5 + 1);
  bool stalled = false;
  int64_t cycle = 0;
  for (; cycle < 200000 && !stalled; ++cycle) {
    (*net)->Step();
    stalled = (*net)->Stalled(c.measure.watchdog_cycles);
  }
  ASSERT_TRUE(stalled);
  const Status s = (*net)->DeadlockStatus(c.measure.watchdog_cycles);
  EXPECT_EQ(s.code(), StatusCode::kDeadlock);
  EXPECT_NE(s.message().find("none moved for 311 cycles (measure.watchdog_cycles = 100 plus the "
                             "211-cycle link and hop pipeline)"),
            std::string::npos)
      << s.message();
}

// The false alarms: time a flit spends on a link or in the header pipeline is not
// a standstill. Each case ran into kDeadlock before the window included the pipeline.
// `tune` adjusts a 4x4 torus measuring `measure` messages; returns the messages measured.
int64_t MeasuredWithoutDeadlock(void (*tune)(SimConfig*), int64_t measure) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {4, 4});
  c.measure.warmup_messages = 0;
  c.measure.measure_messages = measure;
  tune(&c);
  Result<PointResult> r = RunPoint(c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->messages_measured : -1;
}

TEST(WatchdogTest, LinkLongerThanTheWatchdogIsNotADeadlock) {
  EXPECT_GT(MeasuredWithoutDeadlock(
                [](SimConfig* c) {
                  c->router.link_cycles = 25000;  // > measure.watchdog_cycles = 20000
                  c->traffic.rate = 0.05;
                },
                20),
            0);
}

TEST(WatchdogTest, OneCycleWatchdogIsNotADeadlock) {
  EXPECT_EQ(MeasuredWithoutDeadlock(
                [](SimConfig* c) {
                  // Lone one-flit messages: nothing moves while a head is in its hop pipeline.
                  c->traffic.rate = 0.01;
                  c->traffic.message_bytes = 4;
                  c->measure.watchdog_cycles = 1;
                },
                100),
            100);
}

TEST(WatchdogTest, MillionCycleHopIsNotADeadlock) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {4});
  c.router.hop_cycles = 1000000;
  auto net = Network::Create(c, {}, /*with_traffic=*/false);
  ASSERT_TRUE(net.ok());
  (*net)->CreateMessage(0, 1, 4);
  while ((*net)->deliveries().empty() && (*net)->now() < 3000000) {
    (*net)->Step();
    ASSERT_FALSE((*net)->Stalled(c.measure.watchdog_cycles)) << "at cycle " << (*net)->now();
  }
  ASSERT_EQ((*net)->deliveries().size(), 1u);
  EXPECT_EQ((*net)->deliveries()[0].delivered, 2 * 1000000 + 1 + 4);  // (H + 1) hop + link + L
}

TEST(WatchdogTest, DorWithDatelineDoesNotFire) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6});
  c.router.vcs = 2;
  c.traffic.rate = 1.0;
  c.traffic.message_bytes = 4 * 40;
  auto net = Network::Create(c);
  ASSERT_TRUE(net.ok());
  for (int i = 0; i < 20000; ++i) {
    (*net)->Step();
    ASSERT_FALSE((*net)->Stalled(500)) << "at cycle " << i;
  }
}

}  // namespace
}  // namespace ukai::sim
