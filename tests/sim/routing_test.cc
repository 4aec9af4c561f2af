// Routing paths: DOR takes exactly the dimension-order path; Duato never takes a
// non-minimal hop (checked on every head hop of loaded runs); the registry's errors.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/routing/duato.h"
#include "sim/routing/registry.h"
#include "sim/routing/valiant.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using testing::SmallConfig;

// The node sequence dimension-order routing must visit from s to d.
std::vector<int> DorPath(const KaryNCube& t, int s, int d) {
  std::vector<int> path = {s};
  std::vector<int> c = t.Coords(s);
  for (int dim = 0; dim < t.n(); ++dim) {
    const int off = t.Offset(dim, c[dim], t.Coord(d, dim));
    const int step = off > 0 ? 1 : -1;
    for (int i = 0; i != off; i += step) {
      c[dim] = (c[dim] + step + t.k(dim)) % t.k(dim);
      path.push_back(t.NodeAt(c));
    }
  }
  return path;
}

// Runs loaded traffic and checks the node sequence of every message when its head is
// ejected (the hop observer sees every head departure, the last one at the destination).
void RunAndRecord(SimConfig cfg, int64_t cycles,
                  const std::function<void(const KaryNCube&, const std::vector<int>&)>& check) {
  auto net = Network::Create(cfg);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const auto& topo = dynamic_cast<const KaryNCube&>((*net)->topology());
  std::map<int32_t, std::vector<int>> path;  // by message index (recycled after delivery)
  int64_t checked = 0;
  (*net)->SetHopObserver([&](const HopEvent& e) {
    std::vector<int>& p = path[e.msg];
    p.push_back(e.node);
    if (e.out_port == topo.PePort()) {
      check(topo, p);
      ++checked;
      path.erase(e.msg);
    }
  });
  for (int64_t i = 0; i < cycles; ++i) (*net)->Step();
  EXPECT_GT(checked, 100);
}

TEST(RoutingTest, DorFollowsDimensionOrderExactly) {
  for (TopologyKind kind : {TopologyKind::kTorus, TopologyKind::kMesh}) {
    for (std::vector<int> k : {std::vector<int>{5, 4}, std::vector<int>{4, 3, 3}}) {
      SimConfig cfg = SmallConfig(kind, k);
      cfg.routing.dor_tie = DorTieRule::kPlus;
      cfg.traffic.rate = 0.3;
      RunAndRecord(cfg, 4000, [](const KaryNCube& t, const std::vector<int>& p) {
        ASSERT_EQ(p, DorPath(t, p.front(), p.back())) << p.front() << "->" << p.back();
      });
    }
  }
}

// With ties drawn per message (the default), a route is still minimal and in dimension
// order, and both ways round a tie are taken.
TEST(RoutingTest, DorWithRandomTiesIsMinimalDimensionOrder) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {6, 4});
  cfg.traffic.rate = 0.3;
  int ties_plus = 0, ties_minus = 0;
  RunAndRecord(cfg, 6000, [&](const KaryNCube& t, const std::vector<int>& p) {
    ASSERT_EQ(static_cast<int>(p.size()) - 1, t.Distance(p.front(), p.back()));
    int dim = 0;
    for (size_t i = 1; i < p.size(); ++i) {
      int moved = 0;
      while (t.Coord(p[i], moved) == t.Coord(p[i - 1], moved)) ++moved;
      ASSERT_GE(moved, dim) << "dimension order";
      dim = moved;
    }
    if (t.Offset(0, t.Coord(p.front(), 0), t.Coord(p.back(), 0)) == 3) {
      (t.Coord(p[1], 0) == (t.Coord(p[0], 0) + 1) % 6 ? ties_plus : ties_minus) += 1;
    }
  });
  EXPECT_GT(ties_plus, 20);
  EXPECT_GT(ties_minus, 20);
}

TEST(RoutingTest, DuatoOnlyTakesMinimalHops) {
  for (TopologyKind kind : {TopologyKind::kTorus, TopologyKind::kMesh}) {
    SimConfig cfg = SmallConfig(kind, {6, 5}, "duato");
    cfg.traffic.rate = 0.6;  // past saturation: many adaptive choices and escapes
    RunAndRecord(cfg, 6000, [](const KaryNCube& t, const std::vector<int>& p) {
      std::string s;
      for (int x : p) s += std::to_string(x) + " ";
      ASSERT_EQ(static_cast<int>(p.size()) - 1, t.Distance(p.front(), p.back()))
          << t.Describe() << ": " << s;
      for (size_t i = 1; i < p.size(); ++i) {
        ASSERT_EQ(t.Distance(p[i], p.back()), t.Distance(p[i - 1], p.back()) - 1);
      }
    });
  }
}

// min_adapt's candidates: all (every unfinished dimension's productive port on the
// adaptive VCs) or BookSim2's (the lowest unfinished dimension only; on a torus VC 3 alone
// and "-" half way round), each beside the dimension-order escape VC.
TEST(RoutingTest, MinAdaptBooksimCandidates) {
  auto route = [](bool torus, bool booksim, int node, int dst) {
    NetworkConfig nc;
    nc.topology = torus ? TopologyKind::kTorus : TopologyKind::kMesh;
    nc.k = {4, 4};
    Result<std::unique_ptr<KaryNCube>> t = KaryNCube::Create(nc);
    EXPECT_TRUE(t.ok());
    DuatoRouting r(**t, 4, DuatoAtomic::kNone, /*sticky_escape=*/true, booksim);
    RouteRequest req;
    req.node = node;
    req.dst = dst;
    req.in_port = (*t)->PePort();
    RouteResult res;
    r.Route(req, &res);
    std::vector<std::pair<int, uint32_t>> out;
    for (int i = 0; i < res.size(); ++i) out.push_back({res[i].port, res[i].vc_mask});
    return out;
  };
  using C = std::vector<std::pair<int, uint32_t>>;
  // Mesh, node 0 = (0, 0) to node 9 = (1, 2): +x and +y adaptive (VCs 1-3), escape +x VC 0.
  EXPECT_EQ(route(false, false, 0, 9), (C{{0, 0xe}, {2, 0xe}, {0, 0x1}}));
  EXPECT_EQ(route(false, true, 0, 9), (C{{0, 0xe}, {0, 0x1}}));
  // x done: the adaptive range goes to y in both.
  EXPECT_EQ(route(false, true, 1, 9), (C{{2, 0xe}, {2, 0x1}}));
  // Torus, 0 to 10 = (2, 2): half way in both dimensions. All: both ways, VCs 2-3;
  // BookSim2's: "-" along x, VC 3 alone; the escape is dor's hop ("+" on a tie) with its
  // dateline class (VC 1 here), the same in both.
  EXPECT_EQ(route(true, false, 0, 10), (C{{0, 0xc}, {1, 0xc}, {2, 0xc}, {3, 0xc}, {0, 0x2}}));
  EXPECT_EQ(route(true, true, 0, 10), (C{{1, 0x8}, {0, 0x2}}));
}

// valiant with routing.valiant_via_destination (BookSim2's valiant_mesh): asked at the
// destination in phase 0 it goes on to the intermediate node on every VC; in phase 1 it
// ejects there. Without the option the router ejects at the destination (never asks).
TEST(RoutingTest, ValiantViaDestination) {
  NetworkConfig nc;
  nc.topology = TopologyKind::kMesh;
  nc.k = {4, 4};
  Result<std::unique_ptr<KaryNCube>> t = KaryNCube::Create(nc);
  ASSERT_TRUE(t.ok());
  TwoPhaseRouting plain(**t, 4, /*romm=*/false);
  TwoPhaseRouting via(**t, 4, /*romm=*/false, /*via_destination=*/true);
  EXPECT_FALSE(plain.RoutesAtDestination());
  EXPECT_TRUE(via.RoutesAtDestination());
  // A message from 0 to 5 whose intermediate node is not 5.
  int64_t created = 0;
  while (via.Intermediate(0, 5, created) == 5) ++created;
  const int mid = via.Intermediate(0, 5, created);
  RouteRequest req;
  req.node = 5;
  req.in_port = 0;
  req.src = 0;
  req.dst = 5;
  req.created = created;
  uint32_t state = 0;  // phase 0
  req.message_state = &state;
  RouteResult res;
  via.Route(req, &res);
  ASSERT_EQ(res.size(), 1);
  int port = -1;
  uint32_t mask = 0;
  via.Hop(5, mid, 0, &port, &mask);
  EXPECT_EQ(res[0].port, port);
  EXPECT_EQ(res[0].vc_mask, 0xfu);  // every VC, as BookSim2 at the destination
  res.Clear();
  state = 1u << 4;  // phase 1
  via.Route(req, &res);
  ASSERT_EQ(res.size(), 1);
  EXPECT_EQ(res[0].port, RouteResult::kEjectPort);
}

TEST(RoutingRegistryTest, UnknownNameListsKnownOnes) {
  auto e = FindRoutingAlgorithm("xy-magic");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  EXPECT_NE(e.status().message().find("routing.algorithm"), std::string::npos);
  EXPECT_NE(e.status().message().find("known: dor, duato"), std::string::npos);
}

TEST(RoutingRegistryTest, TooFewVcsNameTheKeys) {
  struct Bad {
    TopologyKind kind;
    const char* algorithm;
    int vcs;
  };
  for (const Bad& b : {Bad{TopologyKind::kTorus, "duato", 2}, Bad{TopologyKind::kMesh, "duato", 1},
                       Bad{TopologyKind::kTorus, "dor", 1}}) {
    SimConfig cfg = SmallConfig(b.kind, {4, 4}, b.algorithm);
    cfg.router.vcs = b.vcs;
    auto net = Network::Create(cfg);
    ASSERT_FALSE(net.ok()) << b.algorithm << " vcs=" << b.vcs;
    EXPECT_EQ(net.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(net.status().message().find("routing.algorithm"), std::string::npos);
    EXPECT_NE(net.status().message().find("router.vcs"), std::string::npos);
  }
  // The minimum works.
  SimConfig ok = SmallConfig(TopologyKind::kTorus, {4, 4}, "duato");
  ok.router.vcs = 3;
  EXPECT_TRUE(Network::Create(ok).ok());
  ok.routing.algorithm = "dor";
  ok.router.vcs = 2;
  EXPECT_TRUE(Network::Create(ok).ok());
  ok.network.topology = TopologyKind::kMesh;
  ok.router.vcs = 1;
  EXPECT_TRUE(Network::Create(ok).ok());
}

TEST(RoutingRegistryTest, TableHasSchemaAndClocks) {
  ASSERT_GE(RoutingAlgorithms().size(), 6u);
  EXPECT_EQ(RoutingAlgorithms()[0].name, "dor");
  EXPECT_DOUBLE_EQ(RoutingAlgorithms()[0].default_clock_mhz, 79.0);
  EXPECT_DOUBLE_EQ(RoutingAlgorithms()[1].default_clock_mhz, 55.0);
  for (const RoutingEntry& e : RoutingAlgorithms()) EXPECT_FALSE(e.doc.empty());
}

}  // namespace
}  // namespace ukai::sim
