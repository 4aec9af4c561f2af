// `detour-nf` (routing/detour_nf.h): fault-free minimal Duato behaviour, which fault
// placements it can handle (every single fault; not every pair), the config error for the
// others, undeliverable (never a hang) after a timed fault it cannot handle, and delivery
// under load with faults.
#include "sim/routing/detour_nf.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"
#include "sim/topology/faults.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// Random placements (seeds 1..draws) of `nodes` faulty nodes and `channels` faulty
// channels on a k x k torus, and how many of them detour-nf cannot route.
struct Census {
  int placements = 0, unroutable = 0;
  std::vector<int> first_bad;  // faulty nodes of the first unroutable node-only placement
};

Census Count(int k, int nodes, int channels, int draws) {
  Census out;
  for (int seed = 1; seed <= draws; ++seed) {
    auto t = testing::MakeCube(TopologyKind::kTorus, {k, k});
    FaultConfig fc;
    fc.random_nodes = nodes;
    fc.random_channels = channels;
    Result<FaultPlan> plan = PlanFaults(*t, fc, static_cast<uint64_t>(seed));
    if (!plan.ok()) continue;
    plan->initial.ApplyTo(t.get());
    ++out.placements;
    if (!DetourNfRouting(*t, 4).Unroutable().empty() && out.unroutable++ == 0) {
      out.first_bad = plan->initial.FaultyNodes();
    }
  }
  return out;
}

// Every single node fault, exhaustively.
TEST(DetourNfTest, HandlesEverySingleFault) {
  for (int k : {4, 5, 6}) {
    for (int v = 0; v < k * k; ++v) {
      auto t = testing::MakeCube(TopologyKind::kTorus, {k, k});
      FaultState f(*t);
      f.SetNodeFaulty(v, true);
      f.ApplyTo(t.get());
      EXPECT_EQ(DetourNfRouting(*t, 4).Unroutable(), "") << k << " node " << v;
    }
  }
}

// Prints the census quoted in docs/simulator.md; checks its robust part.
TEST(DetourNfTest, Census) {
  for (int k : {6, 10}) {
    for (int nodes : {2, 3, 4}) {
      const Census c = Count(k, nodes, 0, 40);
      if (nodes == 4) {
        EXPECT_GT(c.unroutable, 0);
      }
      std::printf("detour-nf %dx%d torus, %d faulty nodes: %d of %d placements unroutable\n", k, k,
                  nodes, c.unroutable, c.placements);
    }
    const Census c = Count(k, 0, 2, 40);
    std::printf("detour-nf %dx%d torus, 2 faulty channels: %d of %d unroutable\n", k, k,
                c.unroutable, c.placements);
  }
}

TEST(DetourNfTest, FaultFreeIsMinimal) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "detour-nf");
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const auto& cube = static_cast<const KaryNCube&>((*made)->topology());
  for (int dst : {1, 7, 21, 35}) {
    EXPECT_EQ(testing::SendOne(**made, 0, dst, 4).hops, cube.Distance(0, dst));
  }
}

TEST(DetourNfTest, UnhandledPlacementIsAConfigError) {
  const Census two = Count(6, 4, 0, 40);
  ASSERT_FALSE(two.first_bad.empty());
  auto t = testing::MakeCube(TopologyKind::kTorus, {6, 6});
  std::string nodes;
  for (int v : two.first_bad)
    nodes += (nodes.empty() ? "" : ", ") + std::string("\"") + std::to_string(t->Coord(v, 0)) +
             "," + std::to_string(t->Coord(v, 1)) + "\"";
  const std::string toml =
      "routing.algorithm = \"detour-nf\"\n[network]\nk = 6\n[faults]\nnodes = [" + nodes + "]\n";
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(toml, "nf.toml", {});
  ASSERT_FALSE(r.ok()) << toml;
  EXPECT_NE(r.status().message().find("'detour-nf' cannot handle this fault placement"),
            std::string::npos)
      << r.status().message();
}

TEST(DetourNfTest, TimedUnhandledPlacementGivesUndeliverableNotAHang) {
  const Census two = Count(6, 4, 0, 40);
  ASSERT_FALSE(two.first_bad.empty());
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "detour-nf");
  c.traffic.rate = 0.2;
  for (int v : two.first_bad) {
    FaultEventSpec e;
    e.cycle = 1000;
    e.node.form = NodeRef::Form::kNumber;
    e.node.number = v;
    c.faults.events.push_back(e);
  }
  Result<std::unique_ptr<Network>> made = Network::Create(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  for (int i = 0; i < 20000; ++i) {
    net.Step();
    ASSERT_FALSE(net.Stalled(3000)) << "cycle " << net.now();
  }
  EXPECT_GT(net.messages_undeliverable(), 0);
}

TEST(DetourNfTest, DeliversWithFaultsUnderLoad) {
  int ran = 0;
  for (uint64_t seed = 1; ran < 4 && seed < 40; ++seed) {
    SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8}, "detour-nf");
    c.seed = seed;
    c.faults.random_nodes = 2;
    c.traffic.rate = 0.4;
    c.traffic.pattern = seed % 2 ? "uniform" : "transpose";
    c.measure.warmup_messages = 500;
    c.measure.measure_messages = 2000;
    c.measure.watchdog_cycles = 5000;
    Result<PointResult> r = RunPoint(c);
    if (!r.ok() && r.status().message().find("cannot handle") != std::string::npos) continue;
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->messages_measured, 2000);
    ++ran;
  }
  EXPECT_EQ(ran, 4);
}

}  // namespace
}  // namespace ukai::sim
