// The deadlock-freedom check of dor-detour (routing/detour_check.h): the via-node layers are
// acyclic on the group topology, meshes and tori, with and without faulty nodes; layers that
// share their VCs are caught with a cycle; a network too large is refused.
#include "sim/routing/detour_check.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sim/routing/detour.h"
#include "sim/routing/dor_planner.h"
#include "sim/topology/factory.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

SimConfig Group24(int vcs) {
  SimConfig c;
  c.network.topology = TopologyKind::kGroup;
  c.routing.algorithm = "dor-detour";
  c.router.vcs = vcs;
  return c;
}

TEST(DetourCheckTest, LayersAreAcyclicOnEveryTopology) {
  std::vector<SimConfig> configs = {Group24(4), Group24(6)};
  for (TopologyKind kind : {TopologyKind::kMesh, TopologyKind::kTorus}) {
    for (int vcs : {2, 4, 6}) {
      SimConfig c = testing::SmallConfig(kind, {4, 5}, "dor-detour");
      c.router.vcs = vcs;
      if (kind == TopologyKind::kTorus && vcs < 4) continue;  // 2 layers of 2 classes
      configs.push_back(c);
    }
  }
  for (SimConfig c : configs) {
    for (int faulty : {0, 1, 3}) {
      c.faults.random_nodes = faulty;
      Result<CdgReport> r = CheckDeadlockFreedom(c);  // through the checkers' table
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_TRUE(r->ok) << r->text;
      EXPECT_GT(r->channels, 0);
      EXPECT_GT(r->dependencies, 0);
      EXPECT_NE(r->text.find("dor-detour's"), std::string::npos) << r->text;
    }
  }
}

// Every candidate of the real routing moved to VC 0: the layers collapse into one, and a
// new leg (turning back to dimension 0) after a leg's last hop in dimension 1 closes a
// cycle on the mesh.
class CollapsedLayers final : public RoutingFunction {
 public:
  explicit CollapsedLayers(const DetourRouting& real) : real_(real) {}
  void Route(const RouteRequest& req, RouteResult* result) const override {
    RouteResult inner;
    real_.Route(req, &inner);
    for (int i = 0; i < inner.size(); ++i) result->Add(inner[i].port, 1u);
  }

 private:
  const DetourRouting& real_;
};

TEST(DetourCheckTest, LayersSharingTheirVcsAreACycle) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4}, "dor-detour");
  c.router.vcs = 2;
  std::unique_ptr<Topology> t = std::move(MakeTopology(c.network).value());
  DetourRouting real(*t, DorPlanner::For(*t), 2, DetourSwitch::kAware);
  ASSERT_EQ(real.layers(), 2);
  EXPECT_TRUE(CheckDetourLayers(*t, real, real.layers(), 2).ok);
  const CdgReport broken = CheckDetourLayers(*t, CollapsedLayers(real), real.layers(), 2);
  EXPECT_FALSE(broken.ok);
  EXPECT_NE(broken.text.find("NOT deadlock-free: dor-detour's 2 VC layer(s): dependency cycle"),
            std::string::npos)
      << broken.text;
  EXPECT_NE(broken.text.find(" vc 0 ->"), std::string::npos) << broken.text;
}

TEST(DetourCheckTest, TooLargeIsRefused) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {100, 100}, "dor-detour");
  c.router.vcs = 2;
  Result<CdgReport> r = CheckDeadlockFreedom(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("too large for the dor-detour dependency check"),
            std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace ukai::sim
