// Fabric::Evaluate()/Commit() with the index layout as compile-time constants (the spec's
// router; 16-flit buffers; 5-8 VCs of 64 flits as in experiments/gateway/group24.toml)
// against the generic path (Fabric::SetConstantLayouts(false)): every hop and every
// delivery must be the same, cycle by cycle.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/experiment/front_door.h"
#include "sim/routing/dimension_order.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

// What a run shows of the fabric: every head hop and every delivery, in order, as text.
// `routing`: replaces the config's routing (bound to the topology by `bind`).
std::vector<std::string> Trace(const SimConfig& cfg, bool constant_layouts, int64_t cycles,
                               bool route_cache = true,
                               std::unique_ptr<RoutingFunction> routing = nullptr,
                               const std::function<void(const Topology&)>& bind = nullptr) {
  auto net = Network::Create(cfg, std::move(routing));
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  if (!net.ok()) return {};
  if (bind) bind((*net)->topology());
  (*net)->SetFabricConstantLayouts(constant_layouts);
  (*net)->SetFabricRouteCache(route_cache);
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
  out.push_back("undeliverable " + std::to_string((*net)->messages_undeliverable()));
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

// router.model = booksim (BookSim2's VC allocators on its 4 VCs of 8 flits, 2-cycle channels
// on the mesh, 3 on the torus): the constant-layout path against the generic one, with both
// allocators, dimension order (one candidate) and min_adapt (several: requests of several
// candidates per head, heads of several input VCs per router).
TEST(FabricLayoutTest, BooksimModelSameAsGenericPath) {
  for (const char* topology : {"mesh", "torus"}) {
    for (const char* routing : {"dim_order", "min_adapt"}) {
      for (const char* allocator : {"islip", "separable_input_first"}) {
        const std::string text = std::string("topology = ") + topology +
                                 "; k = 4; n = 2; num_vcs = 4; vc_buf_size = 8;"
                                 " routing_function = " +
                                 routing + "; vc_allocator = " + allocator +
                                 "; packet_size = 4; injection_rate = 0.2; seed = 5;";
        Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", {});
        ASSERT_TRUE(points.ok()) << points.status().ToString();
        SCOPED_TRACE(text);
        ExpectSameAsGeneric(points->front(), 3000);
      }
    }
  }
}

// router.model = booksim with the flits on their way counted in their VCs only when they
// arrive (Fabric::SetDeferredArrivals(), the default) against counted when sent: every hop
// and delivery the same, and the invariants (credits, write slots, flits in the network,
// which count the flits on the arrival ring) hold in every cycle. Saturated runs (full
// buffers, blocked heads) and 1- and 4-flit packets.
TEST(FabricLayoutTest, DeferredArrivalsSameAsCountedAtSending) {
  for (const char* topology : {"mesh", "torus"}) {
    for (const char* routing : {"dim_order", "min_adapt"}) {
      for (const char* packet : {"1", "4"}) {
        // 0.45 and 0.8 flits per node and cycle: past saturation.
        const std::string rate = packet[0] == '1' ? "0.45" : "0.2";
        const std::string text =
            std::string("topology = ") + topology +
            "; k = 4; n = 2; num_vcs = 4; vc_buf_size = 8; routing_function = " + routing +
            "; packet_size = " + packet + "; injection_rate = " + rate + "; seed = 3;";
        Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", {});
        ASSERT_TRUE(points.ok()) << points.status().ToString();
        SCOPED_TRACE(text);
        auto trace = [&points](bool deferred) {
          auto net = Network::Create(points->front(), nullptr);
          EXPECT_TRUE(net.ok()) << net.status().ToString();
          std::vector<std::string> out;
          if (!net.ok()) return out;
          (*net)->SetFabricDeferredArrivals(deferred);
          (*net)->SetHopObserver([&out](const HopEvent& e) {
            out.push_back(std::to_string(e.cycle) + " " + std::to_string(e.msg) + " " +
                          std::to_string(e.node) + " " + std::to_string(e.out_port) + "." +
                          std::to_string(e.out_vc));
          });
          for (int64_t i = 0; i < 1500; ++i) {
            (*net)->Step();
            for (const Delivery& d : (*net)->deliveries()) {
              out.push_back("del " + std::to_string(d.src) + ">" + std::to_string(d.dst) + " " +
                            std::to_string(d.delivered));
            }
            const Status ok = (*net)->CheckInvariants();
            EXPECT_TRUE(ok.ok()) << ok.ToString();
            if (!ok.ok()) break;
          }
          out.push_back("moved " + std::to_string((*net)->flits_ejected()) + " " +
                        std::to_string((*net)->flit_hops()));
          return out;
        };
        const std::vector<std::string> deferred = trace(true);
        const std::vector<std::string> counted = trace(false);
        ASSERT_GT(deferred.size(), 1000u);  // the run moved traffic
        ASSERT_EQ(deferred.size(), counted.size());
        for (size_t i = 0; i < deferred.size(); ++i) {
          ASSERT_EQ(deferred[i], counted[i]) << "entry " << i;
        }
      }
    }
  }
}

// Dimension order on a k-ary n-cube that says it is a PureRoute() routing and, unlike
// `dor`, runs on a network with faults (the router drains what it cannot route).
class PureDor final : public RoutingFunction {
 public:
  void Bind(const Topology& topology) { cube_ = dynamic_cast<const KaryNCube*>(&topology); }
  void Route(const RouteRequest& request, RouteResult* result) const override {
    const DorHop hop = NextDorHop(*cube_, request.node, request.dst);
    if (hop.port >= 0) result->Add(hop.port, 0xf);
  }
  bool PureRoute() const override { return true; }

 private:
  const KaryNCube* cube_ = nullptr;
};

// A PureRoute() routing's answers kept per (router, destination) give the run that routing
// every head afresh gives, also when timed faults and repairs change which ports are
// alive (heads toward a dead port are drained, and routed again after the repair).
TEST(FabricLayoutTest, RouteCacheSameAsRoutingEveryHead) {
  SimConfig cfg = testing::SmallConfig(TopologyKind::kMesh, {4, 4});
  cfg.traffic.message_bytes = 64;
  cfg.traffic.rate = 0.3;
  FaultEventSpec fail, repair;
  fail.cycle = 1000;
  fail.node.form = NodeRef::Form::kCoords;
  fail.node.coords = {1, 1};
  fail.node.text = "[1, 1]";
  repair = fail;
  repair.cycle = 2000;
  repair.kind = FaultEventSpec::Kind::kRepairNode;
  cfg.faults.events = {fail, repair};
  cfg.faults.reconfig.mode = ReconfigConfig::Mode::kInstant;
  auto trace = [&cfg](bool cache) {
    auto routing = std::make_unique<PureDor>();
    PureDor* raw = routing.get();
    return Trace(cfg, true, 3000, cache, std::move(routing),
                 [raw](const Topology& t) { raw->Bind(t); });
  };
  const std::vector<std::string> cached = trace(true);
  const std::vector<std::string> fresh = trace(false);
  ASSERT_GT(cached.size(), 100u);
  ASSERT_EQ(cached.size(), fresh.size());
  for (size_t i = 0; i < cached.size(); ++i) ASSERT_EQ(cached[i], fresh[i]) << "entry " << i;
  // The fault drained messages in transit: kept routes through it were dropped.
  EXPECT_NE(cached.back(), "undeliverable 0");
}

// `dor` on a torus with random ties and the shared dateline answers through
// RoutingFunction::RouteOne(): routing every head through Route() instead (the route cache
// off) gives the same run, on ukai's router and on BookSim2's.
TEST(FabricLayoutTest, RouteOneSameAsRouteEveryHead) {
  SimConfig cfg = testing::SmallConfig(TopologyKind::kTorus, {4, 4});
  cfg.traffic.message_bytes = 64;
  cfg.traffic.rate = 0.4;
  Result<std::vector<SimConfig>> booksim = LoadSimConfigsFromString(
      "topology = torus; k = 4; n = 2; num_vcs = 4; vc_buf_size = 8; routing_function = "
      "dim_order; packet_size = 1; injection_rate = 0.3; seed = 3;",
      "t.cfg", {});
  ASSERT_TRUE(booksim.ok()) << booksim.status().ToString();
  for (const SimConfig& c : {cfg, booksim->front()}) {
    const std::vector<std::string> one = Trace(c, true, 3000, true);
    const std::vector<std::string> every = Trace(c, true, 3000, false);
    ASSERT_GT(one.size(), 100u);
    ASSERT_EQ(one.size(), every.size());
    for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(one[i], every[i]) << "entry " << i;
  }
}

// BookSim2's single-flit packets at a high rate on an 8x8 mesh: routers with several VC
// requests each cycle, output VCs that two heads name (islip's contested case), both
// allocators; the lean matching against the general one (and the constant layout against
// the generic).
TEST(FabricLayoutTest, BooksimLeanMatchingSameAsGeneral) {
  for (const char* allocator : {"islip", "separable_input_first"}) {
    const std::string text = std::string(
                                 "topology = mesh; k = 8; n = 2; num_vcs = 4; vc_buf_size = 8;"
                                 " routing_function = dim_order; vc_allocator = ") +
                             allocator + "; packet_size = 1; injection_rate = 0.35; seed = 7;";
    Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", {});
    ASSERT_TRUE(points.ok()) << points.status().ToString();
    SCOPED_TRACE(text);
    ExpectSameAsGeneric(points->front(), 2000);
  }
}

}  // namespace
}  // namespace ukai::sim
