// The paper's router as options (docs/simulator.md, "Router options"): each option
// changes what it says and nothing else.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/network.h"
#include "sim/router/selection.h"
#include "sim/routing/duato.h"
#include "sim/topology/kary_ncube.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using testing::SmallConfig;

// Flits delivered per node per cycle in cycles [warmup, warmup + cycles) of `cfg`.
double Throughput(const SimConfig& cfg, int64_t warmup, int64_t cycles) {
  auto net = Network::Create(cfg);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  if (!net.ok()) return 0;
  int64_t flits = 0;
  for (int64_t i = 0; i < warmup + cycles; ++i) {
    (*net)->Step();
    if (i < warmup) continue;
    for (const Delivery& d : (*net)->deliveries()) flits += d.length;
  }
  EXPECT_TRUE((*net)->CheckInvariants().ok());
  return static_cast<double>(flits) / (*net)->topology().NumNodes() / static_cast<double>(cycles);
}

TEST(RouterOptionsTest, SelectionNeedsAnEmptyBufferOnlyOnAtomicVcs) {
  // Port 0 with 4 VCs: VC 0 and 1 have 7 of 8 credits (a flit downstream), 2 and 3 have 5.
  std::vector<OutputVcState> vcs = {{-1, 7, 0}, {-1, 7, 0}, {-1, 5, 0}, {-1, 5, 0}};
  const RouteCandidate c{0, 0, 0xfu};
  OutputVcView view{vcs.data(), 4};
  EXPECT_EQ(SelectMaxCredit(&c, 1, view, 0), 0);  // most credits, lowest VC
  view.atomic_vcs = 0x3u;                         // VC 0 and 1 must be empty (8 credits)
  view.atomic_credits = 8;
  EXPECT_EQ(SelectMaxCredit(&c, 1, view, 0), 2);
  view.atomic_vcs = 0xfu;
  EXPECT_EQ(SelectMaxCredit(&c, 1, view, 0), -1);
  vcs[3].credits = 8;
  EXPECT_EQ(SelectMaxCredit(&c, 1, view, 0), 3);
}

TEST(RouterOptionsTest, DuatoAtomicMaskNamesTheVcs) {
  NetworkConfig nc;
  nc.k = {4, 4};
  auto torus = KaryNCube::Create(nc);
  ASSERT_TRUE(torus.ok());
  // Torus, 4 VCs: escape VCs 0 and 1, adaptive 2 and 3.
  EXPECT_EQ(DuatoRouting(**torus, 4, DuatoAtomic::kAdaptive).AtomicVcMask(), 0xcu);
  EXPECT_EQ(DuatoRouting(**torus, 4, DuatoAtomic::kAll).AtomicVcMask(), 0xfu);
  EXPECT_EQ(DuatoRouting(**torus, 4, DuatoAtomic::kEscape).AtomicVcMask(), 0x3u);
  EXPECT_EQ(DuatoRouting(**torus, 4, DuatoAtomic::kNone).AtomicVcMask(), 0u);
  EXPECT_FALSE(DuatoRouting(**torus, 4, DuatoAtomic::kNone).AtomicVcAllocation());
}

// 1-flit messages: every message allocates a VC at every hop, so reusing the escape VCs
// before they are empty matters (the adaptive ones stay atomic).
TEST(RouterOptionsTest, DuatoAdaptiveOnlyAtomicRaisesOneFlitThroughput) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {8, 8}, "duato");
  cfg.traffic.message_bytes = 4;
  cfg.traffic.rate = 1.0;
  cfg.routing.duato_atomic = DuatoAtomic::kAll;
  const double all = Throughput(cfg, 3000, 5000);
  cfg.routing.duato_atomic = DuatoAtomic::kAdaptive;
  const double adaptive = Throughput(cfg, 3000, 5000);
  EXPECT_GT(adaptive, 1.2 * all) << "all " << all << " adaptive " << adaptive;
}

}  // namespace
}  // namespace ukai::sim
