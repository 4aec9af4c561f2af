// The paper's router as options (docs/simulator.md, "Router options"): each option
// changes what it says and nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/engine/network.h"
#include "sim/router/selection.h"
#include "sim/routing/dimension_order.h"
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

// traffic.source_queue = 1: a PE holds one message at a time; the next is created when the
// previous one's tail has left the PE, so creations follow the injection, not the clock.
TEST(RouterOptionsTest, BoundedSourceQueueMakesTheSenderWait) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {4, 4});
  cfg.traffic.injection = InjectionKind::kInterval;
  cfg.traffic.interval = 2;  // far more often than a 16-flit message can leave
  cfg.traffic.source_queue = 1;
  auto net = Network::Create(cfg);
  ASSERT_TRUE(net.ok());
  const int64_t kCycles = 4000;
  for (int64_t i = 0; i < kCycles; ++i) {
    (*net)->Step();
    // At most the message created in the cycle its predecessor left waits for a cycle.
    ASSERT_LE((*net)->backlog(), 16) << "cycle " << i;
  }
  const int nodes = 16;
  // One message per 16 cycles at most (a flit per cycle into the router), and more than
  // half of that (the network takes about 0.7 flit/node/cycle here).
  EXPECT_LE((*net)->messages_created(), nodes * (kCycles / 16 + 1));
  EXPECT_GT((*net)->messages_created(), nodes * (kCycles / 16) / 2);
  // Unbounded: the shortest interval an unbounded sender may have (16 cycles: 1 flit/node/
  // cycle offered, above what the network takes), and the rest piles up in the queues.
  cfg.traffic.source_queue = 0;
  cfg.traffic.interval = 16;
  auto unbounded = Network::Create(cfg);
  ASSERT_TRUE(unbounded.ok()) << unbounded.status().ToString();
  for (int64_t i = 0; i < kCycles; ++i) (*unbounded)->Step();
  EXPECT_GT((*unbounded)->backlog(), 10 * 16);
  // And an unbounded sender may not be offered more than 1 flit/node/cycle.
  cfg.traffic.interval = 2;
  EXPECT_FALSE(Network::Create(cfg).ok());
}

TEST(RouterOptionsTest, BoundedSourceQueueKeepsSaturatedLatencyFinite) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {6, 6});
  cfg.traffic.rate = 1.0;
  cfg.traffic.source_queue = 2;
  auto net = Network::Create(cfg);
  ASSERT_TRUE(net.ok());
  int64_t worst = 0;
  for (int64_t i = 0; i < 20000; ++i) {
    (*net)->Step();
    ASSERT_LE((*net)->backlog(), 2 * 36) << "at most two messages per PE";
    for (const Delivery& d : (*net)->deliveries()) worst = std::max(worst, d.delivered - d.created);
  }
  // Created at most one message ahead of its start: latency stays in the network's range.
  EXPECT_LT(worst, 2000);
}

// Delivery cycles of `count` messages of `flits` flits sent at once from each of `srcs` to
// `dst` on an idle 10x10 torus.
std::vector<int64_t> DeliveriesAt(const SimConfig& cfg, const std::vector<int>& srcs, int dst,
                                  int flits, int count = 1) {
  auto net = Network::Create(cfg, {}, false);
  EXPECT_TRUE(net.ok());
  std::vector<int64_t> at;
  for (int s : srcs) {
    for (int i = 0; i < count; ++i) (*net)->CreateMessage(s, dst, flits);
  }
  for (int i = 0; i < 5000 && at.size() < srcs.size() * count; ++i) {
    (*net)->Step();
    for (const Delivery& d : (*net)->deliveries()) at.push_back(d.delivered);
  }
  return at;
}

TEST(RouterOptionsTest, EjectFlitsPerCycle) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {10, 10});
  // Four neighbours send two 200-flit messages each to node 55: the PE port is the
  // bottleneck, 1600 flits at eject_flits per cycle.
  const std::vector<int> srcs = {54, 56, 45, 65};
  std::vector<int64_t> one = DeliveriesAt(cfg, srcs, 55, 200, 2);
  cfg.router.eject_flits = 2;  // router.pe_vcs = 2 ejection VCs: two messages at a time
  std::vector<int64_t> two = DeliveriesAt(cfg, srcs, 55, 200, 2);
  ASSERT_EQ(one.size(), 8u);
  ASSERT_EQ(two.size(), 8u);
  EXPECT_GE(one.back(), 1600);
  EXPECT_LE(two.back(), 850);
  EXPECT_GE(two.back(), 800);
}

TEST(RouterOptionsTest, SwitchBubbleDelaysAChangeOfMessage) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {10, 10});
  // Two 1-flit messages reach node 55's PE port in the same cycle: the second leaves one
  // cycle after the first, or 1 + bubble cycles later with a bubble.
  std::vector<int64_t> plain = DeliveriesAt(cfg, {54, 56}, 55, 1);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[1] - plain[0], 1);
  for (int bubble : {1, 3}) {
    cfg.router.switch_bubble_cycles = bubble;
    std::vector<int64_t> got = DeliveriesAt(cfg, {54, 56}, 55, 1);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1] - got[0], 1 + bubble);
    EXPECT_EQ(got[0], plain[0]);  // the first message loses nothing
  }
  // One long message alone never changes message: no delay.
  cfg.router.switch_bubble_cycles = 1;
  EXPECT_EQ(DeliveriesAt(cfg, {11}, 55, 40),
            DeliveriesAt(SmallConfig(TopologyKind::kTorus, {10, 10}), {11}, 55, 40));
}

// router.header_units = per_port: two 1-flit messages from one PE to one destination
// enter the source router's injection port one cycle apart on two VCs. With a pipeline per
// VC the second head is ready one cycle after the first; with one header unit per port it
// starts only when the first is ready (hop_cycles - 1 = 4 cycles after it started), so it
// leaves 3 cycles later. Downstream they then arrive 4 cycles apart: no further delay.
TEST(RouterOptionsTest, SharedHeaderUnitSerializesTheHeadsOfAPort) {
  SimConfig cfg = SmallConfig(TopologyKind::kTorus, {8, 8});
  const std::vector<int64_t> per_vc = DeliveriesAt(cfg, {0}, 3, 1, 2);
  cfg.router.header_units = HeaderUnits::kPerPort;
  const std::vector<int64_t> per_port = DeliveriesAt(cfg, {0}, 3, 1, 2);
  ASSERT_EQ(per_vc.size(), 2u);
  ASSERT_EQ(per_port.size(), 2u);
  EXPECT_EQ(per_port[0], per_vc[0]);
  EXPECT_EQ(per_vc[1] - per_vc[0], 1);
  EXPECT_EQ(per_port[1] - per_vc[1], 3);
}

// router.table_read_ports = 1: messages 0 -> 2 and 2 -> 0 on an 8-node ring reach router 1
// in the same cycle, both needing a table read there: one of them waits one cycle.
TEST(RouterOptionsTest, TableReadPortsSerializeLookups) {
  auto run = [](int ports) {
    SimConfig cfg = SmallConfig(TopologyKind::kTorus, {8});
    cfg.router.table_read_ports = ports;
    auto topo = KaryNCube::Create(cfg.network);
    EXPECT_TRUE(topo.ok());
    auto net = Network::Create(cfg, std::make_unique<testing::TableLookupDor>(**topo), false);
    EXPECT_TRUE(net.ok());
    (*net)->CreateMessage(0, 2, 1);
    (*net)->CreateMessage(2, 0, 1);
    std::vector<int64_t> at(2, -1);
    for (int i = 0; i < 200; ++i) {
      (*net)->Step();
      for (const Delivery& d : (*net)->deliveries()) at[d.src == 0 ? 0 : 1] = d.delivered;
    }
    return at;
  };
  const std::vector<int64_t> free = run(0), one = run(1), two = run(2);
  EXPECT_EQ(free[0], free[1]);
  EXPECT_EQ(std::max(one[0], one[1]) - free[0], 1);
  EXPECT_EQ(std::min(one[0], one[1]), free[0]);
  EXPECT_EQ(two, one);  // both heads are on VC 2: the same group of two
}

}  // namespace
}  // namespace ukai::sim
