// Fabric::Evaluate()/Commit() with the index layout as compile-time constants (the spec's
// router; 16-flit buffers; 5-8 VCs of 64 flits as in experiments/gateway/group24.toml)
// against the generic path (Fabric::SetConstantLayouts(false)): every hop and every
// delivery must be the same, cycle by cycle.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// What a run shows of the fabric: every head hop and every delivery, in order, as text.
std::vector<std::string> Trace(const SimConfig& cfg, bool constant_layouts, int64_t cycles) {
  auto net = Network::Create(cfg);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  if (!net.ok()) return {};
  (*net)->SetFabricConstantLayouts(constant_layouts);
  std::vector<std::string> out;
  (*net)->SetHopObserver([&out](const HopEvent& e) {
    out.push_back("hop " + std::to_string(e.cycle) + " " + std::to_string(e.msg) + " " +
                  std::to_string(e.node) + " " + std::to_string(e.in_port) + "." +
                  std::to_string(e.in_vc) + ">" + std::to_string(e.out_port) + "." +
                  std::to_string(e.out_vc));
  });
  for (int64_t i = 0; i < cycles; ++i) {
    (*net)->Step();
    for (const Delivery& d : (*net)->deliveries()) {
      out.push_back("del " + std::to_string(d.src) + ">" + std::to_string(d.dst) + " " +
                    std::to_string(d.length) + " " + std::to_string(d.hops) + " " +
                    std::to_string(d.created) + " " + std::to_string(d.injected) + " " +
                    std::to_string(d.delivered) + " " + std::to_string(d.routing_state));
    }
  }
  EXPECT_TRUE((*net)->CheckInvariants().ok());
  out.push_back("moved " + std::to_string((*net)->flits_ejected()) + " " +
                std::to_string((*net)->flit_hops()));
  return out;
}

void ExpectSameAsGeneric(const SimConfig& cfg, int64_t cycles) {
  const std::vector<std::string> fixed = Trace(cfg, true, cycles);
  const std::vector<std::string> generic = Trace(cfg, false, cycles);
  ASSERT_GT(fixed.size(), 100u);  // the run moved traffic
  ASSERT_EQ(fixed.size(), generic.size());
  for (size_t i = 0; i < fixed.size(); ++i) ASSERT_EQ(fixed[i], generic[i]) << "entry " << i;
}

// experiments/gateway/group24.toml's router: 6 VCs of 64 32-byte flits, dor-detour, under
// heavy load (blocked heads, full buffers).
TEST(FabricLayoutTest, Group24RouterSameAsGenericPath) {
  SimConfig cfg;
  cfg.network.topology = TopologyKind::kGroup;
  cfg.network.groups = 6;
  cfg.network.group_size = 4;
  cfg.routing.algorithm = "dor-detour";
  cfg.router.vcs = 6;
  cfg.router.vc_buffer_flits = 64;
  cfg.router.flit_bytes = 32;
  cfg.traffic.message_bytes = 1500;
  cfg.traffic.rate = 0.3;
  ExpectSameAsGeneric(cfg, 6000);
}

// The spec's router (4 VCs of 8 flits) and 16-flit buffers on a 2-D torus (5 ports), and
// 8 VCs of 64 flits on a 3-D mesh (7 ports).
TEST(FabricLayoutTest, OtherConstantLayoutsSameAsGenericPath) {
  for (int depth : {8, 16}) {
    SimConfig cfg = testing::SmallConfig(TopologyKind::kTorus, {4, 4});
    cfg.router.vc_buffer_flits = depth;
    cfg.traffic.message_bytes = 64;
    cfg.traffic.rate = 0.5;
    SCOPED_TRACE(depth);
    ExpectSameAsGeneric(cfg, 3000);
  }
  SimConfig cfg = testing::SmallConfig(TopologyKind::kMesh, {3, 3, 3});
  cfg.router.vcs = 8;
  cfg.router.vc_buffer_flits = 64;
  cfg.traffic.message_bytes = 256;
  cfg.traffic.rate = 0.5;
  ExpectSameAsGeneric(cfg, 3000);
}

}  // namespace
}  // namespace ukai::sim
