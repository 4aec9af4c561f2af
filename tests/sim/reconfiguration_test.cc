// The reconfiguration protocol (engine/reconfiguration.h, engine/network_reconfig.cc):
// its timeline and root choice, and under load: every message between healthy nodes is
// delivered with the `recovering` policy (discards resent from the source), PEs pause in
// their window, `all` discards more, and the new root follows the policy.
#include "sim/engine/reconfiguration.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/rng.h"
#include "sim/topology/faults.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

NodeRef PlanNode(int n) { return testing::NodeNumber(n); }

TEST(ReconfigPlanTest, TimelineFollowsTheTree) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {4, 4});
  ReconfigConfig c;
  c.detect_cycles = 10;
  c.hop_cycles = 3;
  c.compute_cycles = 20;
  // The channel 5-6 fails at 1000; static root 0 (level 0): nominator 5 is 2 hops from it.
  const FaultState base(*t);
  ReconfigSite site;
  site.event.cycle = 1000;
  site.event.kind = FaultEventSpec::Kind::kFailChannel;
  site.event.node = 5;
  site.event.other = 6;
  site.ends = {5, 6};
  const ReconfigPlan p = PlanEpisode(t.get(), base, {site}, c, {0}, 0, 2);
  ASSERT_EQ(p.nominations.size(), 1u);
  EXPECT_EQ(p.nominations[0].detect, 1010);
  ASSERT_EQ(p.waves.size(), 1u);
  const int64_t root_start = 1010 + 3 * 2 * 2 + 3 * 2;
  EXPECT_EQ(p.waves[0].start, root_start);
  EXPECT_EQ(p.root, 0);
  EXPECT_EQ(p.regions, 1);
  EXPECT_EQ(p.cancelled, 0);
  EXPECT_EQ(p.recv[0], root_start);
  EXPECT_EQ(p.update[0], root_start + 20);
  const int far = t->NodeAt({3, 3});  // level 6
  EXPECT_EQ(p.recv[far], root_start + 6 * (20 + 3));
  EXPECT_EQ(p.update[far], p.recv[far] + 20);
  EXPECT_EQ(p.done, p.update[far] + 6 * 3);
  EXPECT_EQ(p.resume[far], p.done + 6 * 3);
  EXPECT_EQ(p.end, p.resume[far]);
}

TEST(ReconfigPlanTest, RootPolicies) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {4, 4});
  FaultState f(*t);
  f.SetNodeFaulty(0, true);
  f.ApplyTo(t.get());
  ReconfigConfig c;
  EXPECT_EQ(ChooseRoot(*t, c, {}, 6, {1, 4}), 6);         // static: keep the current root
  EXPECT_EQ(ChooseRoot(*t, c, {0, 9, 3}, 6, {1, 4}), 9);  // first healthy of the list
  EXPECT_EQ(ChooseRoot(*t, c, {}, 0, {1, 4}), -1);        // current root failed, no list
  c.root = ReconfigConfig::RootPolicy::kFaultRegion;
  EXPECT_EQ(ChooseRoot(*t, c, {9}, 6, {4, 1}), 1);  // the region's lowest-numbered node
}

struct Outcome {
  int64_t created = 0, delivered = 0, paused_starts = 0;
  std::unique_ptr<Network> net;
};

// Bursts between the nodes that never fail (node `victim` fails at 1500 and is repaired
// at 6000) with detour-ud, 2 VCs and a short timeout so that messages recover.
Outcome RunUnderLoad(ReconfigConfig::Discard discard, ReconfigConfig::RootPolicy root) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {5, 5}, "detour-ud");
  c.router.vcs = 2;
  c.routing.timeout_cycles = 16;
  c.faults.reconfig.discard = discard;
  c.faults.reconfig.root = root;
  const int victim = 12;
  FaultEventSpec fail, repair;
  fail.cycle = 1500;
  fail.node = PlanNode(victim);
  repair = fail;
  repair.cycle = 6000;
  repair.kind = FaultEventSpec::Kind::kRepairNode;
  c.faults.events = {fail, repair};
  Outcome out;
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return out;
  out.net = std::move(*made);
  Network& net = *out.net;
  Rng rng(5);
  while (net.now() < 40000 && (net.now() < 9000 || out.delivered < out.created)) {
    if (net.now() % 150 == 0 && net.now() < 9000) {
      for (int src = 0; src < 25; ++src) {
        if (src == victim) continue;
        int dst = src;
        while (dst == src || dst == victim) dst = static_cast<int>(rng.Uniform(25));
        net.CreateMessage(src, dst, 16);
        ++out.created;
      }
    }
    net.Step();
    EXPECT_FALSE(net.Stalled(5000)) << net.DeadlockStatus(5000).ToString();
    if (net.reconfiguring() || net.now() % 97 == 0) {  // purges keep the bookkeeping exact
      const Status st = net.CheckInvariants();
      EXPECT_TRUE(st.ok()) << st.ToString();
      if (!st.ok()) return out;
    }
    for (const Delivery& d : net.deliveries()) {
      ++out.delivered;
      const ReconfigPlan& p = net.reconfig_plan();
      if (!p.recv.empty() && p.recv[d.src] >= 0 && d.injected - 1 > p.recv[d.src] &&
          d.injected - 1 < p.resume[d.src] && d.injected - 1 > p.start) {
        ++out.paused_starts;
      }
    }
  }
  return out;
}

TEST(ReconfigurationTest, RecoveringPolicyDeliversEverythingUnderLoad) {
  Outcome o =
      RunUnderLoad(ReconfigConfig::Discard::kRecovering, ReconfigConfig::RootPolicy::kStatic);
  ASSERT_NE(o.net, nullptr);
  EXPECT_EQ(o.delivered, o.created);
  EXPECT_EQ(o.net->messages_undeliverable(), 0);
  EXPECT_EQ(o.net->reconfigurations(), 2);
  EXPECT_GT(o.net->reconfiguration_cycles(), 0);
  EXPECT_GT(o.net->messages_discarded(), 0);  // recovering messages were on the UD-VC
  EXPECT_EQ(o.net->messages_retransmitted(), o.net->messages_discarded());
  EXPECT_EQ(o.paused_starts, 0);          // no message started at a paused node
  EXPECT_EQ(o.net->routing().Root(), 0);  // static: the root (node 0) stayed
  EXPECT_TRUE(o.net->CheckInvariants().ok()) << o.net->CheckInvariants().ToString();
}

TEST(ReconfigurationTest, AllPolicyDiscardsMoreAndStillDelivers) {
  Outcome rec =
      RunUnderLoad(ReconfigConfig::Discard::kRecovering, ReconfigConfig::RootPolicy::kStatic);
  Outcome all = RunUnderLoad(ReconfigConfig::Discard::kAll, ReconfigConfig::RootPolicy::kStatic);
  ASSERT_NE(all.net, nullptr);
  EXPECT_EQ(all.delivered, all.created);
  EXPECT_GT(all.net->messages_discarded(), rec.net->messages_discarded());
}

TEST(ReconfigurationTest, FaultRegionRootAndRootFailure) {
  Outcome o =
      RunUnderLoad(ReconfigConfig::Discard::kRecovering, ReconfigConfig::RootPolicy::kFaultRegion);
  ASSERT_NE(o.net, nullptr);
  EXPECT_EQ(o.delivered, o.created);
  // After the repair of node 12 the region is 12's neighbours: the lowest is 7.
  EXPECT_EQ(o.net->routing().Root(), 7);
  // The root itself fails: a static priority list gives the next one.
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4}, "updown");
  c.faults.reconfig.root_priority = {PlanNode(0), PlanNode(10)};
  FaultEventSpec fail;
  fail.cycle = 100;
  fail.node = PlanNode(0);
  c.faults.events = {fail};
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  while ((*made)->now() < 5000) (*made)->Step();
  EXPECT_EQ((*made)->routing().Root(), 10);
  EXPECT_EQ((*made)->reconfigurations(), 1);
}

TEST(ReconfigurationTest, InstantModeUpdatesAtTheEvent) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4}, "updown");
  c.faults.reconfig.mode = ReconfigConfig::Mode::kInstant;
  FaultEventSpec fail;
  fail.cycle = 10;
  fail.node = PlanNode(0);
  c.faults.events = {fail};
  Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
  ASSERT_TRUE(made.ok());
  while ((*made)->now() < 12) (*made)->Step();
  EXPECT_EQ((*made)->routing().Root(), 1);
  EXPECT_EQ((*made)->reconfigurations(), 0);
}

}  // namespace
}  // namespace ukai::sim
