// `detour-ud` (routing/detour_ud.h): the fault region of Fig. 2, table-free minimal
// routing without faults, the table delay inside the region, deadlock recovery on the
// UD-VC (never back to the FA-VCs), and delivery with faults and 2 or 4 VCs.
#include "sim/routing/detour_ud.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "sim/experiment/run.h"
#include "sim/topology/faults.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

int Count(const std::vector<uint8_t>& v) {
  int n = 0;
  for (uint8_t x : v) n += x;
  return n;
}

TEST(DetourUdTest, FaultRegionOfFig2) {
  auto t = testing::MakeCube(TopologyKind::kTorus, {10, 10});
  const int A = t->NodeAt({4, 5}), B = t->NodeAt({4, 4});
  FaultState f(*t);
  f.SetChannelFaulty(A, B, true);
  f.ApplyTo(t.get());
  std::vector<uint8_t> d1 = FaultRegion(*t, 1);
  EXPECT_EQ(Count(d1), 2);
  EXPECT_TRUE(d1[A] && d1[B]);
  std::vector<uint8_t> d2 = FaultRegion(*t, 2);
  EXPECT_EQ(Count(d2), 8);  // A, B and C..H
  for (std::vector<int> c : {std::vector<int>{3, 5}, {4, 6}, {5, 5}, {3, 4}, {4, 3}, {5, 4}}) {
    EXPECT_TRUE(d2[t->NodeAt(c)]) << c[0] << "," << c[1];
  }
  EXPECT_EQ(Count(FaultRegion(*t, 3)), 18);
  // A faulty node: its 4 healthy neighbours are end nodes (distance 1).
  FaultState g(*t);
  g.SetNodeFaulty(t->NodeAt({0, 0}), true);
  auto u = testing::MakeCube(TopologyKind::kTorus, {10, 10});
  g.ApplyTo(u.get());
  EXPECT_EQ(Count(FaultRegion(*u, 1)), 4);
  EXPECT_EQ(Count(FaultRegion(*u, 2)), 4 + 8);
}

SimConfig Config(std::vector<int> k, int vcs) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, std::move(k), "detour-ud");
  c.router.vcs = vcs;
  return c;
}

TEST(DetourUdTest, FaultFreeIsMinimalAndTableFree) {
  SimConfig c = Config({6, 6}, 4);
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  const auto& cube = static_cast<const KaryNCube&>(net.topology());
  for (int dst : {1, 7, 21, 35}) {
    const Delivery d = testing::SendOne(net, 0, dst, 4);
    EXPECT_EQ(d.hops, cube.Distance(0, dst));
    // No table read: T0 = (H + 1) * hop + H * link + L (docs/simulator.md, "Timing").
    const int h = d.hops;
    EXPECT_EQ(d.delivered - d.created,
              (h + 1) * c.router.hop_cycles + h * c.router.link_cycles + 4);
  }
}

TEST(DetourUdTest, FaultRegionHopsPayTheTableDelay) {
  SimConfig c = Config({6, 6}, 4);
  c.faults.channels.resize(1);
  auto node = [](int64_t x, int64_t y) {
    NodeRef r;
    r.form = NodeRef::Form::kCoords;
    r.coords = {x, y};
    return r;
  };
  c.faults.channels[0].a = node(3, 0);
  c.faults.channels[0].b = node(3, 1);
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  const auto& cube = static_cast<const KaryNCube&>(net.topology());
  // (0,3) -> (2,3): far from the fault: no table read.
  Delivery d = testing::SendOne(net, cube.NodeAt({0, 3}), cube.NodeAt({2, 3}), 1);
  const int base = 3 * c.router.hop_cycles + 2 * c.router.link_cycles + 1;
  EXPECT_EQ(d.delivered - d.created, base);
  // (3,0) -> (3,1) across the faulty channel: a 3-hop detour, every router on it but the
  // destination's is in the region (distance 2) and reads the torus table.
  d = testing::SendOne(net, cube.NodeAt({3, 0}), cube.NodeAt({3, 1}), 1);
  EXPECT_EQ(d.hops, 3);
  EXPECT_EQ(d.delivered - d.created, 4 * c.router.hop_cycles + 3 * c.router.link_cycles + 1 +
                                         3 * c.router.table_lookup_cycles);
}

// Runs heavy uniform traffic and checks, from every head hop, that a message that took
// the UD-VC once never takes an FA-VC again. Returns the run's figures.
struct RecoveryRun {
  int64_t delivered = 0, recovered_msgs = 0, fa_after_ud = 0;
  bool stalled = false;
};

RecoveryRun RunHeavy(SimConfig c, int64_t cycles) {
  RecoveryRun out;
  Result<std::unique_ptr<Network>> made = Network::Create(c);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return out;
  Network& net = **made;
  const int ud = c.router.vcs - 1;
  const int pe = net.topology().PePort();
  std::map<int32_t, bool> on_ud;  // live message -> took the UD-VC
  net.SetHopObserver([&](const HopEvent& e) {
    if (e.out_port == pe) {
      out.recovered_msgs += on_ud[e.msg];
      on_ud.erase(e.msg);
      return;
    }
    if (e.out_vc == ud) {
      on_ud[e.msg] = true;
    } else if (on_ud[e.msg]) {
      ++out.fa_after_ud;
    }
  });
  for (int64_t i = 0; i < cycles; ++i) {
    net.Step();
    out.delivered += static_cast<int64_t>(net.deliveries().size());
    if (net.Stalled(2000)) {
      out.stalled = true;
      break;
    }
  }
  return out;
}

TEST(DetourUdTest, RecoveryBreaksDeadlocksWithTwoVcs) {
  SimConfig c = Config({6, 6}, 2);  // 1 FA-VC + 1 UD-VC
  c.traffic.rate = 0.6;
  c.traffic.message_bytes = 64;
  c.routing.timeout_cycles = 32;
  RecoveryRun r = RunHeavy(c, 30000);
  EXPECT_FALSE(r.stalled);
  EXPECT_GT(r.delivered, 3000);
  EXPECT_GT(r.recovered_msgs, 0);
  EXPECT_EQ(r.fa_after_ud, 0);
  // Control: without recovery (a timeout never reached) the same load deadlocks, so the
  // run above needed it.
  c.routing.timeout_cycles = int64_t{1} << 40;
  EXPECT_TRUE(RunHeavy(c, 30000).stalled);
}

TEST(DetourUdTest, DeliversWithFaultsAndFourVcs) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    SimConfig c = Config({8, 8}, 4);
    c.seed = seed;
    c.faults.random_nodes = 4;
    c.traffic.rate = 0.4;
    c.traffic.pattern = seed % 2 ? "uniform" : "transpose";
    c.measure.warmup_messages = 500;
    c.measure.measure_messages = 2000;
    c.measure.watchdog_cycles = 5000;
    Result<PointResult> r = RunPoint(c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->messages_measured, 2000);
  }
}

TEST(DetourUdTest, ConfigErrors) {
  SimConfig c = Config({4, 4}, 1);
  Result<std::unique_ptr<Network>> made = Network::Create(c);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("needs router.vcs >= 2"), std::string::npos);
}

}  // namespace
}  // namespace ukai::sim
