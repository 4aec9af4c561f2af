// DOR on a torus, routing.dor_tie and routing.dor_dateline, checked on the routing
// function itself: the ideal uniform capacity each tie rule gives (channel loads of every
// source-destination pair), and deadlock freedom of each dateline scheme as an acyclic
// channel dependency graph over (channel, VC), built from every route with every VC
// choice the routing allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/routing/cdg_check.h"
#include "sim/routing/dimension_order.h"
#include "sim/routing/dor.h"
#include "sim/routing/route_state.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

std::unique_ptr<KaryNCube> Torus(std::vector<int> k) {
  NetworkConfig c;
  c.topology = TopologyKind::kTorus;
  c.n = static_cast<int>(k.size());
  c.k = std::move(k);
  auto t = KaryNCube::Create(c);
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

// A request of `node` for a head that came in on (in_port, in_vc), of a message src -> dst
// with routing state `state`, at cycle `now`.
RouteRequest Request(int node, int in_port, int in_vc, int src, int dst, int64_t now,
                     uint32_t* state) {
  RouteRequest req;
  req.node = node;
  req.in_port = in_port;
  req.in_vc = in_vc;
  req.src = src;
  req.dst = dst;
  req.now = now;
  req.message_state = state;
  return req;
}

// Follows the route src -> dst (the first VC of every mask), adding `weight` to the load
// of every channel (node * ports + port) it crosses. `now` is the cycle of the first hop.
void AddPathLoad(const KaryNCube& t, const DorRouting& r, int src, int dst, int64_t now,
                 double weight, std::vector<double>* load) {
  uint32_t state = 0;
  int node = src, in_port = t.PePort(), in_vc = 0;
  for (int hops = 0; node != dst; ++hops) {
    ASSERT_LT(hops, t.NumNodes()) << src << "->" << dst;
    const RouteRequest req = Request(node, in_port, in_vc, src, dst, now + hops, &state);
    RouteResult out;
    r.Route(req, &out);
    ASSERT_EQ(out.size(), 1);
    const int port = out[0].port;
    (*load)[static_cast<size_t>(node) * t.NumNetworkPorts() + port] += weight;
    const PortRef next = t.Neighbor(node, port);
    node = next.node;
    in_port = next.port;
    in_vc = __builtin_ctz(out[0].vc_mask);
  }
}

// Ideal saturation throughput of uniform traffic (every source sends to the N-1 others):
// 1 / the largest channel load per unit of injection rate.
double UniformCapacity(const KaryNCube& t, DorTieRule tie, int draws) {
  const DorRouting r(t, 4, tie, DorDateline::kShared);
  const int n = t.NumNodes();
  std::vector<double> load(static_cast<size_t>(n) * t.NumNetworkPorts(), 0.0);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      for (int i = 0; i < draws; ++i) {
        AddPathLoad(t, r, s, d, 1000 * i + 7 * s, 1.0 / (n - 1) / draws, &load);
      }
    }
  }
  return 1.0 / *std::max_element(load.begin(), load.end());
}

TEST(DorOptionsTest, TieRulesGiveTheirIdealUniformCapacity) {
  auto t10 = Torus({10, 10});
  // "+" ties: a "+" channel carries offsets 1..5 of 10 sources per ring: 150/99 per unit.
  EXPECT_NEAR(UniformCapacity(*t10, DorTieRule::kPlus, 1), 99.0 / 150.0, 1e-9);
  // Balanced: offsets 1..4 plus half of the ties: 125/99.
  EXPECT_NEAR(UniformCapacity(*t10, DorTieRule::kParity, 1), 99.0 / 125.0, 1e-9);
  // Random per message: balanced on average (64 draws per pair).
  EXPECT_NEAR(UniformCapacity(*t10, DorTieRule::kRandom, 64), 99.0 / 125.0, 0.02);
  // k odd: no ties, every rule the same (offsets 1..5 of 11: 15 * 11 / 120).
  auto t11 = Torus({11, 11});
  for (DorTieRule tie : {DorTieRule::kPlus, DorTieRule::kParity, DorTieRule::kRandom}) {
    EXPECT_NEAR(UniformCapacity(*t11, tie, 1), 120.0 / 165.0, 1e-9);
  }
}

TEST(DorOptionsTest, RandomTieIsDrawnOncePerMessageAndBalanced) {
  auto t = Torus({6, 4});
  int minus = 0;
  const int kMessages = 4000;
  for (int i = 0; i < kMessages; ++i) {
    uint32_t state = 0;
    const uint32_t first = DorTieMinusBits(*t, DorTieRule::kRandom, 0, 15, i, &state);
    // Later routers see the same choice, whatever the cycle.
    EXPECT_EQ(DorTieMinusBits(*t, DorTieRule::kRandom, 0, 15, i + 99, &state), first);
    minus += static_cast<int>(first & 1u);
    // Only the algorithm bits of the state word (route_state.h) are used: the statistics
    // bits (recovery, table, misrouted hops) stay 0.
    EXPECT_EQ(state & ~kRoutingBits, 0u);
  }
  EXPECT_NEAR(static_cast<double>(minus) / kMessages, 0.5, 0.04);
}

// The channel dependency graph of DOR on torus `t` with `vcs` VCs: a vertex per
// (node, output port, VC), an edge for every pair of consecutive (channel, VC) some route
// may take. Each hop is routed from every VC the previous hop allowed.
using Graph = std::map<int, std::set<int>>;

Graph DependencyGraph(const KaryNCube& t, const RoutingFunction& r, int vcs) {
  const int ports = t.NumNetworkPorts();
  auto id = [&](int node, int port, int vc) { return (node * ports + port) * vcs + vc; };
  Graph g;
  for (int s = 0; s < t.NumNodes(); ++s) {
    for (int d = 0; d < t.NumNodes(); ++d) {
      if (s == d) continue;
      // Frontier: (node, in_port, in_vc, the vertex we came on or -1); ties fixed "+" by
      // the routing under test or drawn once per message (state shared along the walk).
      struct At {
        int node, in_port, in_vc, from;
      };
      std::vector<At> frontier = {{s, t.PePort(), 0, -1}};
      uint32_t state = 0;
      std::set<std::vector<int>> seen;
      while (!frontier.empty()) {
        const At a = frontier.back();
        frontier.pop_back();
        if (a.node == d || !seen.insert({a.node, a.in_port, a.in_vc, a.from}).second) continue;
        RouteRequest req;
        req.node = a.node;
        req.in_port = a.in_port;
        req.in_vc = a.in_vc;
        req.src = s;
        req.dst = d;
        req.message_state = &state;
        RouteResult out;
        r.Route(req, &out);
        for (int i = 0; i < out.size(); ++i) {
          for (uint32_t m = out[i].vc_mask; m != 0; m &= m - 1) {
            const int v = __builtin_ctz(m);
            const int vertex = id(a.node, out[i].port, v);
            if (a.from >= 0) g[a.from].insert(vertex);
            g[vertex];
            const PortRef next = t.Neighbor(a.node, out[i].port);
            frontier.push_back({next.node, next.port, v, vertex});
          }
        }
      }
    }
  }
  return g;
}

bool Acyclic(const Graph& g) {
  std::map<int, int> indegree;
  for (const auto& [v, outs] : g) {
    indegree[v];
    for (int w : outs) ++indegree[w];
  }
  std::vector<int> ready;
  for (const auto& [v, deg] : indegree) {
    if (deg == 0) ready.push_back(v);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const int v = ready.back();
    ready.pop_back();
    ++done;
    auto it = g.find(v);
    if (it == g.end()) continue;
    for (int w : it->second) {
      if (--indegree[w] == 0) ready.push_back(w);
    }
  }
  return done == indegree.size();
}

// A routing that lets every message use every VC of every hop (no dateline): its
// dependency graph must have cycles, or the check above could not fail.
class NoDateline final : public RoutingFunction {
 public:
  NoDateline(const KaryNCube& t, int vcs) : t_(t), vcs_(vcs) {}
  void Route(const RouteRequest& r, RouteResult* out) const override {
    out->Add(NextDorHop(t_, r.node, r.dst).port, (1u << vcs_) - 1);
  }

 private:
  const KaryNCube& t_;
  int vcs_;
};

// BookSim2's classes (booksim) too, with an even number of VCs; with an odd number its two
// halves share the middle VC, which then carries routes of both classes round the ring.
TEST(DorOptionsTest, EveryDatelineHasAnAcyclicDependencyGraph) {
  for (const std::vector<int>& k : {std::vector<int>{5, 4}, std::vector<int>{4, 4},
                                    std::vector<int>{2, 3, 4}, std::vector<int>{7}}) {
    auto t = Torus(k);
    for (int vcs : {2, 3, 4}) {
      for (DorDateline dl : {DorDateline::kShared, DorDateline::kSplit, DorDateline::kBooksim}) {
        for (DorTieRule tie : {DorTieRule::kPlus, DorTieRule::kRandom}) {
          const DorRouting r(*t, vcs, tie, dl);
          const bool shared_vc = dl == DorDateline::kBooksim && vcs % 2 == 1;
          EXPECT_EQ(Acyclic(DependencyGraph(*t, r, vcs)), !shared_vc)
              << t->Describe() << " vcs=" << vcs << " dateline=" << static_cast<int>(dl);
        }
      }
      EXPECT_FALSE(Acyclic(DependencyGraph(*t, NoDateline(*t, vcs), vcs))) << t->Describe();
    }
  }
}

// The number of (channel, VC) vertices routes may use, over all pairs.
size_t UsableVcs(const KaryNCube& t, DorDateline dl, int vcs) {
  return DependencyGraph(t, DorRouting(t, vcs, DorTieRule::kPlus, dl), vcs).size();
}

TEST(DorOptionsTest, SharedDatelineOpensTheVcsSplitLeavesIdle) {
  auto t = Torus({6, 6});
  // Split: class 1 is never used on the wrap channel, and class 0 only on the k/2
  // channels before the dateline (minimal routes wrap only from there): 360 of the 576
  // (channel, VC) of a 6x6 torus with 4 VCs. Shared: every VC of every channel carries
  // some route.
  const size_t split = UsableVcs(*t, DorDateline::kSplit, 4);
  const size_t shared = UsableVcs(*t, DorDateline::kShared, 4);
  const size_t all = static_cast<size_t>(t->NumNodes()) * t->NumNetworkPorts() * 4;
  EXPECT_EQ(shared, all);
  EXPECT_EQ(split, 360u);
  // A message that never crosses the wrap channel may start on either class.
  uint32_t state = 0;
  RouteRequest req;
  req.node = t->NodeAt({1, 0});
  req.in_port = t->PePort();
  req.dst = t->NodeAt({3, 0});
  req.src = req.node;
  req.message_state = &state;
  RouteResult out;
  DorRouting(*t, 4, DorTieRule::kPlus, DorDateline::kShared).Route(req, &out);
  EXPECT_EQ(out[0].vc_mask, 0xfu);
  out.Clear();
  DorRouting(*t, 4, DorTieRule::kPlus, DorDateline::kSplit).Route(req, &out);
  EXPECT_EQ(out[0].vc_mask, 0xcu);
}

// `ukai sim check` checks the dateline and tie options `dor` runs with: the shared dateline
// uses every (channel, VC) of the 10x10 torus (4 x 100 x 4), split fewer; all three acyclic.
TEST(DorOptionsTest, CheckerFollowsTheDatelineOption) {
  SimConfig c;
  c.routing.algorithm = "dor";
  c.routing.dor_dateline = DorDateline::kShared;
  Result<CdgReport> shared = CheckDeadlockFreedom(c);
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_TRUE(shared->ok) << shared->text;
  EXPECT_EQ(shared->channels, 1600);
  c.routing.dor_dateline = DorDateline::kSplit;
  Result<CdgReport> split = CheckDeadlockFreedom(c);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_TRUE(split->ok) << split->text;
  EXPECT_LT(split->channels, 1600);
  // BookSim2's classes: minimal routes wrap within k/2 hops, so every class-1 route crosses
  // the wrap channel and none closes the ring.
  c.routing.dor_dateline = DorDateline::kBooksim;
  Result<CdgReport> booksim = CheckDeadlockFreedom(c);
  ASSERT_TRUE(booksim.ok()) << booksim.status().ToString();
  EXPECT_TRUE(booksim->ok) << booksim->text;
  EXPECT_NE(booksim->text.find("BookSim2's dateline classes"), std::string::npos) << booksim->text;
}

// The VC masks of the hops of the route src -> dst (the first VC of every mask taken).
std::vector<uint32_t> PathMasks(const KaryNCube& t, const DorRouting& r, int src, int dst) {
  std::vector<uint32_t> masks;
  uint32_t state = 0;
  int node = src, in_port = t.PePort(), in_vc = 0;
  while (node != dst && masks.size() <= static_cast<size_t>(t.NumNodes())) {
    RouteResult out;
    r.Route(Request(node, in_port, in_vc, src, dst, 5, &state), &out);
    if (out.size() != 1) break;
    masks.push_back(out[0].vc_mask);
    const PortRef next = t.Neighbor(node, out[0].port);
    node = next.node;
    in_port = next.port;
    in_vc = __builtin_ctz(out[0].vc_mask);
  }
  return masks;
}

// routing.dor_dateline = "booksim" (BookSim2's dim_order_torus): a message that wraps in a
// dimension uses the upper VCs on every hop of that ring, before the wrap channel and
// after it; one that does not wrap the lower VCs; with odd V the classes share the middle
// VC (BookSim2's ranges). The split dateline switches class at the wrap instead.
TEST(DorOptionsTest, BooksimDatelineFixesTheClassWhereTheMessageEntersARing) {
  auto ring = Torus({8});
  const DorRouting booksim(*ring, 4, DorTieRule::kPlus, DorDateline::kBooksim);
  EXPECT_EQ(PathMasks(*ring, booksim, 6, 1), (std::vector<uint32_t>{0xc, 0xc, 0xc}));  // wraps
  EXPECT_EQ(PathMasks(*ring, booksim, 1, 4), (std::vector<uint32_t>{0x3, 0x3, 0x3}));
  EXPECT_EQ(PathMasks(*ring, booksim, 1, 6), (std::vector<uint32_t>{0xc, 0xc, 0xc}));  // "-"
  const DorRouting split(*ring, 4, DorTieRule::kPlus, DorDateline::kSplit);
  EXPECT_EQ(PathMasks(*ring, split, 6, 1), (std::vector<uint32_t>{0x3, 0x3, 0xc}));
  const DorRouting odd(*ring, 3, DorTieRule::kPlus, DorDateline::kBooksim);
  EXPECT_EQ(PathMasks(*ring, odd, 6, 1), (std::vector<uint32_t>{0x6, 0x6, 0x6}));
  EXPECT_EQ(PathMasks(*ring, odd, 1, 4), (std::vector<uint32_t>{0x3, 0x3, 0x3}));
  // Each dimension takes its class at its own entry: x 6 -> 1 wraps "+", then y 5 -> 2 goes
  // "-" without wrapping.
  auto t = Torus({8, 8});
  const DorRouting r(*t, 4, DorTieRule::kPlus, DorDateline::kBooksim);
  EXPECT_EQ(PathMasks(*t, r, t->NodeAt({6, 5}), t->NodeAt({1, 2})),
            (std::vector<uint32_t>{0xc, 0xc, 0xc, 0x3, 0x3, 0x3}));
}

// Route() on tori small enough for its hop table (dor.h) gives, for every node,
// destination, input port and VC, tie choice, tie rule and dateline, the hop and VCs the
// dimension-order functions compute directly (what Route() does on larger tori).
TEST(DorOptionsTest, HopTableMatchesTheComputedHop) {
  struct Case {
    std::vector<int> k;
    int vcs;
  };
  for (const Case& c : {Case{{8, 8}, 4}, Case{{4, 4, 4}, 2}, Case{{5, 6}, 3}, Case{{4, 4}, 1}}) {
    const auto t = Torus(c.k);
    for (DorTieRule tie : {DorTieRule::kRandom, DorTieRule::kParity, DorTieRule::kPlus}) {
      for (DorDateline line : {DorDateline::kShared, DorDateline::kSplit, DorDateline::kBooksim}) {
        const DorRouting routing(*t, c.vcs, tie, line);
        int checked = 0;
        for (int node = 0; node < t->NumNodes(); ++node) {
          for (int dst = 0; dst < t->NumNodes(); ++dst) {
            for (int in_port = 0; in_port <= t->PePort(); ++in_port) {
              for (int in_vc = 0; in_vc < c.vcs; ++in_vc) {
                for (uint32_t drawn = 0; drawn <= 8; drawn += tie == DorTieRule::kRandom ? 1 : 9) {
                  // kRandom: the tie bits already drawn (route_state.h bits 4-7), or (8) not
                  // drawn yet.
                  const uint32_t state0 =
                      tie == DorTieRule::kRandom && drawn < 8 ? 0x80u | drawn << 4 : 0u;
                  uint32_t state = state0, expect_state = state0;
                  const RouteRequest req =
                      Request(node, in_port, in_vc, (node + 3) % t->NumNodes(), dst, 17, &state);
                  RouteResult out;
                  routing.Route(req, &out);
                  const uint32_t ties =
                      tie == DorTieRule::kPlus
                          ? 0u
                          : DorTieMinusBits(*t, tie, req.src, dst, req.now, &expect_state);
                  const DorHop hop = NextDorHop(*t, node, dst, ties);
                  if (hop.port < 0) {
                    EXPECT_EQ(out.size(), 0);
                    continue;
                  }
                  const bool plus = (hop.port & 1) == 0;
                  const uint32_t mask =
                      line == DorDateline::kBooksim
                          ? BooksimClassMask(c.vcs,
                                             BooksimDatelineClass(plus, t->Coord(req.src, hop.dim),
                                                                  t->Coord(dst, hop.dim)))
                      : line == DorDateline::kShared
                          ? SharedDatelineMask(*t, hop, node, dst, in_port, in_vc, c.vcs)
                          : ClassMask(0, c.vcs, hop.dateline_class);
                  if (mask == 0) {  // no VC may be taken from here: no candidate
                    EXPECT_EQ(out.size(), 0);
                    continue;
                  }
                  ASSERT_EQ(out.size(), 1) << node << "->" << dst;
                  EXPECT_EQ(out[0].port, hop.port) << node << "->" << dst;
                  EXPECT_EQ(out[0].vc_mask, mask)
                      << node << "->" << dst << " in " << in_port << "/" << in_vc;
                  EXPECT_EQ(state, expect_state);
                  ++checked;
                }
              }
            }
          }
        }
        EXPECT_GT(checked, 0);
      }
    }
  }
}

}  // namespace
// RouteOne() (what the router calls instead of Route()) gives Route()'s one candidate,
// packed, and sets the message state alike: on a torus with the hop table, one without
// (too large for it) and a mesh, for every tie rule and dateline.
TEST(DorOptionsTest, RouteOneMatchesRoute) {
  NetworkConfig mesh;
  mesh.topology = TopologyKind::kMesh;
  mesh.n = 2;
  mesh.k = {5, 4};
  auto m = KaryNCube::Create(mesh);
  ASSERT_TRUE(m.ok());
  std::vector<std::unique_ptr<KaryNCube>> topologies;
  topologies.push_back(Torus({8, 8}));
  topologies.push_back(Torus({20, 20}));
  topologies.push_back(std::move(*m));
  for (const auto& t : topologies) {
    for (DorTieRule tie : {DorTieRule::kRandom, DorTieRule::kParity, DorTieRule::kPlus}) {
      for (DorDateline line : {DorDateline::kShared, DorDateline::kSplit, DorDateline::kBooksim}) {
        const DorRouting routing(*t, 4, tie, line);
        int checked = 0;
        for (int node = 0; node < t->NumNodes(); node += 3) {
          for (int dst = 0; dst < t->NumNodes(); dst += 2) {
            for (int in_port = 0; in_port <= t->PePort(); ++in_port) {
              for (int in_vc = 0; in_vc < 4; ++in_vc) {
                uint32_t state = 0, one_state = 0;
                const RouteRequest req = Request(node, in_port, in_vc, (node + 5) % t->NumNodes(),
                                                 dst, 1000 + node, &state);
                RouteResult out;
                routing.Route(req, &out);
                const uint64_t one =
                    routing.RouteOne(node, in_port, in_vc, req.src, dst, req.now, &one_state);
                ASSERT_LE(out.size(), 1);
                const uint64_t expect =
                    out.size() == 0
                        ? 0
                        : uint64_t{out[0].vc_mask} << 32 | static_cast<uint32_t>(out[0].port + 1);
                ASSERT_EQ(one, expect) << node << "->" << dst << " in " << in_port << "/" << in_vc;
                ASSERT_EQ(one_state, state);
                checked += out.size();
              }
            }
          }
        }
        EXPECT_GT(checked, 0);
      }
    }
  }
}

}  // namespace ukai::sim
