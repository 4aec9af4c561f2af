// The group topology (names, wiring, distances), dimension-order routing on it (exact
// paths, in-order delivery) and `dor-detour` via-node detours round faulty nodes (both
// switching variants, undeliverable without a detour, no deadlock under load).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/routing/detour.h"
#include "sim/routing/dor_planner.h"
#include "sim/topology/faults.h"
#include "sim/topology/group.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<GroupTopology> Group(int g, int s) {
  return std::move(GroupTopology::Create(g, s).value());
}

NodeRef Name(const std::string& name) {
  NodeRef r;
  r.form = NodeRef::Form::kName;
  r.name = name;
  r.text = "\"" + name + "\"";
  r.where = "at test";
  return r;
}

SimConfig GroupConfig(const char* routing = "dor", int groups = 6, int size = 4) {
  SimConfig c;
  c.network.topology = TopologyKind::kGroup;
  c.network.groups = groups;
  c.network.group_size = size;
  c.routing.algorithm = routing;
  return c;
}

int NodeOf(const Topology& t, const std::string& name) { return t.ParseNode(Name(name)).value(); }

TEST(GroupTopologyTest, NamesAndLinearIndex) {
  auto t = Group(6, 4);
  EXPECT_EQ(t->NumNodes(), 24);
  EXPECT_EQ(NodeOf(*t, "1G0"), 0);
  EXPECT_EQ(NodeOf(*t, "3G2"), 10);  // (3-1)*4 + 2
  EXPECT_EQ(NodeOf(*t, "6G3"), 23);
  for (int n = 0; n < 24; ++n) EXPECT_EQ(NodeOf(*t, t->NodeName(n)), n);
  EXPECT_EQ(t->NodeName(13), "4G1");
  for (const char* bad : {"7G0", "0G1", "3G4", "3X2", "G2", "3G", "3G2x", "-1G0"}) {
    Result<int> r = t->ParseNode(Name(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr(bad));
    EXPECT_THAT(r.status().message(), HasSubstr("at test"));
  }
  NodeRef coords;
  coords.form = NodeRef::Form::kCoords;
  coords.coords = {3, 2};
  EXPECT_EQ(t->ParseNode(coords).value(), 10);
}

TEST(GroupTopologyTest, WiringIsSymmetricWithPatentCounts) {
  for (auto [g, s] : {std::pair{6, 4}, std::pair{2, 3}, std::pair{1, 4}, std::pair{5, 1}}) {
    auto t = Group(g, s);
    int channels = 0;
    for (int a = 0; a < t->NumNodes(); ++a) {
      for (int p = 0; p < t->NumNetworkPorts(); ++p) {
        const PortRef far = t->Neighbor(a, p);
        if (!far.valid()) continue;
        ++channels;
        const PortRef back = t->Neighbor(far.node, far.port);
        EXPECT_EQ(back.node, a);
        EXPECT_EQ(back.port, p);
        const bool same_group = t->Group(a) == t->Group(far.node);
        EXPECT_EQ(same_group, p < s - 1) << t->Describe() << " " << a << " port " << p;
        if (!same_group) {
          EXPECT_EQ(t->Member(a), t->Member(far.node));
        }
      }
    }
    if (g == 6 && s == 4) {
      EXPECT_EQ(channels / 2, 60);  // 6 x 6 intra + 4 rings of 6 (claims item 13)
      int diameter = 0;
      for (int a = 0; a < 24; ++a)
        for (int b = 0; b < 24; ++b) diameter = std::max(diameter, t->Distance(a, b));
      EXPECT_EQ(diameter, 4);  // 1 + 3
    }
  }
  EXPECT_FALSE(GroupTopology::Create(0, 4).ok());
  EXPECT_FALSE(GroupTopology::Create(1, 1).ok());
  EXPECT_THAT(GroupTopology::Create(4, 0).status().message(), HasSubstr("network.group_size"));
}

// The patent's rule written out: member first inside the source group, then the ring the
// shorter way (ties "+").
std::vector<int> ExpectedPath(const GroupTopology& t, int s, int d) {
  std::vector<int> path = {s};
  int g = t.Group(s);
  if (t.Member(s) != t.Member(d)) path.push_back(t.NodeAt(g, t.Member(d)));
  const int off = t.RingOffset(g, t.Group(d));
  for (int i = 0; i != off; i += off > 0 ? 1 : -1) {
    g = (g + (off > 0 ? 1 : t.groups() - 1)) % t.groups();
    path.push_back(t.NodeAt(g, t.Member(d)));
  }
  return path;
}

TEST(GroupRoutingTest, DorTakesTheGroupThenRingPathUnderLoad) {
  for (int groups : {6, 5, 2}) {
    SimConfig cfg = GroupConfig("dor", groups, 4);
    cfg.traffic.rate = 0.25;
    auto net = Network::Create(cfg);
    ASSERT_TRUE(net.ok()) << net.status().ToString();
    const auto& t = dynamic_cast<const GroupTopology&>((*net)->topology());
    std::map<int32_t, std::vector<int>> path;
    int64_t checked = 0;
    (*net)->SetHopObserver([&](const HopEvent& e) {
      std::vector<int>& p = path[e.msg];
      p.push_back(e.node);
      if (e.out_port == t.PePort()) {
        ASSERT_EQ(p, ExpectedPath(t, p.front(), p.back()));
        ASSERT_EQ(static_cast<int>(p.size()) - 1, t.Distance(p.front(), p.back()));
        ++checked;
        path.erase(e.msg);
      }
    });
    for (int i = 0; i < 4000; ++i) (*net)->Step();
    EXPECT_GT(checked, 200);
    EXPECT_FALSE((*net)->Stalled(1000));
    EXPECT_TRUE((*net)->CheckInvariants().ok());
  }
}

// The patent's claim for DOR (claims item 26): one path per pair, so packets from one
// source to one destination arrive in the order they were sent, even under load. It holds
// when a flow has one buffer per hop, as the patent's routers: one VC per dateline class
// (router.vcs = 2) and one injection VC; with parallel VCs a message may overtake another
// of its flow (docs/gateway.md).
TEST(GroupRoutingTest, PacketsToOneDestinationArriveInOrder) {
  SimConfig cfg = GroupConfig("dor");
  cfg.router.vcs = 2;
  cfg.router.pe_vcs = 1;
  cfg.traffic.rate = 0.12;  // background traffic on every node
  auto net = Network::Create(cfg);
  ASSERT_TRUE(net.ok());
  const Topology& t = (*net)->topology();
  const int src = NodeOf(t, "3G0"), dst = NodeOf(t, "6G2");
  int64_t next_expected = 0, sent = 0;
  for (int cycle = 0; cycle < 40000 && next_expected < 1500; ++cycle) {
    if (cycle % 9 == 0 && sent < 1500) {
      (*net)->CreateMessage(src, dst, 1 + static_cast<int>(sent % 23), {}, sent);
      ++sent;
    }
    (*net)->Step();
    for (const Delivery& d : (*net)->deliveries()) {
      if (d.tag < 0) continue;
      ASSERT_EQ(d.tag, next_expected) << "out of order at cycle " << cycle;
      ++next_expected;
    }
  }
  EXPECT_EQ(next_expected, sent);
}

TEST(GroupRoutingTest, ConfigAcceptsGroupNamesForFaults) {
  auto points = LoadSimConfigsFromString(
      "routing.algorithm = \"dor-detour\"\n[network]\ntopology = \"group\"\n"
      "[faults]\nnodes = [\"3G2\", \"4G3\"]\n",
      "g.toml", {});
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  auto net = Network::Create(points->front(), {}, false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ((*net)->faults().FaultyNodes(), (std::vector<int>{10, 15}));
  auto bad = LoadSimConfigsFromString(
      "routing.algorithm = \"dor-detour\"\n[network]\ntopology = \"group\"\n"
      "[faults]\nnodes = [\"9G2\"]\n",
      "g.toml", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("9G2"));
  EXPECT_THAT(bad.status().message(), HasSubstr("group 9 does not exist"));
}

// Sends one tagged message and records its node path; returns false if undeliverable.
bool SendTraced(Network& net, int src, int dst, std::vector<int> via, std::vector<int>* path) {
  path->clear();
  net.SetHopObserver([&](const HopEvent& e) { path->push_back(e.node); });
  net.CreateMessage(src, dst, 8, via, 7);
  for (int i = 0; i < 5000; ++i) {
    net.Step();
    if (!net.deliveries().empty()) return true;
    if (!net.undeliverable_tags().empty()) {
      EXPECT_EQ(net.undeliverable_tags()[0], 7);
      return false;
    }
  }
  ADD_FAILURE() << "neither delivered nor undeliverable";
  return false;
}

class DetourTest : public ::testing::TestWithParam<DetourSwitchKind> {};

TEST_P(DetourTest, ViaNodesAvoidTheFaultAndNoDetourIsCounted) {
  SimConfig cfg = GroupConfig("dor-detour");
  cfg.router.vcs = 6;  // three VC layers: a mid-way switch plus one via node
  cfg.routing.detour_switch = GetParam();
  cfg.faults.nodes = {Name("4G1")};
  auto net = Network::Create(cfg, {}, false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const Topology& t = (*net)->topology();
  const int io = NodeOf(t, "3G0"), dst = NodeOf(t, "5G1"), fault = NodeOf(t, "4G1");
  std::vector<int> path;
  // Normal path 3G0 -> 3G1 -> 4G1 -> 5G1 crosses the fault: without a detour it is lost.
  EXPECT_FALSE(SendTraced(**net, io, dst, {}, &path));
  EXPECT_EQ((*net)->messages_undeliverable(), 1);
  // Via 5G0: 3G0 -> 4G0 -> 5G0, then 5G0 -> 5G1. "aware" switches at the source;
  // "detector" at 3G1, whose next normal hop is the faulty 4G1, and turns back there.
  ASSERT_TRUE(SendTraced(**net, io, dst, {NodeOf(t, "5G0")}, &path));
  for (int n : path) EXPECT_NE(n, fault);
  std::vector<std::string> names;
  for (int n : path) names.push_back(t.NodeName(n));
  if (GetParam() == DetourSwitchKind::kAware) {
    EXPECT_EQ(names, (std::vector<std::string>{"3G0", "4G0", "5G0", "5G1"}));
  } else {
    EXPECT_EQ(names, (std::vector<std::string>{"3G0", "3G1", "3G0", "4G0", "5G0", "5G1"}));
  }
  // A healthy normal path ignores the detour.
  ASSERT_TRUE(SendTraced(**net, io, NodeOf(t, "5G0"), {NodeOf(t, "2G3")}, &path));
  EXPECT_EQ(path.size(), 3u);
  // A detour whose leg meets the fault is undeliverable too.
  EXPECT_FALSE(SendTraced(**net, io, dst, {NodeOf(t, "4G2")}, &path));
  EXPECT_EQ((*net)->messages_undeliverable(), 2);
}

TEST_P(DetourTest, SwitchPointFollowsTheVariant) {
  // 6 VCs: three layers, enough for a mid-way switch.
  SimConfig cfg = GroupConfig("dor-detour");
  cfg.router.vcs = 6;
  cfg.routing.detour_switch = GetParam();
  cfg.faults.nodes = {Name("5G1")};
  auto net = Network::Create(cfg, {}, false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const Topology& t = (*net)->topology();
  // 3G0 -> 3G1 -> 4G1 -> 5G1 (faulty) -> 6G1; detour via 6G2.
  const int io = NodeOf(t, "3G0"), dst = NodeOf(t, "6G1");
  std::vector<int> path;
  ASSERT_TRUE(SendTraced(**net, io, dst, {NodeOf(t, "6G2")}, &path));
  std::vector<std::string> names;
  for (int n : path) names.push_back(t.NodeName(n));
  if (GetParam() == DetourSwitchKind::kAware) {  // switches at the source
    EXPECT_EQ(names, (std::vector<std::string>{"3G0", "3G2", "4G2", "5G2", "6G2", "6G1"}));
  } else {  // runs its normal path to 4G1, next to the fault, and switches there
    EXPECT_EQ(names, (std::vector<std::string>{"3G0", "3G1", "4G1", "4G2", "5G2", "6G2", "6G1"}));
  }
}

INSTANTIATE_TEST_SUITE_P(BothVariants, DetourTest,
                         ::testing::Values(DetourSwitchKind::kAware, DetourSwitchKind::kDetector));

// Every message carries random via nodes; faults on some nodes; loaded: every message is
// delivered or counted undeliverable, and nothing deadlocks.
TEST(DetourLoadTest, RandomDetoursUnderLoadNeitherDeadlockNorLoseCount) {
  for (TopologyKind kind : {TopologyKind::kGroup, TopologyKind::kTorus, TopologyKind::kMesh}) {
    SimConfig cfg = GroupConfig("dor-detour");
    cfg.network.topology = kind;
    cfg.network.n = 2;
    cfg.network.k = {4, 4};
    cfg.router.vcs = 6;
    cfg.faults.nodes = {Name(kind == TopologyKind::kGroup ? "2G1" : "1,2")};
    auto net = Network::Create(cfg, {}, false);
    ASSERT_TRUE(net.ok()) << net.status().ToString();
    const int n = (*net)->topology().NumNodes();
    const int faulty = (*net)->faults().FaultyNodes()[0];
    uint64_t x = 12345;
    auto next = [&] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
    };
    int64_t created = 0;
    for (int cycle = 0; cycle < 6000; ++cycle) {
      for (int s = 0; s < n; ++s) {
        if (s == faulty || next() % 4 != 0) continue;
        const int d = next();
        if (d == s || d == faulty) continue;
        std::vector<int> via;
        for (int v = next() % 3; v > 0; --v) via.push_back(next());
        (*net)->CreateMessage(s, d, 4, via, created++);
      }
      (*net)->Step();
      ASSERT_FALSE((*net)->Stalled(2000)) << (*net)->DeadlockStatus(2000).ToString();
    }
    for (int i = 0;
         i < 200000 && (*net)->messages_delivered() + (*net)->messages_undeliverable() < created;
         ++i) {
      (*net)->Step();
      ASSERT_FALSE((*net)->Stalled(2000)) << (*net)->DeadlockStatus(2000).ToString();
    }
    EXPECT_EQ((*net)->messages_delivered() + (*net)->messages_undeliverable(), created);
    EXPECT_GT((*net)->messages_delivered(), created / 2);
    EXPECT_TRUE((*net)->CheckInvariants().ok());
  }
}

TEST(DetourRegistryTest, NeedsTwoLayers) {
  SimConfig cfg = GroupConfig("dor-detour");
  cfg.router.vcs = 3;
  auto net = Network::Create(cfg, {}, false);
  ASSERT_FALSE(net.ok());
  EXPECT_THAT(net.status().message(), HasSubstr("router.vcs >= 4"));
  cfg.routing.algorithm = "dor";
  cfg.faults.nodes = {Name("2G2")};
  // The error names every algorithm that accepts faults, dor-detour among them.
  EXPECT_THAT(Network::Create(cfg, {}, false).status().message(),
              HasSubstr("not fault tolerant; remove the faults.* settings or use a "
                        "fault-tolerant algorithm (updown, detour-ud, detour-nf, dor-detour)"));
}

}  // namespace
}  // namespace ukai::sim
