// Flit and credit conservation, checked after every cycle of randomized runs: random
// topology, routing, VC count and depth, switching, message size and load; and of routers
// whose input-VC bitmasks span several 64-bit words (many VCs, many ports).
#include <gtest/gtest.h>

#include <string>

#include "core/rng.h"
#include "sim/engine/network.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// Runs `c` for `cycles` cycles, checking the invariants after each.
void CheckEveryCycle(const SimConfig& c, int cycles) {
  auto net = Network::Create(c);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const std::string what = (*net)->topology().Describe() + " " + c.routing.algorithm +
                           " vcs=" + std::to_string(c.router.vcs);
  for (int cycle = 0; cycle < cycles; ++cycle) {
    (*net)->Step();
    const Status s = (*net)->CheckInvariants();
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
    ASSERT_FALSE((*net)->Stalled(1000)) << what;
  }
  EXPECT_GT((*net)->messages_delivered(), 0) << what;
}

TEST(InvariantsTest, ConservationEveryCycleInRandomizedRuns) {
  Rng pick(12345);
  for (int trial = 0; trial < 24; ++trial) {
    SimConfig c;
    c.network.topology = pick.Uniform(2) ? TopologyKind::kTorus : TopologyKind::kMesh;
    c.network.n = 1 + static_cast<int>(pick.Uniform(3));
    c.network.k.clear();
    for (int d = 0; d < c.network.n; ++d) {
      c.network.k.push_back(2 + static_cast<int>(pick.Uniform(c.network.n == 1 ? 7 : 3)));
    }
    const bool duato = pick.Uniform(2) == 1;
    c.routing.algorithm = duato ? "duato" : "dor";
    c.router.vcs = (duato ? 3 : 2) + static_cast<int>(pick.Uniform(3));
    c.router.pe_vcs = 1 + static_cast<int>(pick.Uniform(3));
    c.router.vc_buffer_flits = 2 + static_cast<int>(pick.Uniform(9));
    c.router.hop_cycles = 1 + static_cast<int>(pick.Uniform(5));
    c.router.link_cycles = static_cast<int>(pick.Uniform(3));
    c.router.switching = pick.Uniform(2) ? Switching::kWormhole : Switching::kVirtualCutThrough;
    const int max_flits = c.router.switching == Switching::kVirtualCutThrough
                              ? c.router.vc_buffer_flits
                              : 3 * c.router.vc_buffer_flits;
    c.traffic.message_bytes = 4 * (1 + static_cast<int>(pick.Uniform(max_flits)));
    c.traffic.rate = 0.05 + 0.95 * pick.NextDouble();
    c.seed = pick.NextU64();
    CheckEveryCycle(c, 1500);
  }
}

// The router options of docs/simulator.md ("Router options"), drawn at random on small
// tori and meshes.
TEST(InvariantsTest, RouterOptionsEveryCycle) {
  Rng pick(777);
  for (int trial = 0; trial < 16; ++trial) {
    SimConfig c = testing::SmallConfig(
        pick.Uniform(3) ? TopologyKind::kTorus : TopologyKind::kMesh,
        {3 + static_cast<int>(pick.Uniform(4)), 2 + static_cast<int>(pick.Uniform(4))},
        pick.Uniform(2) ? "duato" : "dor");
    c.router.vcs = 3 + static_cast<int>(pick.Uniform(2));
    c.router.pe_vcs = 1 + static_cast<int>(pick.Uniform(3));
    c.router.vc_buffer_flits = 2 + static_cast<int>(pick.Uniform(7));
    c.router.eject_flits = 1 + static_cast<int>(pick.Uniform(3));
    c.router.switch_bubble_cycles = static_cast<int>(pick.Uniform(3));
    c.router.header_units = pick.Uniform(2) ? HeaderUnits::kPerPort : HeaderUnits::kPerVc;
    c.router.hop_cycles = 1 + static_cast<int>(pick.Uniform(5));
    c.routing.dor_tie = static_cast<DorTieRule>(pick.Uniform(3));
    c.routing.dor_dateline = static_cast<DorDateline>(pick.Uniform(2));
    c.routing.duato_atomic = static_cast<DuatoAtomic>(pick.Uniform(2));  // adaptive or all
    c.traffic.source_queue = static_cast<int>(pick.Uniform(3));
    c.traffic.message_bytes = 4 * (1 + static_cast<int>(pick.Uniform(20)));
    c.traffic.rate = 0.05 + 0.95 * pick.NextDouble();
    c.seed = pick.NextU64();
    CheckEveryCycle(c, 1500);
  }
}

// 32 VCs on a 2-D torus: 8 port slots x 32 VCs = 4 mask words per router; a 6-D mesh with
// 8 VCs: 16 port slots x 8 VCs = 2 words.
TEST(InvariantsTest, MultiWordMasksEveryCycle) {
  SimConfig wide = testing::SmallConfig(TopologyKind::kTorus, {4, 4}, "duato");
  wide.router.vcs = 32;
  wide.router.pe_vcs = 5;
  wide.traffic.rate = 0.6;
  CheckEveryCycle(wide, 1500);
  SimConfig many = testing::SmallConfig(TopologyKind::kMesh, {2, 2, 2, 2, 2, 2}, "dor");
  many.router.vcs = 8;
  many.traffic.rate = 0.6;
  CheckEveryCycle(many, 1500);
}

}  // namespace
}  // namespace ukai::sim
