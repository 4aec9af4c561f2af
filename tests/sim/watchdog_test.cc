// The deadlock watchdog: a test-only routing without dateline classes on a torus ring
// really deadlocks at high load, and RunPoint reports kDeadlock with the blocked channels.
#include <gtest/gtest.h>

#include <memory>

#include "sim/engine/network.h"
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
