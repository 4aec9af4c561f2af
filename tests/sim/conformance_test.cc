// Conformance of every registered routing algorithm on small meshes and tori with 0, 1, 2
// and 4 random faulty nodes (fault-tolerant algorithms only; dor, duato and source
// fault-free),
// many seeds: a burst of messages between random healthy nodes is all delivered (none
// undeliverable; dor-detour, whose detours its sender supplies: delivered or counted
// undeliverable), the watchdog never fires, flit and credit bookkeeping holds, and hops are
// minimal where the algorithm claims it (dor, duato, detour-nf without faults; detour-ud
// without faults for messages that did not enter recovery). The indirect topologies (cmesh,
// flatfly, fattree, dragonfly) with every algorithm that runs on them: SwitchConformanceTest.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/experiment/config_schema.h"
#include "sim/routing/registry.h"
#include "sim/routing/route_state.h"
#include "sim/routing/switch_routings.h"
#include "sim/topology/factory.h"
#include "sim/topology/switch_topology.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

struct Case {
  std::string algorithm;
  TopologyKind kind;
  std::vector<int> k;
  int vcs;
  int faults;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = c.algorithm;
  s.append(c.kind == TopologyKind::kTorus ? "_torus" : "_mesh");
  for (int k : c.k) s.append("_").append(std::to_string(k));
  s.append("_vcs").append(std::to_string(c.vcs));
  s.append("_faults").append(std::to_string(c.faults));
  for (char& ch : s) {
    if (ch == '-') ch = '_';
  }
  return s;
}

bool MinimalClaimed(const Case& c) {
  return c.faults == 0 &&
         (c.algorithm == "dor" || c.algorithm == "duato" || c.algorithm == "romm" ||
          c.algorithm == "min_adapt" || c.algorithm == "planar_adapt" ||
          c.algorithm == "detour-nf" || c.algorithm == "detour-ud");
}

class ConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConformanceTest, DeliversEveryMessage) {
  const Case& cs = GetParam();
  // detour-nf may refuse placements (documented): it tries more seeds and needs fewer.
  const bool may_refuse = cs.algorithm == "detour-nf";
  // dor-detour routes round a fault only along via nodes its sender supplies (the gateway
  // NIC's detour table); these messages carry none, so one whose dimension-order path
  // crosses a fault must be reported undeliverable: none lost, none hung.
  const bool sender_detours = cs.algorithm == "dor-detour";
  int ran = 0, tried = 0;
  for (uint64_t seed = 1; seed <= (may_refuse ? 40u : 12u) && ran < 12; ++seed) {
    ++tried;
    SimConfig c = testing::SmallConfig(cs.kind, cs.k, cs.algorithm.c_str());
    c.router.vcs = cs.vcs;
    c.seed = seed;
    c.faults.random_nodes = cs.faults;
    c.routing.timeout_cycles = 32;  // detour-ud: recovery happens in these short runs
    Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
    if (!made.ok() && made.status().message().find("cannot handle") != std::string::npos) {
      continue;  // detour-nf: a placement it documents it cannot handle
    }
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Network& net = **made;
    const auto& cube = static_cast<const KaryNCube&>(net.topology());
    std::vector<int> healthy;
    for (int v = 0; v < cube.NumNodes(); ++v) {
      if (cube.NodeAlive(v)) healthy.push_back(v);
    }
    Rng rng(seed);
    int64_t created = 0;
    for (int round = 0; round < 12; ++round) {  // a burst: 12 messages per node at once
      for (int src : healthy) {
        int dst = src;
        while (dst == src) dst = healthy[rng.Uniform(healthy.size())];
        net.CreateMessage(src, dst, 1 + static_cast<int>(rng.Uniform(12)));
        ++created;
      }
    }
    int64_t delivered = 0;
    while (delivered + (sender_detours ? net.messages_undeliverable() : 0) < created &&
           net.now() < 200000) {
      net.Step();
      ASSERT_FALSE(net.Stalled(5000)) << net.DeadlockStatus(5000).ToString();
      for (const Delivery& d : net.deliveries()) {
        ++delivered;
        const bool recovered = (d.routing_state & kRecoveryBit) != 0;
        if (MinimalClaimed(cs) && !recovered) {
          EXPECT_EQ(d.hops, cube.Distance(d.src, d.dst)) << d.src << "->" << d.dst;
        }
      }
    }
    if (sender_detours) {
      EXPECT_EQ(delivered + net.messages_undeliverable(), created) << "seed " << seed;
      if (cs.faults == 0) {
        EXPECT_EQ(net.messages_undeliverable(), 0);
      }
    } else {
      EXPECT_EQ(delivered, created) << "seed " << seed;
      EXPECT_EQ(net.messages_undeliverable(), 0);
    }
    EXPECT_EQ(net.flits_in_network(), 0);
    EXPECT_TRUE(net.CheckInvariants().ok()) << net.CheckInvariants().ToString();
    ++ran;
  }
  EXPECT_GE(ran, may_refuse ? 1 : 12) << "placements tried: " << tried;
}

// Whether the algorithm runs on a fault-free 4x4 mesh or torus (the indirect topologies'
// algorithms do not: SwitchConformanceTest below).
bool RunsOnCubes(const RoutingEntry& e) {
  for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
    SimConfig c = testing::SmallConfig(kind, {4, 4}, std::string(e.name).c_str());
    std::unique_ptr<KaryNCube> cube = testing::MakeCube(kind, {4, 4});
    if (e.supports(*cube, c).ok()) return true;
  }
  return false;
}

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (const RoutingEntry& e : RoutingAlgorithms()) {
    if (!RunsOnCubes(e)) continue;
    const std::string a(e.name);
    const bool tolerant = a != "dor" && a != "duato" && a != "min_adapt" && a != "valiant" &&
                          a != "romm" && a != "source" && a != "planar_adapt";
    for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
      if (a == "planar_adapt" && kind == TopologyKind::kTorus) continue;  // mesh only
      for (std::vector<int> k : {std::vector<int>{4, 4}, std::vector<int>{5, 3}}) {
        for (int faults : {0, 1, 2, 4}) {
          if (faults > 0 && !tolerant) continue;
          out.push_back({a, kind, k, 4, faults});
          if (a == "detour-ud") out.push_back({a, kind, k, 2, faults});  // 1 FA + 1 UD
          if ((a == "valiant" || a == "romm") && kind == TopologyKind::kMesh) {
            out.push_back({a, kind, k, 2, faults});  // one VC per phase
          }
          if (a == "planar_adapt") out.push_back({a, kind, k, 3, faults});  // one per class
        }
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, ConformanceTest, ::testing::ValuesIn(AllCases()), Name);

// The indirect topologies (topology/switch_topology.h): every registered algorithm that runs
// on one, with its fewest VCs and with 4; a burst between random terminals is all
// delivered, nothing stalls, bookkeeping holds, and hops are minimal where the algorithm
// promises it (every one but valiant and ugal, which are at least minimal).
struct SwitchCase {
  std::string algorithm;
  TopologyKind kind;
  int vcs;
  bool booksim_vcs = false;  // the dragonfly's routing.dragonfly_vcs = booksim
};

SimConfig SwitchConfig(TopologyKind kind, const std::string& algorithm) {
  SimConfig c;
  c.network.topology = kind;
  c.routing.algorithm = algorithm;
  if (kind == TopologyKind::kFatTree) {
    c.network.n = 3;
    c.network.k = {3, 3, 3};
  } else if (kind == TopologyKind::kDragonfly) {
    c.network.dragonfly_p = 2;
  } else {  // cmesh, flatfly: 4x3 routers, 2 terminals each
    c.network.n = 2;
    c.network.k = {4, 3};
    c.network.concentration = 2;
  }
  return c;
}

std::string SwitchName(const ::testing::TestParamInfo<SwitchCase>& info) {
  const SwitchCase& c = info.param;
  std::string topo(TopologyName(c.kind));
  return c.algorithm + "_" + topo + "_vcs" + std::to_string(c.vcs) +
         (c.booksim_vcs ? "_booksim" : "");
}

class SwitchConformanceTest : public ::testing::TestWithParam<SwitchCase> {};

TEST_P(SwitchConformanceTest, DeliversEveryMessage) {
  const SwitchCase& cs = GetParam();
  const bool minimal = cs.algorithm != "valiant" && cs.algorithm != "ugal";
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SimConfig c = SwitchConfig(cs.kind, cs.algorithm);
    c.router.vcs = cs.vcs;
    if (cs.booksim_vcs) c.routing.dragonfly_vcs = DragonflyVcs::kBooksim;
    c.seed = seed;
    Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Network& net = **made;
    const auto& topo = dynamic_cast<const SwitchTopology&>(net.topology());
    Rng rng(seed);
    int64_t created = 0;
    for (int round = 0; round < 8; ++round) {  // a burst: 8 messages per terminal at once
      for (int src = 0; src < topo.NumTerminals(); ++src) {
        int dst = src;
        while (dst == src) dst = static_cast<int>(rng.Uniform(topo.NumTerminals()));
        net.CreateMessage(src, dst, 1 + static_cast<int>(rng.Uniform(8)));
        ++created;
      }
    }
    int64_t delivered = 0, longer = 0;
    while (delivered < created && net.now() < 200000) {
      net.Step();
      ASSERT_FALSE(net.Stalled(5000)) << net.DeadlockStatus(5000).ToString();
      for (const Delivery& d : net.deliveries()) {
        ++delivered;
        const int shortest = topo.Distance(d.src, d.dst);
        if (minimal) {
          EXPECT_EQ(d.hops, shortest) << d.src << "->" << d.dst;
        } else {
          EXPECT_GE(d.hops, shortest) << d.src << "->" << d.dst;
          longer += d.hops > shortest;
        }
      }
    }
    EXPECT_EQ(delivered, created) << "seed " << seed;
    EXPECT_EQ(net.messages_undeliverable(), 0);
    EXPECT_EQ(net.flits_in_network(), 0);
    EXPECT_TRUE(net.CheckInvariants().ok()) << net.CheckInvariants().ToString();
    if (cs.algorithm == "valiant") {
      EXPECT_GT(longer, 0);  // it does take detours
    }
  }
}

std::vector<SwitchCase> SwitchCases() {
  std::vector<SwitchCase> out;
  for (const RoutingEntry& e : RoutingAlgorithms()) {
    for (TopologyKind kind : {TopologyKind::kCMesh, TopologyKind::kFlatFly, TopologyKind::kFatTree,
                              TopologyKind::kDragonfly}) {
      SimConfig c = SwitchConfig(kind, std::string(e.name));
      Result<std::unique_ptr<Topology>> topo = MakeTopology(c.network);
      if (!topo.ok()) continue;
      const int classes = SwitchRoutingClasses(**topo, e.name);
      if (classes == 0) continue;
      out.push_back({std::string(e.name), kind, classes});
      if (classes != 4) out.push_back({std::string(e.name), kind, 4});
      if (kind == TopologyKind::kDragonfly) out.push_back({std::string(e.name), kind, 4, true});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, SwitchConformanceTest, ::testing::ValuesIn(SwitchCases()),
                         SwitchName);

TEST(SwitchConformanceTest, CoversEveryIndirectAlgorithm) {
  std::vector<std::string> names;
  for (const SwitchCase& c : SwitchCases()) names.push_back(c.algorithm);
  for (const char* a : {"min", "ugal", "valiant", "nca", "anca", "dor"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), a), names.end()) << a;
  }
}

}  // namespace
}  // namespace ukai::sim
