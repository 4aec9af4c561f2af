// Zero-load latency equals the documented formula exactly (docs/simulator.md):
//   T0 = (H + 1) * hop_cycles + H * link_cycles + L
// for a message of L flits over H router-to-router hops (the final "+ L" is the L - 1
// serialisation cycles of the body plus the 1-cycle PE-to-router injection channel),
// plus table_lookup_cycles for every hop on which the routing reads a table.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sim/routing/dimension_order.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using testing::SendOne;
using testing::SmallConfig;

struct Case {
  TopologyKind kind;
  std::vector<int> k;
  const char* routing;
  Switching switching;
  int hop, link, depth;
};

int64_t Formula(int hops, int flits, int hop, int link) {
  return static_cast<int64_t>(hops + 1) * hop + static_cast<int64_t>(hops) * link + flits;
}

void CheckAllPairs(const Case& c, const std::vector<int>& lengths) {
  SimConfig cfg = SmallConfig(c.kind, c.k, c.routing);
  cfg.router.switching = c.switching;
  cfg.router.hop_cycles = c.hop;
  cfg.router.link_cycles = c.link;
  cfg.router.vc_buffer_flits = c.depth;
  auto net = Network::Create(cfg, nullptr, /*with_traffic=*/false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const auto& topo = dynamic_cast<const KaryNCube&>((*net)->topology());
  for (int flits : lengths) {
    for (int s = 0; s < topo.NumNodes(); ++s) {
      for (int d = 0; d < topo.NumNodes(); d += 1 + topo.NumNodes() / 23) {
        const Delivery got = SendOne(**net, s, d, flits);
        const int hops = topo.Distance(s, d);
        ASSERT_EQ(got.hops, hops) << s << "->" << d;
        ASSERT_EQ(got.delivered - got.created, Formula(hops, flits, c.hop, c.link))
            << topo.Describe() << " " << c.routing << " " << s << "->" << d << " L=" << flits;
        ASSERT_EQ(got.delivered - got.injected, Formula(hops, flits, c.hop, c.link) - 1);
      }
    }
  }
  ASSERT_TRUE((*net)->CheckInvariants().ok());
}

TEST(ZeroLoadTest, WormholeMeshAndTorus) {
  const std::vector<Case> cases = {
      {TopologyKind::kMesh, {4, 4}, "dor", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kTorus, {5, 5}, "dor", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kTorus, {4, 4}, "duato", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kMesh, {3, 4}, "duato", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kTorus, {7}, "dor", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kTorus, {2, 2, 2}, "dor", Switching::kWormhole, 5, 1, 8},
      {TopologyKind::kMesh, {3, 3, 3}, "dor", Switching::kWormhole, 3, 2, 4},
      {TopologyKind::kTorus, {3, 4, 2}, "duato", Switching::kWormhole, 1, 0, 2},
  };
  for (const Case& c : cases) CheckAllPairs(c, {1, 2, 16, 41});
}

TEST(ZeroLoadTest, VirtualCutThrough) {
  const std::vector<Case> cases = {
      {TopologyKind::kMesh, {4, 3}, "dor", Switching::kVirtualCutThrough, 5, 1, 16},
      {TopologyKind::kTorus, {6, 6}, "duato", Switching::kVirtualCutThrough, 5, 1, 16},
      {TopologyKind::kTorus, {5, 3, 2}, "dor", Switching::kVirtualCutThrough, 4, 3, 16},
  };
  for (const Case& c : cases) CheckAllPairs(c, {1, 5, 16});
}

TEST(ZeroLoadTest, TableLookupAddsItsDelayPerRoutedHop) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {6, 5});
  cfg.router.table_lookup_cycles = 5;
  auto topo = KaryNCube::Create(cfg.network);
  ASSERT_TRUE(topo.ok());
  auto net = Network::Create(cfg, std::make_unique<testing::TableLookupDor>(**topo), false);
  ASSERT_TRUE(net.ok());
  for (int s = 0; s < 30; s += 7) {
    for (int d = 0; d < 30; d += 3) {
      if (s == d) continue;
      const Delivery got = SendOne(**net, s, d, 16);
      const int hops = (*topo)->Distance(s, d);
      // The table is read at the source router and at every intermediate router (H reads);
      // the ejection decision at the destination needs no table.
      EXPECT_EQ(got.delivered - got.created, Formula(hops, 16, 5, 1) + 5 * hops);
    }
  }
}

}  // namespace
}  // namespace ukai::sim
