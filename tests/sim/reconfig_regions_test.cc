// Several fault regions synchronised through the root (engine/reconfiguration.h): regions,
// competing root candidates, the winner's reduction and single restart, events during an
// episode, delivery under load, and a property test that the final tables equal tables
// built from scratch for the final fault set.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/rng.h"
#include "sim/engine/network.h"
#include "sim/engine/reconfiguration.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"
#include "sim/routing/detour_ud.h"
#include "sim/routing/registry.h"
#include "sim/routing/updown.h"
#include "sim/topology/faults.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using Kind = FaultEventSpec::Kind;

NodeRef Number(int n) { return testing::NodeNumber(n); }

FaultEventSpec NodeEvent(Kind kind, int node, int64_t cycle) {
  FaultEventSpec e;
  e.kind = kind;
  e.cycle = cycle;
  e.node = Number(node);
  return e;
}

FaultEventSpec ChannelEvent(Kind kind, int a, int b, int64_t cycle) {
  FaultEventSpec e;
  e.kind = kind;
  e.cycle = cycle;
  e.channel.a = Number(a);
  e.channel.b = Number(b);
  return e;
}

ReconfigSite NodeSite(const Topology& t, int node, int64_t cycle) {
  ReconfigSite s;
  s.event.cycle = cycle;
  s.event.kind = Kind::kFailNode;
  s.event.node = node;
  for (int p = 0; p < t.NumNetworkPorts(); ++p) s.ends.push_back(t.Neighbor(node, p).node);
  return s;
}

// Two node failures at the same cycle, 8 hops apart on an 8x8 torus (nodes 9 = (1,1) and
// 45 = (5,5)), with fault-region roots: candidates 1 and 37, node 1 has the priority.
class TwoRegionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.root = ReconfigConfig::RootPolicy::kFaultRegion;
    sites_ = {NodeSite(*t_, 9, 1000), NodeSite(*t_, 45, 1000)};
    plan_ = PlanEpisode(t_.get(), base_, sites_, c_, {}, 0, 2);
  }
  std::unique_ptr<KaryNCube> t_ = testing::MakeCube(TopologyKind::kTorus, {8, 8});
  FaultState base_{*t_};
  ReconfigConfig c_;
  std::vector<ReconfigSite> sites_;
  ReconfigPlan plan_;
};

TEST_F(TwoRegionsTest, OneWinningRootForTwoRegions) {
  EXPECT_EQ(plan_.regions, 2);
  ASSERT_EQ(plan_.nominations.size(), 2u);
  EXPECT_EQ(plan_.nominations[0].root, 1);
  EXPECT_EQ(plan_.nominations[1].root, 37);
  EXPECT_NE(plan_.nominations[0].region, plan_.nominations[1].region);
  EXPECT_EQ(plan_.root, 1);
  EXPECT_EQ(plan_.cancelled, 1);
  const ReconfigWave& fin = plan_.waves[plan_.final_wave];
  EXPECT_EQ(fin.root, 1);
  EXPECT_EQ(fin.sites, (std::vector<int>{0, 1}));  // the winner learnt the loser's fault
  EXPECT_GE(fin.version, 2);  // its first wave knew only its own region's fault
  // The static policy nominates the current root for both regions: nothing to cancel.
  ReconfigConfig st = c_;
  st.root = ReconfigConfig::RootPolicy::kStatic;
  const ReconfigPlan s = PlanEpisode(t_.get(), base_, sites_, st, {}, 0, 2);
  EXPECT_EQ(s.regions, 2);
  EXPECT_EQ(s.root, 0);
  EXPECT_EQ(s.cancelled, 0);
}

TEST_F(TwoRegionsTest, UpdatesBeforeTheSingleRestart) {
  const ReconfigWave& fin = plan_.waves[plan_.final_wave];
  int64_t last_update = 0;
  for (int v = 0; v < t_->NumNodes(); ++v) {
    if (v == 9 || v == 45) {
      EXPECT_EQ(plan_.update[v], -1);
      continue;
    }
    ASSERT_GE(plan_.update[v], 0) << v;
    EXPECT_TRUE(fin.adopted[v]) << v;
    EXPECT_EQ(plan_.update[v], fin.arrive[v] + c_.compute_cycles);
    EXPECT_LE(plan_.update[v] + fin.level[v] * c_.hop_cycles, plan_.done) << v;  // reduction
    EXPECT_EQ(plan_.resume[v], plan_.done + fin.level[v] * c_.hop_cycles);
    EXPECT_LE(plan_.recv[v], fin.arrive[v]);
    last_update = std::max(last_update, plan_.update[v]);
  }
  EXPECT_LT(last_update, plan_.done);  // the restart follows the last update
  int kFinishes = 0;
  for (const ReconfigAction& a : plan_.actions) {
    kFinishes += a.kind == ReconfigAction::Kind::kFinish;
    if (a.kind == ReconfigAction::Kind::kCommit) {
      EXPECT_LE(a.cycle, plan_.done);
    }
  }
  EXPECT_EQ(kFinishes, 1);  // one restart
}

TEST_F(TwoRegionsTest, TheLosersBroadcastIsSuperseded) {
  int loser_waves = 0, loser_nodes = 0, truncated = 0;
  const ReconfigWave& fin = plan_.waves[plan_.final_wave];
  for (const ReconfigWave& w : plan_.waves) {
    if (w.root != 37) continue;
    ++loser_waves;
    for (int v = 0; v < t_->NumNodes(); ++v) {
      if (w.arrive[v] >= 0 && !w.adopted[v]) ++truncated;  // stopped by the winner's
      if (!w.adopted[v]) continue;
      ++loser_nodes;
      EXPECT_GT(fin.arrive[v], w.arrive[v]) << v;  // the winner's replaces it later
    }
  }
  EXPECT_EQ(loser_waves, 1);
  EXPECT_GT(loser_nodes, 0);       // it started and spread ...
  EXPECT_LT(loser_nodes, 64 - 2);  // ... but not everywhere
  EXPECT_GT(truncated, 0);
}

// Runs a traffic-free network with `events` until every episode has ended.
std::unique_ptr<Network> RunEvents(const char* routing, std::vector<int> k,
                                   std::vector<FaultEventSpec> events,
                                   ReconfigConfig::RootPolicy root) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, std::move(k), routing);
  c.faults.reconfig.root = root;
  c.faults.events = std::move(events);
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  if (!made.ok()) return nullptr;
  Network& net = **made;
  const int64_t last = c.faults.events.empty() ? 0 : c.faults.events.back().cycle;
  while (net.now() <= last || net.reconfiguring()) net.Step();
  return std::move(*made);
}

TEST(ReconfigRegionsNetworkTest, StatisticsAndRoot) {
  auto net = RunEvents("updown", {8, 8},
                       {NodeEvent(Kind::kFailNode, 9, 1000), NodeEvent(Kind::kFailNode, 45, 1000)},
                       ReconfigConfig::RootPolicy::kFaultRegion);
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->reconfigurations(), 1);
  EXPECT_EQ(net->reconfiguration_regions(), 2);
  EXPECT_EQ(net->cancelled_root_candidates(), 1);
  EXPECT_EQ(net->routing().Root(), 1);
}

TEST(ReconfigRegionsNetworkTest, SecondFaultDuringAReconfiguration) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8}, "updown");
  c.faults.reconfig.root = ReconfigConfig::RootPolicy::kFaultRegion;
  c.faults.events = {NodeEvent(Kind::kFailNode, 45, 1000), NodeEvent(Kind::kFailNode, 9, 1300),
                     NodeEvent(Kind::kFailNode, 27, 30000)};
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  while (net.now() < 1300) net.Step();
  ASSERT_TRUE(net.reconfiguring());
  const ReconfigPlan before = net.reconfig_plan();
  EXPECT_EQ(before.root, 37);  // alone, 45's region wins
  net.Step();                  // cycle 1300: node 9 fails while the first one runs
  const ReconfigPlan& after = net.reconfig_plan();
  EXPECT_EQ(after.nominations.size(), 2u);
  EXPECT_EQ(after.root, 1);  // 9's candidate has the priority: 37 is cancelled
  EXPECT_EQ(after.cancelled, 1);
  EXPECT_GT(after.done, before.done);
  // Causal re-planning: what happened before cycle 1300 is unchanged.
  size_t past = 0;
  while (past < before.actions.size() && before.actions[past].cycle < 1300) ++past;
  ASSERT_GE(after.actions.size(), past);
  for (size_t i = 0; i < past; ++i) {
    EXPECT_EQ(after.actions[i].cycle, before.actions[i].cycle) << i;
    EXPECT_EQ(after.actions[i].kind, before.actions[i].kind) << i;
    EXPECT_EQ(after.actions[i].node, before.actions[i].node) << i;
  }
  while (net.now() < 29000) net.Step();
  EXPECT_FALSE(net.reconfiguring());
  EXPECT_EQ(net.reconfigurations(), 1);  // one episode for both faults
  EXPECT_EQ(net.reconfiguration_regions(), 2);
  // A fault after the restart starts a new reconfiguration.
  while (net.now() <= 30000 || net.reconfiguring()) net.Step();
  EXPECT_EQ(net.reconfigurations(), 2);
  EXPECT_EQ(net.reconfiguration_regions(), 3);
}

// Under load: two simultaneous distant faults, a third one during the reconfiguration and
// a repair later; with `recovering` every message between nodes that never fail arrives.
TEST(ReconfigRegionsNetworkTest, RecoveringDeliversEverythingUnderLoad) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8}, "detour-ud");
  c.router.vcs = 2;
  c.routing.timeout_cycles = 16;
  c.faults.reconfig.root = ReconfigConfig::RootPolicy::kFaultRegion;
  const std::vector<int> victims = {9, 45, 25};
  c.faults.events = {NodeEvent(Kind::kFailNode, 9, 1500), NodeEvent(Kind::kFailNode, 45, 1500),
                     NodeEvent(Kind::kFailNode, 25, 1560), NodeEvent(Kind::kRepairNode, 9, 6000)};
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Network& net = **made;
  auto victim = [&](int v) {
    return std::find(victims.begin(), victims.end(), v) != victims.end();
  };
  Rng rng(11);
  int64_t created = 0, delivered = 0, paused_starts = 0;
  while (net.now() < 60000 && (net.now() < 9000 || delivered < created)) {
    if (net.now() % 100 == 0 && net.now() < 9000) {
      for (int src = 0; src < 64; ++src) {
        if (victim(src)) continue;
        int dst = src;
        while (dst == src || victim(dst)) dst = static_cast<int>(rng.Uniform(64));
        net.CreateMessage(src, dst, 16);
        ++created;
      }
    }
    net.Step();
    ASSERT_FALSE(net.Stalled(5000)) << net.DeadlockStatus(5000).ToString();
    for (const Delivery& d : net.deliveries()) {
      ++delivered;
      const ReconfigPlan& p = net.reconfig_plan();
      const int64_t start = d.injected - 1;
      if (!p.recv.empty() && p.recv[d.src] >= 0 && start > p.recv[d.src] && start < p.resume[d.src])
        ++paused_starts;
    }
  }
  EXPECT_EQ(delivered, created);
  EXPECT_EQ(net.messages_undeliverable(), 0);
  EXPECT_GT(net.messages_discarded(), 0);
  EXPECT_EQ(net.messages_retransmitted(), net.messages_discarded());
  EXPECT_EQ(paused_starts, 0);
  EXPECT_EQ(net.reconfigurations(), 2);
  EXPECT_EQ(net.reconfiguration_regions(), 3);  // {9, 25} and {45}, then the repair of 9
  EXPECT_EQ(net.cancelled_root_candidates(), 2);
  const Status st = net.CheckInvariants();
  EXPECT_TRUE(st.ok()) << st.ToString();
}

// The result fields of a point: experiments/reconfig/ud_load.toml (two simultaneous faults
// in two regions, a third during the reconfiguration, a repair) under uniform traffic.
TEST(ReconfigRegionsNetworkTest, PointResultFields) {
  Result<std::vector<SimConfig>> configs =
      LoadSimConfigs(std::string(UKAI_SOURCE_DIR) + "/experiments/reconfig/ud_load.toml",
                     {"traffic.pattern=uniform", "traffic.rate=0.3"});
  ASSERT_TRUE(configs.ok()) << configs.status().ToString();
  ASSERT_EQ(configs->size(), 1u);
  Result<PointResult> r = RunPoint(configs->front());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->reconfigurations, 2);
  EXPECT_EQ(r->reconfiguration_regions, 3);
  EXPECT_EQ(r->cancelled_root_candidates, 2);  // nodes 42 and 67 lose to node 12
  EXPECT_GT(r->reconfiguration_cycles, 0);
}

// The tables a routing builds from scratch for `faults` with up*/down* root `root`, compared
// with `got`'s current tables (updown or detour-ud).
void ExpectSameTables(const RoutingFunction& got, const SimConfig& config, const FaultState& faults,
                      int root, const std::string& what) {
  auto t = testing::MakeCube(config.network.topology, config.network.k);
  faults.ApplyTo(t.get());
  SimConfig c = config;
  c.faults = FaultConfig{};
  c.routing.root = root;
  Result<std::unique_ptr<RoutingFunction>> made = MakeRouting(*t, c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const UpDownTables* want_ud = nullptr;
  const UpDownTables* got_ud = nullptr;
  if (const auto* d = dynamic_cast<const DetourUdRouting*>(made->get())) {
    const auto& g = dynamic_cast<const DetourUdRouting&>(got);
    want_ud = &d->updown();
    got_ud = &g.updown();
    for (int v = 0; v < t->NumNodes(); ++v) {
      ASSERT_EQ(d->InRegion(v), g.InRegion(v)) << what << " region node " << v;
      for (int w = 0; w < t->NumNodes(); ++w) {
        ASSERT_EQ(d->torus_table().Ports(v, w), g.torus_table().Ports(v, w)) << what;
      }
    }
  } else {
    want_ud = &dynamic_cast<const UpDownRouting&>(**made).tables();
    got_ud = &dynamic_cast<const UpDownRouting&>(got).tables();
  }
  ASSERT_EQ(want_ud->root(), got_ud->root()) << what;
  for (int v = 0; v < t->NumNodes(); ++v) {
    for (int w = 0; w < t->NumNodes(); ++w) {
      for (bool down : {false, true}) {
        ASSERT_EQ(want_ud->Ports(v, w, down), got_ud->Ports(v, w, down))
            << what << " " << v << "->" << w;
      }
    }
  }
}

// Random events: failures of nodes and channels, and repairs of earlier failures, at
// cycles that often coincide or fall into a running reconfiguration.
std::vector<FaultEventSpec> RandomEvents(const Topology& t, Rng& rng) {
  std::vector<FaultEventSpec> events;
  std::vector<FaultEventSpec> failed;
  int64_t cycle = 100;
  const int count = 2 + static_cast<int>(rng.Uniform(4));
  for (int i = 0; i < count; ++i) {
    const int64_t gap = static_cast<int64_t>(rng.Uniform(5));
    cycle += gap == 4 ? 4000 : gap * 250;  // 0: simultaneous, 4000: after the restart
    if (!failed.empty() && rng.Uniform(4) == 0) {
      FaultEventSpec r = failed.back();
      failed.pop_back();
      r.kind = r.kind == Kind::kFailNode ? Kind::kRepairNode : Kind::kRepairChannel;
      r.cycle = cycle;
      events.push_back(r);
      continue;
    }
    const int v = static_cast<int>(rng.Uniform(static_cast<uint64_t>(t.NumNodes())));
    if (rng.Uniform(2) == 0) {
      events.push_back(NodeEvent(Kind::kFailNode, v, cycle));
    } else {
      const int p = static_cast<int>(rng.Uniform(static_cast<uint64_t>(t.NumNetworkPorts())));
      const PortRef far = t.Neighbor(v, p);
      if (!far.valid()) continue;
      events.push_back(ChannelEvent(Kind::kFailChannel, v, far.node, cycle));
    }
    failed.push_back(events.back());
  }
  return events;
}

TEST(ReconfigRegionsPropertyTest, FinalTablesEqualTablesFromScratch) {
  Rng rng(2026);
  int checked = 0, several = 0;
  for (int trial = 0; trial < 60 && checked < 24; ++trial) {
    const bool torus = trial % 2 == 0;
    const std::vector<int> k = trial % 3 == 0   ? std::vector<int>{5, 5}
                               : trial % 3 == 1 ? std::vector<int>{8, 8}
                                                : std::vector<int>{4, 6};
    const char* routing = trial % 4 < 2 ? "updown" : "detour-ud";
    const auto policy = trial % 5 < 3 ? ReconfigConfig::RootPolicy::kFaultRegion
                                      : ReconfigConfig::RootPolicy::kStatic;
    auto shape = testing::MakeCube(torus ? TopologyKind::kTorus : TopologyKind::kMesh, k);
    SimConfig c =
        testing::SmallConfig(torus ? TopologyKind::kTorus : TopologyKind::kMesh, k, routing);
    c.faults.reconfig.root = policy;
    c.routing.fault_region_distance = 1 + trial % 2;
    c.faults.events = RandomEvents(*shape, rng);
    Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
    if (!made.ok()) continue;  // a draw that disconnects the network
    Network& net = **made;
    const int64_t last = c.faults.events.back().cycle;
    while ((net.now() <= last || net.reconfiguring()) && net.now() < 1000000) net.Step();
    ASSERT_FALSE(net.reconfiguring());
    const ReconfigPlan& p = net.reconfig_plan();
    ASSERT_GE(p.final_wave, 0);
    std::vector<int> all;  // every site of the last episode
    for (const ReconfigNomination& nom : p.nominations) {
      all.insert(all.end(), nom.sites.begin(), nom.sites.end());
    }
    std::sort(all.begin(), all.end());
    const std::string what = "trial " + std::to_string(trial);
    EXPECT_EQ(p.waves[p.final_wave].sites, all) << what;
    ExpectSameTables(net.routing(), c, net.faults(), net.routing().Root(), what);
    ++checked;
    several += net.reconfiguration_regions() > net.reconfigurations();
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(several, 3);  // some episodes had several regions
}

}  // namespace
}  // namespace ukai::sim
