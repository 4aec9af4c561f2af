// up*/down* (routing/updown.h) and the shortest-path "torus" table
// (routing/shortest_table.h): the paper's Fig. 2/3 example, legality and delivery of table
// routes on random fault sets, and `updown` runs with faults (static and timed).
#include "sim/routing/updown.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/experiment/run.h"
#include "sim/routing/shortest_table.h"
#include "sim/topology/faults.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// A port bitmap in the paper's N, E, W, S order (x = dimension 0 grows east, y = dimension
// 1 grows north): "0010" = west only.
std::string News(uint32_t ports) {
  const int order[4] = {2, 0, 1, 3};  // +y, +x, -x, -y
  std::string s;
  for (int p : order) s += ((ports >> p) & 1u) ? '1' : '0';
  return s;
}

// Fig. 2: the channel A-B is faulty; E is A's east neighbour. With E at (5,5): A (4,5),
// B (4,4) south of A, C (3,5) west of A, D (4,6) north of A, F (3,4) west of B, G (4,3)
// south of B, H (5,4) east of B (the message-M/L examples of Section 2.2 fix this layout).
// Fig. 4's root is C.
TEST(UpDownFig3Test, NodeETables) {
  auto t = testing::MakeCube(TopologyKind::kTorus, {10, 10});
  auto at = [&](int x, int y) { return t->NodeAt({x, y}); };
  const int A = at(4, 5), B = at(4, 4), C = at(3, 5), D = at(4, 6), E = at(5, 5), F = at(3, 4),
            G = at(4, 3);
  FaultState faults(*t);
  faults.SetChannelFaulty(A, B, true);
  faults.ApplyTo(t.get());
  ShortestPathTable torus;
  torus.Build(*t);
  UpDownTables ud;
  ud.Build(*t, C);
  struct Row {
    int dst;
    const char* torus;
    const char* updown;
  };
  // Fig. 3 as printed, except G's up/down entry (see below).
  const Row rows[] = {{A, "0010", "0010"}, {B, "0001", "0010"}, {C, "0010", "0010"},
                      {D, "1010", "0010"}, {E, "0000", "0000"}, {F, "0011", "0010"},
                      {G, "0001", "0010"}};
  for (const Row& r : rows) {
    EXPECT_EQ(News(torus.Ports(E, r.dst)), r.torus) << t->NodeName(r.dst);
    EXPECT_EQ(News(ud.Ports(E, r.dst, false)), r.updown) << t->NodeName(r.dst);
  }
  // The figure prints 0001 (south) as G's up/down entry. With root C, G's neighbours are B
  // and (3,3) at BFS level 2 and (5,3), (4,2) at level 4 (G is at level 3), so every legal
  // path into G enters from B or (3,3) by a down hop, and from E (level 2) a path south
  // starts down at H (level 3) and can never climb back: every legal E->G path starts
  // west (E-A-C-F-B-G, 5 hops). No layout consistent with Section 2.2's examples makes
  // south legal, so we read the figure's G entry as a misprint (docs/simulator.md).
  EXPECT_EQ(ud.level(G), 3);
  EXPECT_EQ(ud.level(at(3, 3)), 2);
  EXPECT_EQ(ud.level(at(5, 3)), 4);
  EXPECT_EQ(ud.level(at(4, 2)), 4);
  EXPECT_EQ(ud.Distance(E, G, false), 5);
  EXPECT_EQ(ud.Distance(E, B, false), 4);  // E-A-C-F-B (the paper's "via A up to C, F down")
}

// Walks from src to dst taking random table ports; checks each step legal (never up after
// down) and that the walk reaches dst in exactly Distance() hops.
void CheckWalk(const Topology& t, const UpDownTables& ud, int src, int dst, Rng& rng) {
  int v = src;
  bool down = false;
  const int expect = ud.Distance(src, dst, false);
  ASSERT_LT(expect, UpDownTables::kUnreachable) << src << "->" << dst;
  for (int hop = 0; hop < expect; ++hop) {
    const uint32_t ports = ud.Ports(v, dst, down);
    ASSERT_NE(ports, 0u) << "stuck at " << t.NodeName(v) << " for " << t.NodeName(dst);
    std::vector<int> choices;
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      if ((ports >> p) & 1u) choices.push_back(p);
    }
    const int p = choices[rng.Uniform(choices.size())];
    ASSERT_TRUE(t.ChannelAlive(v, p));
    const bool up = ud.IsUp(v, p);
    ASSERT_FALSE(down && up) << "up after down";
    down = down || !up;
    v = t.Neighbor(v, p).node;
  }
  EXPECT_EQ(v, dst);
}

TEST(UpDownTablesTest, TableRoutesAreLegalAndDeliverOnRandomFaults) {
  Rng rng(7);
  for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      auto t = testing::MakeCube(kind, {5, 4});
      FaultConfig fc;
      fc.random_nodes = static_cast<int>(seed % 3);
      fc.random_channels = static_cast<int>(seed % 4);
      Result<FaultPlan> plan = PlanFaults(*t, fc, seed);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      plan->initial.ApplyTo(t.get());
      UpDownTables ud;
      const int root = UpDownRoot(*t, static_cast<int>(seed % 20));
      ud.Build(*t, root);
      for (int s = 0; s < t->NumNodes(); ++s) {
        for (int d = 0; d < t->NumNodes(); ++d) {
          if (s == d || !t->NodeAlive(s) || !t->NodeAlive(d)) continue;
          CheckWalk(*t, ud, s, d, rng);
        }
      }
    }
  }
}

TEST(UpDownRoutingTest, DeliversEverythingWithFaultsUnderLoad) {
  for (uint64_t seed : {1, 2, 3}) {
    SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "updown");
    c.router.vcs = 2;
    c.traffic.rate = 0.3;  // past saturation: deadlock freedom under pressure
    c.measure.warmup_messages = 300;
    c.measure.measure_messages = 1500;
    c.measure.watchdog_cycles = 3000;
    c.seed = seed;
    c.faults.random_nodes = 2;
    c.faults.random_channels = 2;
    Result<PointResult> r = RunPoint(c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->messages_measured, 1500);
  }
}

TEST(UpDownRoutingTest, TimedFailureOfTheRootRebuildsTables) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {5, 5}, "updown");
  c.traffic.rate = 0.05;
  c.routing.root = 12;
  FaultEventSpec fail;
  fail.cycle = 2000;
  fail.node.form = NodeRef::Form::kNumber;
  fail.node.number = 12;
  c.faults.events = {fail};
  Result<std::unique_ptr<Network>> made = Network::Create(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  int64_t delivered_after = 0;
  for (int i = 0; i < 12000; ++i) {
    net.Step();
    ASSERT_FALSE(net.Stalled(3000));
    for (const Delivery& d : net.deliveries()) delivered_after += d.created > 2000;
  }
  EXPECT_GT(delivered_after, 500);
  EXPECT_TRUE(net.CheckInvariants().ok());
}

TEST(UpDownRoutingTest, ConfigErrors) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4}, "updown");
  c.routing.root = 16;
  Result<std::unique_ptr<Network>> made = Network::Create(c);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("routing.root: node 16 does not exist"),
            std::string::npos);
}

}  // namespace
}  // namespace ukai::sim
