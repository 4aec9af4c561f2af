// Route tables of `source` routing (routing/source_routes.h) on trees and random graphs:
// every pair of end nodes reachable, every route a connected path through switches only,
// up*/down* legal where asked, shortest where asked, and the deadlock check of the route
// set (routing/source_check.h) proving them acyclic or naming a cycle.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "core/rng.h"
#include "sim/routing/source_check.h"
#include "sim/routing/source_routing.h"
#include "sim/topology/graph.h"

namespace ukai::sim {
namespace {

std::unique_ptr<GraphTopology> Make(const GraphSpec& spec) {
  Result<std::unique_ptr<GraphTopology>> g = GraphTopology::Create(spec);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : nullptr;
}

// A random connected graph of `switches` switches (a random spanning tree plus `extra`
// links) with one or two end nodes on each switch.
GraphSpec RandomGraph(uint64_t seed, int switches, int extra) {
  Rng rng(seed);
  GraphSpec spec;
  spec.origin = "random graph";
  for (int s = 0; s < switches; ++s) spec.switches.push_back(fmt::format("s{}", s));
  std::vector<std::pair<int, int>> links;
  for (int s = 1; s < switches; ++s) {
    links.push_back({static_cast<int>(rng.Uniform(s)), s});
  }
  for (int i = 0; i < extra; ++i) {
    const int a = static_cast<int>(rng.Uniform(switches)),
              b = static_cast<int>(rng.Uniform(switches));
    auto key = std::minmax(a, b);
    if (a == b ||
        std::find(links.begin(), links.end(), std::pair{key.first, key.second}) != links.end()) {
      continue;
    }
    links.push_back({key.first, key.second});
  }
  for (const auto& [a, b] : links)
    spec.links.push_back(MakeLink(spec.switches[a], spec.switches[b]));
  int n = 0;
  for (int s = 0; s < switches; ++s) {
    const int count = 1 + static_cast<int>(rng.Uniform(2));
    for (int i = 0; i < count; ++i) {
      spec.terminals.push_back(fmt::format("n{}", n++));
      spec.links.push_back(MakeLink(spec.terminals.back(), spec.switches[s]));
    }
  }
  return spec;
}

// Every route: starts at its source, each hop's port leads to the next hop's node, passes
// only through switches, ends at its destination; up*/down* legal when asked.
void CheckRoutes(const Topology& t, const SourceRouteTable& table, bool updown) {
  for (int s = 0; s < table.terminals(); ++s) {
    for (int d = 0; d < table.terminals(); ++d) {
      if (s == d) continue;
      ASSERT_GE(table.Paths(s, d), 1) << t.NodeName(s) << " -> " << t.NodeName(d);
      for (int k = 0; k < table.Paths(s, d); ++k) {
        std::span<const RouteHop> path = table.Path(s, d, k);
        ASSERT_FALSE(path.empty());
        EXPECT_EQ(path.front().node, s);
        bool down = false;
        for (size_t i = 0; i < path.size(); ++i) {
          const PortRef far = t.Neighbor(path[i].node, path[i].port);
          ASSERT_TRUE(far.valid());
          if (i > 0) {
            EXPECT_TRUE(t.Forwards(path[i].node)) << "route through an end node";
          }
          if (i + 1 < path.size()) {
            EXPECT_EQ(far.node, path[i + 1].node);
          } else {
            EXPECT_EQ(far.node, d);
          }
          if (updown) {
            const bool up = table.IsUp(path[i].node, far.node);
            EXPECT_FALSE(down && up) << "an up channel after a down channel";
            down = down || !up;
          }
        }
        if (k > 0) {  // routes of a pair differ and are equally short
          EXPECT_EQ(path.size(), table.Path(s, d, 0).size());
          EXPECT_FALSE(std::equal(path.begin(), path.end(), table.Path(s, d, 0).begin(),
                                  table.Path(s, d, 0).end(),
                                  [](const RouteHop& a, const RouteHop& b) {
                                    return a.node == b.node && a.port == b.port;
                                  }));
        }
      }
    }
  }
}

TEST(SourceRoutesTest, TreesAreShortestUniqueAndUpDownLegal) {
  for (int upper : {1, 2}) {
    Result<GraphSpec> spec = TreeSpec(3, 3, upper);
    ASSERT_TRUE(spec.ok());
    std::unique_ptr<GraphTopology> g = Make(*spec);
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(ForwardingCycle(*g));
    Result<std::unique_ptr<SourceRouteTable>> table =
        SourceRouteTable::Build(*g, SourceRouteMode::kAuto, -1, 4);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    EXPECT_EQ((*table)->mode(), SourceRouteMode::kShortest);  // no cycle among switches
    EXPECT_EQ(g->NodeName((*table)->root()), "s3.0");
    CheckRoutes(*g, **table, /*updown=*/true);  // a tree's shortest paths are up*/down*
    // n0 -> n26 crosses the whole tree: 5 switches; parallel channels give more routes.
    EXPECT_EQ((*table)->Path(0, 26, 0).size(), 6u);
    EXPECT_EQ((*table)->Paths(0, 26), upper == 1 ? 1 : 4);
    EXPECT_EQ((*table)->Paths(0, 1), 1);
  }
}

TEST(SourceRoutesTest, RandomGraphsUpDownEveryPairLegalAndAcyclic) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const GraphSpec spec =
        RandomGraph(seed, 3 + static_cast<int>(seed % 8), static_cast<int>(seed % 5));
    std::unique_ptr<GraphTopology> g = Make(spec);
    ASSERT_NE(g, nullptr);
    Result<std::unique_ptr<SourceRouteTable>> table =
        SourceRouteTable::Build(*g, SourceRouteMode::kUpDown, -1, 3);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    CheckRoutes(*g, **table, /*updown=*/true);
    // PathFrom: from any switch too (switch units of multicast send from there).
    for (int v = g->NumTerminals(); v < g->NumNodes(); ++v) {
      std::vector<RouteHop> p = (*table)->PathFrom(*g, v, 0);
      ASSERT_FALSE(p.empty());
      EXPECT_EQ(p.front().node, v);
      EXPECT_EQ(g->Neighbor(p.back().node, p.back().port).node, 0);
    }
  }
}

TEST(SourceRoutesTest, ShortestPathsCanDeadlockUpDownCannot) {
  // A ring of 5 switches with an end node each: shortest routes go both ways round it.
  GraphSpec spec;
  spec.origin = "ring";
  for (int s = 0; s < 5; ++s) {
    spec.switches.push_back(fmt::format("s{}", s));
    spec.terminals.push_back(fmt::format("n{}", s));
  }
  for (int s = 0; s < 5; ++s) {
    spec.links.push_back(MakeLink(spec.switches[s], spec.switches[(s + 1) % 5]));
    spec.links.push_back(MakeLink(spec.terminals[s], spec.switches[s]));
  }
  std::unique_ptr<GraphTopology> g = Make(spec);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(ForwardingCycle(*g));
  SimConfig c;
  c.network.topology = TopologyKind::kGraph;
  c.network.graph = spec;
  c.routing.algorithm = "source";
  c.router.vcs = 1;
  c.routing.source_routes = SourceRouteMode::kShortest;
  Result<CdgReport> shortest = CheckSourceRoutes(c);
  ASSERT_TRUE(shortest.ok()) << shortest.status().ToString();
  EXPECT_FALSE(shortest->ok) << shortest->text;
  EXPECT_NE(shortest->text.find("a cycle of"), std::string::npos);
  c.routing.source_routes = SourceRouteMode::kAuto;  // cycles: up*/down*
  Result<CdgReport> updown = CheckSourceRoutes(c);
  ASSERT_TRUE(updown.ok());
  EXPECT_TRUE(updown->ok) << updown->text;
  EXPECT_NE(updown->text.find("up*/down*"), std::string::npos);
}

TEST(SourceRoutesTest, RoutingFollowsTheRouteAndFixesOnePerPairInOrder) {
  Result<GraphSpec> spec = TreeSpec(2, 3, 2);
  ASSERT_TRUE(spec.ok());
  std::unique_ptr<GraphTopology> g = Make(*spec);
  Result<std::unique_ptr<SourceRouteTable>> table =
      SourceRouteTable::Build(*g, SourceRouteMode::kAuto, -1, 4);
  ASSERT_TRUE(table.ok());
  const int paths = (*table)->Paths(0, 7);
  ASSERT_GT(paths, 1);
  SourceRouting routing(*g, std::move(*table), 2, /*in_order=*/false);
  for (int k = 0; k < paths; ++k) {
    for (const RouteHop& hop : routing.table().Path(0, 7, k)) {
      uint32_t state = 0;
      RouteRequest r;
      r.node = hop.node;
      r.src = 0;
      r.dst = 7;
      r.route = k;
      r.message_state = &state;
      RouteResult out;
      routing.Route(r, &out);
      ASSERT_EQ(out.size(), 1);
      EXPECT_EQ(out[0].port, hop.port);
      EXPECT_EQ(out[0].vc_mask, 3u);
    }
  }
  Result<std::unique_ptr<SourceRouteTable>> one =
      SourceRouteTable::Build(*g, SourceRouteMode::kAuto, -1, 1);
  SourceRouting ordered(*g, std::move(*one), 4, /*in_order=*/true);
  EXPECT_EQ(__builtin_popcount(ordered.PairVcs(0, 7)), 1);
  EXPECT_EQ(ordered.PairVcs(0, 7), ordered.PairVcs(0, 7));
}

TEST(SourceRoutesTest, Errors) {
  Result<GraphSpec> spec = TreeSpec(2, 2, 1);
  std::unique_ptr<GraphTopology> g = Make(*spec);
  Result<std::unique_ptr<SourceRouteTable>> bad_root =
      SourceRouteTable::Build(*g, SourceRouteMode::kUpDown, 0, 1);  // node 0 is an end node
  ASSERT_FALSE(bad_root.ok());
  EXPECT_EQ(bad_root.status().message().rfind("routing.root:", 0), 0u);
  EXPECT_FALSE(SourceRouteTable::Build(*g, SourceRouteMode::kAuto, -1, 0).ok());
}

}  // namespace
}  // namespace ukai::sim
