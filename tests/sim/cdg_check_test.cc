// The deadlock-freedom checker (routing/cdg_check.h): every algorithm proved on fault-free
// meshes and tori; up*/down* (updown, detour-ud's UD-VC) and detour-nf always acyclic and
// connected on random fault sets (property test); broken sub-functions are caught with a
// cycle or a dead end.
#include "sim/routing/cdg_check.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/routing/dimension_order.h"
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

TEST(CdgCheckTest, ConfigErrors) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {4, 4}, "dor");
  c.faults.random_nodes = 1;
  Result<CdgReport> r = CheckDeadlockFreedom(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not fault tolerant"), std::string::npos);
}

}  // namespace
}  // namespace ukai::sim
