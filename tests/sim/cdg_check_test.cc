// The deadlock-freedom checker (routing/cdg_check.h): every algorithm proved on fault-free
// meshes and tori; up*/down* (updown, detour-ud's UD-VC) and detour-nf always acyclic and
// connected on random fault sets (property test); duato's and detour-nf's EXTENDED graphs
// (indirect dependencies through the adaptive VCs) acyclic over many seeds; broken
// sub-functions are caught with a cycle or a dead end, and a ring whose direct graph is
// acyclic but whose extended graph is not is rejected only by the extended check.
#include "sim/routing/cdg_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "sim/routing/detour_ud.h"
#include "sim/routing/dimension_order.h"
#include "sim/topology/faults.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

TEST(CdgCheckTest, EveryAlgorithmFaultFree) {
  for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
    for (const char* algo : {"dor", "duato", "detour-nf", "updown", "detour-ud"}) {
      const std::vector<std::vector<int>> shapes = {{4, 4}, {3, 5}, {3, 3, 3}, {6}};
      for (const std::vector<int>& k : shapes) {
        SimConfig c = testing::SmallConfig(kind, k, algo);
        Result<CdgReport> r = CheckDeadlockFreedom(c);
        ASSERT_TRUE(r.ok()) << algo << ": " << r.status().ToString();
        EXPECT_TRUE(r->ok) << algo << ": " << r->text;
        EXPECT_GT(r->channels, 0);
      }
    }
  }
}

TEST(CdgCheckTest, UpDownAndDetoursAreDeadlockFreeOnRandomFaultSets) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const TopologyKind kind = seed % 2 ? TopologyKind::kTorus : TopologyKind::kMesh;
    const int kx = 3 + static_cast<int>(seed % 4), ky = 3 + static_cast<int>((seed / 4) % 4);
    for (const char* algo : {"updown", "detour-ud", "detour-nf"}) {
      SimConfig c = testing::SmallConfig(kind, {kx, ky}, algo);
      c.seed = seed;
      c.faults.random_nodes = static_cast<int>(seed % 4);
      c.faults.random_channels = static_cast<int>((seed / 3) % 4);
      c.routing.root = static_cast<int>(seed % (kx * ky));
      Result<CdgReport> r = CheckDeadlockFreedom(c);
      if (!r.ok()) {
        // Only detour-nf may refuse a placement (documented); random draws may also fail
        // to keep a tiny network connected.
        const std::string m = r.status().message();
        EXPECT_TRUE(m.find("cannot handle") != std::string::npos ||
                    m.find("no placement") != std::string::npos)
            << algo << " seed " << seed << ": " << m;
        continue;
      }
      EXPECT_TRUE(r->ok) << algo << " seed " << seed << ": " << r->text;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// DOR on a torus without the dateline classes (one VC for everything): a ring cycle.
class NoDatelineDor final : public EscapeFunction {
 public:
  explicit NoDatelineDor(const KaryNCube& t) : t_(t) {}
  std::string Describe() const override { return "DOR without dateline"; }
  void Next(int node, int, int, int dst, std::vector<EscapeHop>* out) const override {
    const DorHop hop = NextDorHop(t_, node, dst);
    if (hop.port >= 0) out->push_back({hop.port, 0});
  }

 private:
  const KaryNCube& t_;
};

// Routes to one destination only: a dead end for every other.
class OneWay final : public EscapeFunction {
 public:
  explicit OneWay(const KaryNCube& t) : t_(t) {}
  std::string Describe() const override { return "one way"; }
  void Next(int node, int, int, int dst, std::vector<EscapeHop>* out) const override {
    if (dst == 0) out->push_back({NextDorHop(t_, node, dst).port, 0});
    (void)node;
  }

 private:
  const KaryNCube& t_;
};

TEST(CdgCheckTest, FindsCyclesAndDeadEnds) {
  auto t = testing::MakeCube(TopologyKind::kTorus, {5, 5});
  const NoDatelineDor ring(*t);
  const OneWay one_way(*t);
  CdgReport r = CheckEscape(*t, 2, ring);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.text.find("NOT deadlock-free: DOR without dateline: dependency cycle of 5 channels"),
            std::string::npos)
      << r.text;
  r = CheckEscape(*t, 2, one_way);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.text.find("NOT connected: one way: dead end entering at"), std::string::npos)
      << r.text;
  // A sub-function that uses a faulty channel.
  t->SetChannelAlive(t->NodeAt({1, 0}), 0, false);
  r = CheckEscape(*t, 2, ring);
  EXPECT_NE(r.text.find("faulty or missing channel"), std::string::npos) << r.text;
}

// Property: duato (fault-free: it is not fault tolerant) and detour-nf with 0, 1, 2 or 4
// random faulty nodes / channels, on small meshes and tori, several VC counts: the extended
// graph (with its indirect dependencies) is acyclic and the escape connected.
TEST(CdgCheckTest, DuatoAndDetourNfExtendedGraphsAreAcyclic) {
  int checked = 0, refused = 0;
  for (uint64_t seed = 1; seed <= 48; ++seed) {
    std::mt19937_64 rng(seed);
    const TopologyKind kind = seed % 2 ? TopologyKind::kTorus : TopologyKind::kMesh;
    std::vector<int> k = {3 + static_cast<int>(rng() % 4), 3 + static_cast<int>(rng() % 4)};
    if (seed % 8 == 0) k.push_back(3);
    const int faults[] = {0, 1, 2, 4};
    for (const char* algo : {"duato", "detour-nf"}) {
      SimConfig c = testing::SmallConfig(kind, k, algo);
      c.seed = seed;
      c.router.vcs = 4 + static_cast<int>(rng() % 3);
      if (std::string(algo) == "duato") {
        c.routing.duato_atomic = seed % 3 ? DuatoAtomic::kAdaptive : DuatoAtomic::kAll;
      } else {
        const int f = faults[seed % 4];
        c.faults.random_nodes = seed % 5 == 0 ? 0 : f;
        c.faults.random_channels = seed % 5 == 0 ? f : 0;
      }
      Result<CdgReport> r = CheckDeadlockFreedom(c);
      if (!r.ok()) {  // detour-nf refuses some placements (documented), or tiny networks split
        const std::string m = r.status().message();
        EXPECT_TRUE(m.find("cannot handle") != std::string::npos ||
                    m.find("no placement") != std::string::npos)
            << algo << " seed " << seed << ": " << m;
        ++refused;
        continue;
      }
      EXPECT_TRUE(r->ok) << algo << " seed " << seed << ": " << r->text;
      if (*std::max_element(k.begin(), k.end()) >= 4) {  // on 3-rings a hop finishes a dimension
        EXPECT_GT(r->indirect, 0) << algo << " seed " << seed;  // the extended graph was built
      }
      EXPECT_NE(r->text.find("extended dependency graph is acyclic"), std::string::npos);
      ++checked;
    }
  }
  EXPECT_GT(checked, 80);
  EXPECT_LT(refused, 10);
}

// routing.duato_atomic = escape | none leave the adaptive VCs non-atomic under wormhole:
// the queue dependencies close a cycle (these settings deadlock in deadlock_itest.cc);
// virtual cut-through needs no atomic VCs.
TEST(CdgCheckTest, NonAtomicAdaptiveVcsAreRejected) {
  for (DuatoAtomic a : {DuatoAtomic::kEscape, DuatoAtomic::kNone}) {
    for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
      SimConfig c = testing::SmallConfig(kind, {4, 4}, "duato");
      c.routing.duato_atomic = a;
      Result<CdgReport> r = CheckDeadlockFreedom(c);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_FALSE(r->ok) << r->text;
      EXPECT_NE(r->text.find("[queue: "), std::string::npos) << r->text;
      c.router.switching = Switching::kVirtualCutThrough;
      r = CheckDeadlockFreedom(c);
      ASSERT_TRUE(r.ok());
      EXPECT_TRUE(r->ok) << r->text;
    }
  }
}

// Duato's example style: a unidirectional ring of 6 nodes (the "+" channels of a 1-D torus),
// VC 0 / VC 1 escape dateline classes, VC 2 adaptive ("+" until the destination). The
// escape keeps the class of its input VC and moves from class 0 to class 1 on crossing the
// wrap-around channel (5 -> 0); a message entering it (from the PE or from the adaptive VC)
// starts in class 0, even when it has already crossed. Direct graph: class 0 channels 0..5,
// then class 1 from 0: acyclic. Extended: a message for (1) on (3 -> 4, class 0) goes
// adaptive 4 -> 5 -> 0 (over the wrap) and re-enters class 0 on 0 -> 1; one for (4) on
// (0 -> 1, class 0) goes adaptive 1 -> 2 -> 3 and re-enters on 3 -> 4: a cycle of two
// indirect dependencies.
class ReEnteringRing final : public EscapeFunction {
 public:
  explicit ReEnteringRing(const KaryNCube& t) : t_(t) {}
  std::string Describe() const override { return "ring re-entering class 0"; }
  void Next(int node, int in_port, int in_vc, int, std::vector<EscapeHop>* out) const override {
    const bool escape_in = in_port < t_.NumNetworkPorts() && in_vc < 2;
    const int cls = escape_in && (in_vc == 1 || node == 0) ? 1 : 0;
    out->push_back({0, cls});
  }
  uint32_t AdaptivePorts(int, int in_port, int in_vc, int) const override {
    (void)in_port;
    (void)in_vc;
    return 1u;  // the "+" port on the adaptive VC
  }
  int AdaptiveVc() const override { return 2; }

 private:
  const KaryNCube& t_;
};

TEST(CdgCheckTest, IndirectDependenciesCloseACycleTheDirectGraphMisses) {
  auto t = testing::MakeCube(TopologyKind::kTorus, {6});
  const ReEnteringRing ring(*t);
  CdgOptions direct_only;
  direct_only.indirect = false;
  CdgReport r = CheckEscape(*t, 3, ring, direct_only);
  EXPECT_TRUE(r.ok) << r.text;  // what the checker proved before: wrongly deadlock-free
  EXPECT_EQ(r.indirect, 0);
  r = CheckEscape(*t, 3, ring);
  EXPECT_FALSE(r.ok);
  EXPECT_GT(r.indirect, 0);
  // Two messages that each re-enter class 0 after adaptive hops wait for each other.
  EXPECT_NE(r.text.find("NOT deadlock-free: ring re-entering class 0: dependency cycle of 2 "
                        "channels (0 direct, 2 indirect dependencies):\n"
                        "  (3) +x vc 0 -> [indirect: destination (1), adaptive hops to (5), (0)]\n"
                        "  (0) +x vc 0 -> [indirect: destination (4), adaptive hops to (2), (3)]\n"
                        "  (3) +x vc 0"),
            std::string::npos)
      << r.text;
}

// Detour-UD: a message in recovery on the UD-VC is offered the UD-VC only (never an FA-VC),
// at every node, input port and destination, whether blocked or not; a head on an FA-VC
// that is not yet timed out is never offered the UD-VC. So the UD-VC's direct graph is its
// extended one.
TEST(CdgCheckTest, DetourUdRecoveryNeverLeavesTheUdVc) {
  for (int faults : {0, 2}) {
    SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {5, 4}, "detour-ud");
    c.faults.random_nodes = faults;
    auto t = testing::MakeCube(TopologyKind::kTorus, {5, 4});
    if (faults > 0) {
      Result<FaultPlan> plan = PlanFaults(*t, c.faults, c.seed);
      ASSERT_TRUE(plan.ok());
      plan->initial.ApplyTo(t.get());
    }
    const DetourUdRouting r(*t, c);
    const uint32_t ud = 1u << r.ud_vc();
    RouteResult out;
    int routed = 0;
    for (int v = 0; v < t->NumNodes(); ++v) {
      for (int d = 0; d < t->NumNodes(); ++d) {
        if (v == d || !t->NodeAlive(v) || !t->NodeAlive(d)) continue;
        for (int p = 0; p <= t->NumNetworkPorts(); ++p) {
          for (int64_t blocked : {int64_t{0}, c.routing.timeout_cycles * 2}) {
            for (uint32_t state : {kRecoveryBit, kRecoveryBit | kDownBit, 0u}) {
              RouteRequest q;
              q.node = v;
              q.in_port = p;
              q.in_vc = state != 0 ? r.ud_vc() : 0;
              q.dst = d;
              q.blocked_cycles = blocked;
              q.message_state = &state;
              out.Clear();
              r.Route(q, &out);
              const bool recovering = (state & kRecoveryBit) != 0;
              for (int i = 0; i < out.size(); ++i) {
                if (recovering) {
                  EXPECT_EQ(out[i].vc_mask, ud) << "node " << v << " dst " << d;
                } else {
                  EXPECT_EQ(out[i].vc_mask & ud, 0u) << "node " << v << " dst " << d;
                }
              }
              ++routed;
            }
          }
        }
      }
    }
    EXPECT_GT(routed, 1000);
  }
}

// A recovery sub-function that offers an adaptive VC to a message on its VC is refused.
class LeakyRecovery final : public EscapeFunction {
 public:
  explicit LeakyRecovery(const KaryNCube& t) : t_(t) {}
  std::string Describe() const override { return "leaky recovery"; }
  void Next(int node, int, int, int dst, std::vector<EscapeHop>* out) const override {
    out->push_back({NextDorHop(t_, node, dst).port, 1});
  }
  uint32_t AdaptivePorts(int node, int, int, int dst) const override {
    return 1u << NextDorHop(t_, node, dst).port;
  }
  int AdaptiveVc() const override { return 0; }
  bool Recovery() const override { return true; }

 private:
  const KaryNCube& t_;
};

TEST(CdgCheckTest, RecoveryThatLeavesItsVcIsRefused) {
  auto t = testing::MakeCube(TopologyKind::kMesh, {3, 3});
  const LeakyRecovery leaky(*t);
  const CdgReport r = CheckEscape(*t, 2, leaky);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.text.find("recovery must never leave its VCs"), std::string::npos) << r.text;
}

TEST(CdgCheckTest, ConfigErrors) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {4, 4}, "dor");
  c.faults.random_nodes = 1;
  Result<CdgReport> r = CheckDeadlockFreedom(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not fault tolerant"), std::string::npos);
  // Too large for the extended graph's bitsets: a clear error, not an exhausted machine.
  c = testing::SmallConfig(TopologyKind::kTorus, {16, 16, 16}, "duato");
  r = CheckDeadlockFreedom(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("too large for the extended dependency check of 'duato'"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace ukai::sim
