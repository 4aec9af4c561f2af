// The gateway NIC (transmit/receive/setting units with the patent's steps), the management
// node's destination set against a brute-force check, detours round faults, and the whole
// gateway on the patent's 24-node machine (broadcast to the owner only, FCS discards,
// managed detours at boot and after a runtime fault, retransmission, the Fig. 1 baseline).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/rng.h"
#include "gateway_test_util.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/nic/detour_search.h"
#include "sim/nic/frame_source.h"
#include "sim/nic/gateway.h"
#include "sim/topology/factory.h"
#include "wire/crc32.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {
namespace {

using Steps = std::vector<std::string>;
using testing::Group24;
using testing::Name;
using testing::RunToEnd;

std::vector<uint8_t> OutboundPacket(int src, int io, std::vector<uint32_t> detour, Mac mac) {
  wire::GatewayPacket p;
  p.to_nic = true;
  p.dst = static_cast<uint32_t>(io);
  p.has_command = true;
  p.command.src = static_cast<uint32_t>(src);
  p.command.dst = static_cast<uint32_t>(io);
  p.command.return_detour = std::move(detour);
  p.frame = BuildFrame(kExternalMacBase | 7, mac, 1, 100, false);
  return wire::EncodePacket(p).value();
}

TEST(GatewayNicTest, TransmitLearnsWithStepsS11ToS17) {
  GatewayNic nic(8, /*learn_detours=*/true);
  const Mac mac = 0x020000000015ULL;
  Result<std::vector<uint8_t>> f = nic.Transmit(OutboundPacket(21, 8, {9}, mac));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(nic.trace(), (Steps{"S11", "S12", "S13:no", "S14:no", "S16", "S17", "S2", "S3"}));
  EXPECT_EQ(nic.table().Rows(), (std::vector<AddressRow>{{mac, 21, {9}}}));
  EXPECT_EQ(f->size(), 104u);  // the frame + FCS, parts A and B stripped
  EXPECT_TRUE(wire::FcsOk(*f));
  nic.ClearTrace();
  ASSERT_TRUE(nic.Transmit(OutboundPacket(21, 8, {9}, mac)).ok());
  EXPECT_EQ(nic.trace(), (Steps{"S11", "S12", "S13:yes", "S17", "S2", "S3"}));
  nic.ClearTrace();
  ASSERT_TRUE(nic.Transmit(OutboundPacket(21, 8, {10, 11}, mac)).ok());
  EXPECT_EQ(nic.trace(), (Steps{"S11", "S12", "S13:no", "S14:yes", "S15", "S17", "S2", "S3"}));
  EXPECT_EQ(nic.table().Rows(), (std::vector<AddressRow>{{mac, 21, {10, 11}}}));
  // Not a command to this NIC, or not a packet at all: refused.
  EXPECT_FALSE(nic.Transmit(OutboundPacket(21, 9, {}, mac)).ok());
  EXPECT_FALSE(nic.Transmit(std::vector<uint8_t>{1, 2, 3}).ok());
  GatewayNic no_detours(8, false);
  ASSERT_TRUE(no_detours.Transmit(OutboundPacket(21, 8, {9}, mac)).ok());
  EXPECT_EQ(no_detours.table().Rows(), (std::vector<AddressRow>{{mac, 21, {}}}));
  // Without detour learning an installed detour survives the node's outgoing traffic.
  no_detours.Set({mac, 21, {4, 5}});
  no_detours.ClearTrace();
  ASSERT_TRUE(no_detours.Transmit(OutboundPacket(21, 8, {9}, mac)).ok());
  EXPECT_EQ(no_detours.trace(), (Steps{"S11", "S12", "S13:yes", "S17", "S2", "S3"}));
  EXPECT_EQ(no_detours.table().Rows(), (std::vector<AddressRow>{{mac, 21, {4, 5}}}));
}

TEST(GatewayNicTest, ReceiveChecksFcsThenLooksUpOrBroadcasts) {
  GatewayNic nic(8, true);
  const Mac known = 0x020000000015ULL, unknown = 0x020000000003ULL;
  nic.Set({known, 21, {9}});
  std::vector<uint8_t> bad = BuildFrame(known, kExternalMacBase, 1, 200, true);
  bad[30] ^= 1;
  nic.ClearTrace();
  InboundPacket r = nic.Receive(bad, true);
  EXPECT_TRUE(r.discarded);
  EXPECT_EQ(nic.trace(), (Steps{"S21", "S31", "S32", "S33"}));
  EXPECT_EQ(nic.fcs_discarded(), 1);
  nic.ClearTrace();
  r = nic.Receive(BuildFrame(known, kExternalMacBase, 2, 200, true), true);
  EXPECT_EQ(nic.trace(), (Steps{"S21", "S31", "S32", "S34", "S35:yes", "S36", "S23", "S24"}));
  EXPECT_EQ(r.node, 21);
  EXPECT_EQ(r.detour, (std::vector<int32_t>{9}));
  wire::GatewayPacket p = wire::DecodePacket(r.bytes).value();
  EXPECT_TRUE(p.inbound);
  EXPECT_EQ(p.dst, 21u);
  EXPECT_EQ(p.detour, (std::vector<uint32_t>{9}));
  EXPECT_EQ(p.frame.size(), 200u);  // FCS stripped after the check
  nic.ClearTrace();
  r = nic.Receive(BuildFrame(unknown, kExternalMacBase, 3, 200, false), false);
  EXPECT_EQ(nic.trace(), (Steps{"S21", "S34", "S35:no", "S37", "S23", "S24"}));
  EXPECT_TRUE(r.broadcast);
  p = wire::DecodePacket(r.bytes).value();
  EXPECT_TRUE(p.broadcast);
  EXPECT_TRUE(p.detour.empty());
  EXPECT_TRUE(nic.Receive(std::vector<uint8_t>(10, 0), false).discarded);  // runt
}

// Brute force: walk every dimension-order path and look for a faulty node in it.
std::vector<int> BruteAffected(const DorPlanner& planner, const Topology& t, int io,
                               const std::vector<uint8_t>& faulty) {
  std::vector<int> out;
  for (int d = 0; d < t.NumNodes(); ++d) {
    if (d == io || faulty[d] != 0) continue;
    const std::vector<int> path = planner.Path(t, io, d);
    bool hit = false;
    for (size_t i = 1; i + 1 < path.size(); ++i) hit = hit || faulty[path[i]] != 0;
    if (hit) out.push_back(d);
  }
  return out;
}

TEST(DetourSearchTest, AffectedSetMatchesBruteForceAndDetoursAvoidFaults) {
  std::vector<NetworkConfig> nets(4);
  nets[0].topology = TopologyKind::kGroup;
  nets[1].topology = TopologyKind::kMesh;
  nets[1].k = {4, 4};
  nets[2].topology = TopologyKind::kMesh;
  nets[2].k = {8, 8};
  nets[3].topology = TopologyKind::kTorus;
  nets[3].k = {5, 4};
  Rng rng = Rng::Stream(7, 0);
  for (const NetworkConfig& nc : nets) {
    auto topo = std::move(MakeTopology(nc).value());
    auto planner = DorPlanner::For(*topo);
    const int n = topo->NumNodes();
    int detours = 0;
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<uint8_t> faulty(n, 0);
      const int io = static_cast<int>(rng.NextU64() % n);
      for (int f = 1 + static_cast<int>(rng.NextU64() % 3); f > 0; --f) {
        const int node = static_cast<int>(rng.NextU64() % n);
        if (node != io) faulty[node] = 1;
      }
      const std::vector<int> got = AffectedDestinations(*planner, *topo, io, faulty);
      ASSERT_EQ(got, BruteAffected(*planner, *topo, io, faulty)) << topo->Describe();
      for (int d : got) {
        auto via = FindDetour(*planner, *topo, io, d, faulty, 2);
        if (!via) continue;
        ++detours;
        std::vector<int> legs = {io};
        legs.insert(legs.end(), via->begin(), via->end());
        legs.push_back(d);
        for (size_t l = 0; l + 1 < legs.size(); ++l) {
          for (int node : planner->Path(*topo, legs[l], legs[l + 1])) {
            ASSERT_EQ(faulty[node], 0) << "detour crosses a fault";
          }
        }
      }
    }
    EXPECT_GT(detours, 20) << topo->Describe();
  }
}

TEST(GatewayTest, UnknownMacBroadcastReachesOnlyItsOwner) {
  auto g = std::move(Gateway::Create(Group24(DetourPolicy::kManaged)).value());
  const int owner = 13;  // 4G1
  g->InjectIngress({0, BuildFrame(g->MacOf(owner), kExternalMacBase, 1, 500, true), true});
  RunToEnd(*g);
  const GatewayCounters& c = g->counters();
  EXPECT_EQ(c.broadcasts, 1);
  EXPECT_EQ(c.frames_delivered, 1);
  EXPECT_EQ(c.broadcast_copies_dropped, 23);  // every other node drops its copy
  EXPECT_EQ(c.frames_lost, 0);
  // An FCS error is discarded and counted, never delivered.
  std::vector<uint8_t> bad = BuildFrame(g->MacOf(owner), kExternalMacBase, 2, 500, true);
  bad[100] ^= 4;
  g->InjectIngress({0, bad, true});
  RunToEnd(*g);
  EXPECT_EQ(g->counters().frames_fcs_discarded, 1);
  EXPECT_EQ(g->counters().frames_delivered, 1);
}

// 4G1 faulty at boot: the only NIC, 3G1, reaches 5G1 only round it. managed installs the
// rows before traffic, preloaded has them from the start, learned gets them from the
// owner's outgoing frame; none loses the frames.
TEST(GatewayTest, BootFaultManagedDetoursDeliverNoneLoses) {
  for (DetourPolicy policy : {DetourPolicy::kManaged, DetourPolicy::kPreloaded,
                              DetourPolicy::kLearned, DetourPolicy::kNone}) {
    SimConfig c = Group24(policy);
    c.faults.nodes = {Name("4G1")};
    c.nic.enabled = {"3G1"};
    auto g = std::move(Gateway::Create(c).value());
    const int dst = 17;  // 5G1: normal path 3G1 -> 4G1 -> 5G1
    if (policy == DetourPolicy::kManaged) {
      const AddressRow* row = g->nic(0).table().Find(g->MacOf(dst));
      ASSERT_NE(row, nullptr);
      EXPECT_FALSE(row->detour.empty());
    }
    // The owner first talks to the outside (the NIC and the switch learn), then frames come.
    g->SendEgress(dst, BuildFrame(kExternalMacBase | 1, g->MacOf(dst), 0, 100, false));
    RunToEnd(*g);
    for (int i = 0; i < 20; ++i) {
      g->InjectIngress({0, BuildFrame(g->MacOf(dst), kExternalMacBase, i, 300, true), true});
    }
    RunToEnd(*g);
    const GatewayCounters& k = g->counters();
    EXPECT_EQ(k.egress_frames, 1);
    if (policy == DetourPolicy::kNone) {
      EXPECT_EQ(k.frames_lost, 20);
      EXPECT_EQ(k.frames_delivered, 0);
    } else {
      EXPECT_EQ(k.frames_delivered, 20) << static_cast<int>(policy);
      EXPECT_EQ(k.frames_lost, 0);
    }
  }
}

// preloaded: a row for every node, the I/O node's own too, so a frame for the I/O node's own
// MAC is a unicast to itself, not a broadcast to all 24 nodes.
TEST(GatewayTest, PreloadedHasARowForTheIoNodeItself) {
  SimConfig c = Group24(DetourPolicy::kPreloaded);
  c.nic.enabled = {"3G0"};
  auto g = std::move(Gateway::Create(c).value());
  const int io = 8;  // 3G0: (3 - 1) * 4 + 0
  EXPECT_EQ(g->nic(0).table().size(), 24u);
  const AddressRow* row = g->nic(0).table().Find(g->MacOf(io));
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->node, io);
  EXPECT_TRUE(row->detour.empty());
  for (int dst : {io, 18}) {  // itself and 5G2
    g->InjectIngress({0, BuildFrame(g->MacOf(dst), kExternalMacBase, dst, 300, true), true});
  }
  RunToEnd(*g);
  EXPECT_EQ(g->counters().broadcasts, 0);
  EXPECT_EQ(g->counters().broadcast_copies_dropped, 0);
  EXPECT_EQ(g->counters().frames_delivered, 2);
  EXPECT_EQ(g->counters().frames_lost, 0);
}

TEST(GatewayTest, RuntimeFaultIsNotifiedThenTableUpdatesArrive) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.nic.enabled = {"3G1"};
  c.nic.notify_delay_cycles = 500;
  c.faults.events = {testing::NodeEvent(100, FaultEventSpec::Kind::kFailNode, "4G1")};
  auto g = std::move(Gateway::Create(c).value());
  EXPECT_EQ(g->nic(0).table().size(), 0u);
  // The Network applies the failure at cycle 100; the gateway sees it from the next
  // cycle on and the management node is told 500 cycles later.
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(g->Step().ok());
  EXPECT_EQ(g->counters().table_updates_sent, 0);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(g->Step().ok());
  EXPECT_EQ(g->counters().table_updates_sent, 1);
  for (int i = 0; i < 2000 && g->counters().table_rows_applied == 0; ++i) {
    ASSERT_TRUE(g->Step().ok());
  }
  // Behind 4G1 as seen from 3G1: 5G1 and 6G1 (6G1 is 3 groups away: the tie goes "+").
  std::set<int> rows;
  for (const AddressRow& r : g->nic(0).table().Rows()) rows.insert(r.node);
  EXPECT_EQ(rows, (std::set<int>{17, 21}));
  EXPECT_EQ(g->counters().table_rows_applied, 2);
  EXPECT_THAT(g->nic(0).trace(), ::testing::Contains("set"));
}

TEST(GatewayTest, RetransmissionAndTheCpuBaseline) {
  SimConfig c = Group24(DetourPolicy::kNone);
  c.nic.enabled = {"3G1"};
  c.nic.retransmit = true;
  c.nic.retransmit_timeout_cycles = 100;
  c.faults.nodes = {Name("4G1")};
  auto g = std::move(Gateway::Create(c).value());
  g->InjectIngress({0, BuildFrame(g->MacOf(17), kExternalMacBase, 0, 300, true), true});
  RunToEnd(*g);
  EXPECT_EQ(g->counters().frames_retransmitted, 2);  // nic.retransmit_max = 3 tries
  EXPECT_EQ(g->counters().frames_lost, 1);
  // Fig. 1: every frame costs the I/O node's CPU 1000 cycles, one at a time.
  for (int64_t cost : {0, 1000}) {
    SimConfig b = Group24(DetourPolicy::kManaged);
    b.nic.cpu_cycles_per_frame = cost;
    b.nic.frames = 50;
    b.nic.ingress_rate = 0.01;
    auto h = std::move(Gateway::Create(b).value());
    RunToEnd(*h);
    EXPECT_EQ(h->counters().frames_delivered, 50);
    int64_t busy = 0;
    for (int64_t x : h->counters().cpu_busy) busy += x;
    EXPECT_EQ(busy, 50 * cost);
  }
}

// The Fig. 1 baseline's CPU handles egress frames too (nic.cpu_directions = "both", the
// patent's I/O node passes both directions through its CPU): an egress frame leaves the
// NIC only after its CPU time; with "ingress" at once. Busy cycles count every frame the
// CPU handled.
TEST(GatewayTest, TheFig1CpuHandlesBothDirections) {
  struct Sink final : FrameSink {
    std::vector<int64_t>* cycles;
    Status Write(int64_t cycle, std::span<const uint8_t>) override {
      cycles->push_back(cycle);
      return Status::Ok();
    }
  };
  for (CpuDirections d : {CpuDirections::kBoth, CpuDirections::kIngress}) {
    const bool both = d == CpuDirections::kBoth;
    SimConfig c = Group24(DetourPolicy::kManaged);
    c.nic.enabled = {"3G0"};
    c.nic.cpu_cycles_per_frame = 1000;
    c.nic.cpu_directions = d;
    std::vector<int64_t> sent;
    auto sink = std::make_unique<Sink>();
    sink->cycles = &sent;
    auto g = std::move(Gateway::Create(c, {}, std::move(sink)).value());
    g->SendEgress(3, BuildFrame(kExternalMacBase, g->MacOf(3), 0, 300, false));
    RunToEnd(*g);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(g->counters().egress_frames, 1);
    EXPECT_EQ(g->counters().cpu_busy[0], both ? 1000 : 0);
    if (both) {
      EXPECT_GE(sent[0], 1000) << "the CPU's 1000 cycles come before the NIC sends";
    } else {
      EXPECT_LT(sent[0], 1000);
    }
    // Ingress and egress together: every frame through the I/O node costs its CPU.
    c.nic.frames = 40;
    c.nic.ingress_rate = 0.001;
    c.nic.egress_rate = 0.0005;
    c.nic.egress_frames = 20;
    auto h = std::move(Gateway::Create(c).value());
    RunToEnd(*h);
    const GatewayCounters& k = h->counters();
    EXPECT_EQ(k.frames_delivered, 40);
    EXPECT_EQ(k.egress_frames, 20);
    EXPECT_EQ(k.cpu_busy[0], (40 + (both ? 20 : 0)) * 1000);
  }
}

TEST(GatewayTest, ConfigCheckNamesTheKeyAndPlace) {
  auto error = [](const std::string& nic) {
    return LoadSimConfigsFromString(
               "routing.algorithm = \"dor-detour\"\n[network]\n"
               "topology = \"group\"\n[nic]\nframes = 10\n" +
                   nic,
               "g.toml", {})
        .status()
        .message();
  };
  EXPECT_THAT(error("enabled = [\"3G0\", \"7G1\"]\n"),
              ::testing::HasSubstr("nic.enabled: node \"7G1\""));
  EXPECT_THAT(error("enabled = [\"3G0\", \"7G1\"]\n"), ::testing::HasSubstr("g.toml:6:"));
  EXPECT_THAT(error("management_node = \"2G9\"\n"), ::testing::HasSubstr("nic.management_node"));
  EXPECT_THAT(error("macs = [\"1G1=xx\"]\n"), ::testing::HasSubstr("nic.macs"));
  EXPECT_TRUE(LoadSimConfigsFromString("routing.algorithm = \"dor-detour\"\n[network]\n"
                                       "topology = \"group\"\n[nic]\nframes = 10\n",
                                       "g.toml", {})
                  .ok());
}

TEST(GatewayTest, ConfigErrorsNameTheKey) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.routing.algorithm = "dor";
  EXPECT_THAT(Gateway::Create(c).status().message(), ::testing::HasSubstr("routing.algorithm"));
  c = Group24(DetourPolicy::kManaged);
  c.nic.enabled = {"9G0"};
  EXPECT_THAT(Gateway::Create(c).status().message(), ::testing::HasSubstr("nic.enabled"));
  c.nic.enabled = {"3G0"};
  c.nic.macs = {"3G2=02:aa:00:00:00:01"};
  auto g = std::move(Gateway::Create(c).value());
  EXPECT_EQ(g->MacOf(10), 0x02aa00000001ULL);
  EXPECT_EQ(g->MacOf(11), 0x02000000000bULL);  // the default, index 11 in hex
  for (const char* bad : {"3G2=02:aa:00:00:00", "3G2-02:aa:00:00:00:01", "9G9=02:aa:00:00:00:01",
                          "3G2=02:aa:00:00:00:0g", "3G2=02:00:00:00:00:0b"}) {
    c.nic.macs = {bad};
    EXPECT_THAT(Gateway::Create(c).status().message(), ::testing::HasSubstr("nic.macs")) << bad;
  }
  c.nic.macs = {};
  c.nic.management_node = "2X2";
  EXPECT_THAT(Gateway::Create(c).status().message(), ::testing::HasSubstr("nic.management_node"));
}

}  // namespace
}  // namespace ukai::sim
