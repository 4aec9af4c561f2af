// The indirect topologies (cmesh, flatfly, fattree, dragonfly): node, router and port
// counts, channel symmetry, degrees, distances against a breadth-first search, BookSim2's
// structural facts (dragonfly: one global channel per pair of groups), config errors, the
// deadlock checker on every algorithm and a short run with traffic.
#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "sim/engine/network.h"
#include "sim/routing/cdg_check.h"
#include "sim/routing/registry.h"
#include "sim/routing/switch_routings.h"
#include "sim/topology/concentrated_grid.h"
#include "sim/topology/dragonfly.h"
#include "sim/topology/factory.h"
#include "sim/topology/fat_tree.h"

namespace ukai::sim {
namespace {

std::unique_ptr<SwitchTopology> Make(const NetworkConfig& c) {
  Result<std::unique_ptr<Topology>> t = MakeTopology(c);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return nullptr;
  return std::unique_ptr<SwitchTopology>(dynamic_cast<SwitchTopology*>(t->release()));
}

NetworkConfig Dragonfly2() {
  NetworkConfig c;
  c.topology = TopologyKind::kDragonfly;
  c.dragonfly_p = 2;
  return c;
}
NetworkConfig FatTree43() {
  NetworkConfig c;
  c.topology = TopologyKind::kFatTree;
  c.n = 3;
  c.k = {4, 4, 4};
  return c;
}
NetworkConfig Grid(TopologyKind kind) {
  NetworkConfig c;
  c.topology = kind;
  c.n = 2;
  c.k = {4, 4};
  c.concentration = 4;
  return c;
}

// Every channel leads back (symmetry), terminals hang on one router port each; returns the
// number of connected router-to-router ports of each router.
std::vector<int> CheckChannels(const SwitchTopology& t) {
  std::vector<int> degree(t.NumRouters(), 0);
  for (int v = 0; v < t.NumNodes(); ++v) {
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.Neighbor(v, p);
      if (!far.valid()) continue;
      const PortRef back = t.Neighbor(far.node, far.port);
      EXPECT_EQ(back.node, v) << v << " port " << p;
      EXPECT_EQ(back.port, p) << v << " port " << p;
      if (t.IsTerminal(v)) {
        EXPECT_EQ(p, 0);
        EXPECT_FALSE(t.IsTerminal(far.node));
      } else if (!t.IsTerminal(far.node)) {
        ++degree[t.RouterOf(v)];
      }
    }
  }
  for (int term = 0; term < t.NumTerminals(); ++term) {
    EXPECT_TRUE(t.Neighbor(term, 0).valid());
  }
  return degree;
}

// The topology's distance formula against the base class's breadth-first search (equal,
// or never shorter when `at_least`: the dragonfly's minimal routes take one global channel,
// the graph may have shorter paths through two).
void CheckDistances(const SwitchTopology& t, bool at_least = false) {
  for (int a = 0; a < t.NumRouters(); ++a) {
    for (int b = 0; b < t.NumRouters(); ++b) {
      const int bfs = t.SwitchTopology::RouterDistance(a, b);
      if (at_least) {
        ASSERT_GE(t.RouterDistance(a, b), bfs) << a << "," << b;
      } else {
        ASSERT_EQ(t.RouterDistance(a, b), bfs) << a << "," << b;
      }
    }
  }
}

TEST(SwitchTopologyTest, DragonflyIsBookSimsDragonfly) {
  std::unique_ptr<SwitchTopology> made = Make(Dragonfly2());
  const auto& t = dynamic_cast<const Dragonfly&>(*made);
  // p = 2: a = 4, h = 2, g = 9; 36 routers, 72 terminals, radix p + a - 1 + h = 7.
  EXPECT_EQ(t.groups(), 9);
  EXPECT_EQ(t.NumRouters(), 36);
  EXPECT_EQ(t.NumTerminals(), 72);
  EXPECT_EQ(t.NumNetworkPorts(), 7);
  for (int d : CheckChannels(t)) EXPECT_EQ(d, 3 + 2);  // a - 1 local + h global
  std::set<std::pair<int, int>> pairs;
  int globals = 0;
  for (int r = 0; r < t.NumRouters(); ++r) {
    for (int c = 0; c < t.h(); ++c) {
      const PortRef far = t.Neighbor(t.RouterNode(r), t.GlobalPort(c));
      const int g1 = t.GroupOf(r), g2 = t.GroupOf(t.RouterOf(far.node));
      EXPECT_NE(g1, g2);
      EXPECT_TRUE(t.IsGlobalPort(far.port));
      pairs.insert({std::min(g1, g2), std::max(g1, g2)});
      ++globals;
    }
  }
  EXPECT_EQ(globals, 9 * 8);                      // each channel seen from both ends
  EXPECT_EQ(static_cast<int>(pairs.size()), 36);  // every pair of groups, exactly once
  // BookSim2's arrangement: global channel j of group g leads to group j (j < g) or j + 1.
  EXPECT_EQ(t.GroupOf(t.RouterOf(t.Neighbor(t.RouterNode(0), t.GlobalPort(0)).node)), 1);
  EXPECT_EQ(t.GroupOf(t.RouterOf(t.Neighbor(t.RouterNode(4), t.GlobalPort(0)).node)), 0);
  CheckDistances(t, true);
  // Router 1 (group 0) to router 5 (group 1): local to router 0 (group 0's channel to group
  // 1), global to router 4, local to 5 = 3; the graph also has 2 (two global channels).
  EXPECT_EQ(t.RouterDistance(1, 5), 3);
  EXPECT_EQ(t.SwitchTopology::RouterDistance(1, 5), 2);
  EXPECT_EQ(t.RouterDistance(0, 1), 1);
  EXPECT_EQ(t.Distance(0, 1), 2);  // two terminals of router 0
}

TEST(SwitchTopologyTest, FatTreeIsAKaryNTree) {
  std::unique_ptr<SwitchTopology> made = Make(FatTree43());
  const auto& t = dynamic_cast<const FatTree&>(*made);
  EXPECT_EQ(t.NumTerminals(), 64);
  EXPECT_EQ(t.NumRouters(), 48);
  EXPECT_EQ(t.NumNetworkPorts(), 8);
  const std::vector<int> degree = CheckChannels(t);
  for (int r = 0; r < t.NumRouters(); ++r) {
    // top: k down; middle: k down + k up; leaf: k up (its down ports hold terminals)
    EXPECT_EQ(degree[r], t.Level(r) == 1 ? 8 : 4) << r;
  }
  CheckDistances(t);
  // Terminals under one leaf: 2 channels; sharing the first digit only: up to level 1 and
  // back (2 + 2 * 1); sharing nothing: via the top (2 + 2 * 2).
  EXPECT_EQ(t.Distance(0, 3), 2);
  EXPECT_EQ(t.Distance(0, 4), 4);
  EXPECT_EQ(t.Distance(0, 63), 6);
  EXPECT_TRUE(t.Covers(0, 63));  // a top router covers everything
}

TEST(SwitchTopologyTest, FlatFlyAndCMesh) {
  std::unique_ptr<SwitchTopology> fly = Make(Grid(TopologyKind::kFlatFly));
  EXPECT_EQ(fly->NumTerminals(), 64);
  EXPECT_EQ(fly->NumRouters(), 16);
  EXPECT_EQ(fly->NumNetworkPorts(), 4 + 3 + 3);
  for (int d : CheckChannels(*fly)) EXPECT_EQ(d, 6);
  CheckDistances(*fly);
  EXPECT_EQ(fly->RouterDistance(0, 15), 2);  // one hop per differing dimension

  std::unique_ptr<SwitchTopology> mesh = Make(Grid(TopologyKind::kCMesh));
  EXPECT_EQ(mesh->NumTerminals(), 64);
  EXPECT_EQ(mesh->NumRouters(), 16);
  EXPECT_EQ(mesh->NumNetworkPorts(), 4 + 4);
  std::vector<int> degree = CheckChannels(*mesh);
  EXPECT_EQ(degree[0], 2);  // corner
  EXPECT_EQ(degree[5], 4);  // inside
  CheckDistances(*mesh);
  EXPECT_EQ(mesh->RouterDistance(0, 15), 6);
  // Terminal t = router * c + j.
  EXPECT_EQ(mesh->TerminalRouter(13), 3);
  EXPECT_EQ(mesh->TerminalPort(13), 1);
}

TEST(SwitchTopologyTest, ErrorsNameTheirKey) {
  NetworkConfig c = Dragonfly2();
  c.dragonfly_p = 0;
  EXPECT_EQ(MakeTopology(c).status().key(), "network.dragonfly_p");
  c = FatTree43();
  c.k = {4, 3, 4};
  EXPECT_EQ(MakeTopology(c).status().key(), "network.k");
  c = Grid(TopologyKind::kFlatFly);
  c.concentration = 0;
  EXPECT_EQ(MakeTopology(c).status().key(), "network.concentration");
  c = Grid(TopologyKind::kCMesh);
  c.k = {1024, 1024};
  EXPECT_EQ(MakeTopology(c).status().key(), "network.k");
}

TEST(SwitchTopologyTest, RoutingRefusesWhatItCannotRun) {
  SimConfig c;
  c.network = Dragonfly2();
  c.routing.algorithm = "ugal";
  c.router.vcs = 2;
  std::unique_ptr<SwitchTopology> t = Make(c.network);
  Status st = (*FindRoutingAlgorithm("ugal"))->supports(*t, c);
  EXPECT_EQ(st.key(), "routing.algorithm");
  EXPECT_NE(st.message().find("router.vcs >= 3"), std::string::npos) << st.message();
  c.routing.algorithm = "nca";
  st = (*FindRoutingAlgorithm("nca"))->supports(*t, c);
  EXPECT_NE(st.message().find("dragonfly: min, ugal"), std::string::npos) << st.message();
  EXPECT_FALSE((*FindRoutingAlgorithm("duato"))->supports(*t, c).ok());
}

// The VC masks of every step of one message's way from terminal `src` to terminal `dst`
// (the first candidate of each; the hop leaves on its lowest VC), with whether the step
// took a global channel.
std::vector<std::pair<uint32_t, bool>> WalkMasks(const SimConfig& c, const Dragonfly& t, int src,
                                                 int dst) {
  std::unique_ptr<RoutingFunction> routing =
      (*FindRoutingAlgorithm(c.routing.algorithm))->create(t, c);
  std::vector<std::pair<uint32_t, bool>> out;
  uint32_t state = 0;
  int node = src, in_port = t.PePort(), in_vc = 0;
  while (node != dst && out.size() < 8) {
    RouteRequest r;
    r.node = node;
    r.in_port = in_port;
    r.in_vc = in_vc;
    r.src = src;
    r.dst = dst;
    r.message_state = &state;
    RouteResult result;
    routing->Route(r, &result);
    if (result.size() == 0) break;
    const int port = result[0].port;
    out.emplace_back(result[0].vc_mask, !t.IsTerminal(node) && t.IsGlobalPort(port));
    const PortRef far = t.Neighbor(node, port);
    in_vc = std::countr_zero(result[0].vc_mask);
    node = far.node;
    in_port = far.port;
  }
  return out;
}

// dragonfly min with 4 VCs from terminal 0 to a terminal of another group, two local hops
// and a global one: split gives the classes VCs 0-1 and 2-3 (injection on class 0, ejection
// on any VC); booksim (BookSim2's min_dragonflynew) VC 0 before the global channel and VC 1
// from it on, injection on any VC, ejection on VC 1; a message to a terminal of its own
// router is ejected on VC 0.
TEST(SwitchTopologyTest, DragonflyVcsAsBookSim2) {
  SimConfig c;
  c.network = Dragonfly2();
  c.routing.algorithm = "min";
  c.router.vcs = 4;
  std::unique_ptr<SwitchTopology> made = Make(c.network);
  const auto& t = dynamic_cast<const Dragonfly&>(*made);
  const int dst = (t.groups() - 1) * t.a() * t.p() + t.a() * t.p() - 1;  // last terminal
  using Steps = std::vector<std::pair<uint32_t, bool>>;
  // inject, local, global, local, eject
  EXPECT_EQ(WalkMasks(c, t, 0, dst),
            (Steps{{0x3, false}, {0x3, false}, {0xC, true}, {0xC, false}, {0xF, false}}));
  EXPECT_EQ(WalkMasks(c, t, 0, 1), (Steps{{0x3, false}, {0xF, false}}));
  c.routing.dragonfly_vcs = DragonflyVcs::kBooksim;
  EXPECT_EQ(WalkMasks(c, t, 0, dst),
            (Steps{{0xF, false}, {0x1, false}, {0x2, true}, {0x2, false}, {0x2, false}}));
  EXPECT_EQ(WalkMasks(c, t, 0, 1), (Steps{{0xF, false}, {0x1, false}}));
  // ugal (3 classes) from a terminal of the destination router: ejected on VC 2, as
  // BookSim2's phase 2.
  c.routing.algorithm = "ugal";
  EXPECT_EQ(WalkMasks(c, t, 0, 1), (Steps{{0xF, false}, {0x4, false}}));
}

// The checker proves `c` deadlock-free, with dependencies.
void ExpectProved(const SimConfig& c) {
  const std::string& a = c.routing.algorithm;
  Result<CdgReport> rep = CheckDeadlockFreedom(c);
  ASSERT_TRUE(rep.ok()) << a << ": " << rep.status().ToString();
  EXPECT_TRUE(rep->ok) << a << ": " << rep->text;
  EXPECT_GT(rep->dependencies, 0) << a;
}

// Every algorithm on every indirect topology: the checker proves it deadlock-free.
TEST(SwitchTopologyTest, DeadlockCheckerProvesEveryAlgorithm) {
  const std::pair<NetworkConfig, std::vector<std::string>> cases[] = {
      {Dragonfly2(), {"min", "ugal"}},
      {FatTree43(), {"nca", "anca"}},
      {Grid(TopologyKind::kFlatFly), {"min", "valiant", "ugal"}},
      {Grid(TopologyKind::kCMesh), {"dor"}},
  };
  for (const auto& [network, algorithms] : cases) {
    for (const std::string& a : algorithms) {
      SimConfig c;
      c.network = network;
      c.routing.algorithm = a;
      c.router.vcs = 3;
      ExpectProved(c);
    }
  }
  // The dragonfly with one VC per class (routing.dragonfly_vcs = booksim): min with 2 VCs
  // and 4 (VCs 2, 3 on injection channels only), ugal with 3.
  for (const auto& [a, vcs] : {std::pair{"min", 2}, {"min", 4}, {"ugal", 3}}) {
    SimConfig c;
    c.network = Dragonfly2();
    c.routing.algorithm = a;
    c.routing.dragonfly_vcs = DragonflyVcs::kBooksim;
    c.router.vcs = vcs;
    ExpectProved(c);
  }
}

// valiant, romm (routing/valiant.h) and min_adapt on meshes and tori: proved with their
// fewest VCs.
TEST(SwitchTopologyTest, DeadlockCheckerProvesTwoPhaseOnCubes) {
  for (const char* a : {"valiant", "romm", "min_adapt"}) {
    for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
      SimConfig c;
      c.network.topology = kind;
      c.network.n = 2;
      c.network.k = {4, 5};
      c.routing.algorithm = a;
      const bool adaptive = std::string(a) == "min_adapt";  // 1 or 2 escape VCs + 1
      c.router.vcs = kind == TopologyKind::kTorus ? (adaptive ? 3 : 4) : 2;
      Result<CdgReport> rep = CheckDeadlockFreedom(c);
      ASSERT_TRUE(rep.ok()) << a << ": " << rep.status().ToString();
      EXPECT_TRUE(rep->ok) << a << ": " << rep->text;
      c.router.vcs -= 1;  // too few: refused, naming the key
      EXPECT_EQ(CheckDeadlockFreedom(c).status().key(), "routing.algorithm") << a;
    }
  }
}

// min_adapt with BookSim2's candidates (routing.min_adapt_candidates = booksim): proved with
// 2 VCs on a mesh and 4 on a torus (its adaptive VC is VC 3); 3 on a torus are refused.
TEST(SwitchTopologyTest, DeadlockCheckerProvesMinAdaptWithBooksimCandidates) {
  for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
    SimConfig c;
    c.network.topology = kind;
    c.network.n = 2;
    c.network.k = {4, 5};
    c.routing.algorithm = "min_adapt";
    c.routing.min_adapt_candidates = MinAdaptCandidates::kBooksim;
    c.router.vcs = kind == TopologyKind::kTorus ? 4 : 2;
    Result<CdgReport> rep = CheckDeadlockFreedom(c);
    ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    EXPECT_TRUE(rep->ok) << rep->text;
    c.router.vcs -= 1;
    EXPECT_EQ(CheckDeadlockFreedom(c).status().key(), "routing.algorithm");
  }
}

// planar_adapt (routing/planar_adapt.h): proved on 2- and 3-dimensional meshes with 3 VCs;
// 2 VCs and a torus are refused, naming the key.
TEST(SwitchTopologyTest, DeadlockCheckerProvesPlanarAdapt) {
  for (int n : {2, 3}) {
    SimConfig c;
    c.network.topology = TopologyKind::kMesh;
    c.network.n = n;
    c.network.k = n == 2 ? std::vector<int>{4, 5} : std::vector<int>{3, 4, 3};
    c.routing.algorithm = "planar_adapt";
    c.router.vcs = 3;
    Result<CdgReport> rep = CheckDeadlockFreedom(c);
    ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    EXPECT_TRUE(rep->ok) << rep->text;
    EXPECT_GT(rep->dependencies, 0);
    c.router.vcs = 2;
    EXPECT_EQ(CheckDeadlockFreedom(c).status().key(), "routing.algorithm");
    c.router.vcs = 3;
    c.network.topology = TopologyKind::kTorus;
    EXPECT_EQ(CheckDeadlockFreedom(c).status().key(), "routing.algorithm");
  }
}

// A short run with uniform traffic on each topology: messages delivered, no stall.
TEST(SwitchTopologyTest, ShortRunDelivers) {
  const std::pair<NetworkConfig, const char*> cases[] = {
      {Dragonfly2(), "ugal"},
      {FatTree43(), "anca"},
      {Grid(TopologyKind::kFlatFly), "ugal"},
      {Grid(TopologyKind::kCMesh), "dor"},
  };
  for (const auto& [network, algorithm] : cases) {
    SimConfig c;
    c.network = network;
    c.routing.algorithm = algorithm;
    c.router.vcs = 4;
    c.traffic.rate = 0.2;
    c.traffic.message_bytes = 16;
    Result<std::unique_ptr<Network>> made = Network::Create(c);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Network& net = **made;
    EXPECT_EQ(net.sending_nodes(), net.topology().NumTerminals()) << algorithm;
    for (int i = 0; i < 3000; ++i) {
      net.Step();
      ASSERT_FALSE(net.Stalled(2000)) << algorithm;
    }
    // 0.2 flits per terminal per cycle of 4-flit messages, 3000 cycles: about 150 per terminal.
    EXPECT_GT(net.messages_delivered(), 100 * net.topology().NumTerminals()) << algorithm;
    EXPECT_TRUE(net.CheckInvariants().ok()) << algorithm;
  }
}

}  // namespace
}  // namespace ukai::sim
