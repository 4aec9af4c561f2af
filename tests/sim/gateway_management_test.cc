// The gateway's management node at run time (src/sim/nic/management.cc): job launches that
// change the NIC enable register (nic.jobs) and the external switch following them, frames
// in flight at the switch-over, compute nodes' egress detours updated after a runtime
// fault, and a repair handled like a fault (notified late, detours no longer needed
// cleared).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gateway_test_util.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/nic/frame_source.h"
#include "sim/nic/gateway.h"

namespace ukai::sim {
namespace {

using testing::Group24;
using testing::NodeEvent;
using testing::RunToEnd;

constexpr int kNode5G1 = 17, kNode5G3 = 19, kNode6G0 = 20, kNode6G1 = 21;

void StepTo(Gateway& g, int64_t cycle) {
  while (g.network().now() < cycle) ASSERT_TRUE(g.Step().ok());
}

std::vector<uint8_t> Egress(const Gateway& g, int node, uint64_t seq) {
  return BuildFrame(kExternalMacBase | 1, g.MacOf(node), seq, 1500, false);
}

IngressFrame Ingress(const Gateway& g, int node, uint64_t seq) {
  return {0, BuildFrame(g.MacOf(node), kExternalMacBase, seq, 300, true), true};
}

// Every frame that reached the switch is accounted for exactly once.
void ExpectAccounted(const GatewayCounters& c) {
  EXPECT_EQ(c.frames_delivered + c.frames_lost + c.frames_fcs_discarded + c.frames_no_owner +
                c.frames_owner_faulty,
            c.frames_in);
}

// 3G0 alone at start; at cycle 5000 a job launch enables 3G2 instead. The commands travel
// from the management node (2G2); then 3G2 takes every ingress frame, also those for a MAC
// the switch had learned behind 3G0, and every node uses 3G2.
TEST(GatewayManagementTest, JobLaunchSwitchesTheEnableRegister) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.nic.enabled = {"3G0"};
  c.nic.jobs = {{5000, {"3G2"}, "in the test"}};
  auto g = std::move(Gateway::Create(c).value());
  ASSERT_EQ(g->nic_nodes(), (std::vector<int>{8, 10}));
  EXPECT_TRUE(g->nic_enabled(0));
  EXPECT_FALSE(g->nic_enabled(1));
  g->SendEgress(kNode5G3, Egress(*g, kNode5G3, 0));  // the switch learns 5G3 behind 3G0
  for (int i = 0; i < 10; ++i) g->InjectIngress(Ingress(*g, kNode5G3, i));
  RunToEnd(*g);
  EXPECT_EQ(g->counters().nic_frames, (std::vector<int64_t>{11, 0}));
  EXPECT_EQ(g->IoNodeOf(kNode5G3), 0);
  StepTo(*g, 5000);
  EXPECT_TRUE(g->nic_enabled(0));  // the launch is due; nothing has arrived yet
  EXPECT_EQ(g->counters().nic_commands_sent, 0);
  ASSERT_TRUE(g->Step().ok());  // the management node launches the job
  RunToEnd(*g);                 // the commands and the assignments arrive
  const GatewayCounters& k = g->counters();
  EXPECT_EQ(k.job_launches, 1);
  EXPECT_EQ(k.nic_commands_sent, 2);     // disable 3G0, enable 3G2
  EXPECT_EQ(k.egress_updates_sent, 24);  // every node's I/O node changes
  EXPECT_FALSE(g->nic_enabled(0));
  EXPECT_TRUE(g->nic_enabled(1));
  for (int i = 0; i < 24; ++i) EXPECT_EQ(g->IoNodeOf(i), 1) << i;
  for (int i = 10; i < 20; ++i) g->InjectIngress(Ingress(*g, kNode5G3, i));
  g->SendEgress(kNode5G3, Egress(*g, kNode5G3, 1));
  RunToEnd(*g);
  EXPECT_EQ(k.nic_frames, (std::vector<int64_t>{11, 11}));
  EXPECT_EQ(k.frames_delivered, 20);  // once each
  EXPECT_EQ(k.egress_frames, 2);
  ExpectAccounted(k);
}

// With the Fig. 1 CPU cost frames queue at 3G0 when it is disabled: they are dropped and
// counted, then lost or (nic.retransmit) re-sent through 3G2. An egress frame 6G0 sends just
// before the launch reaches 3G0 after it went down: counted, lost or re-sent.
TEST(GatewayManagementTest, FramesInFlightAtTheSwitchOverAreDeliveredOrCounted) {
  for (bool retransmit : {false, true}) {
    SimConfig c = Group24(DetourPolicy::kManaged);
    c.nic.enabled = {"3G0"};
    c.nic.jobs = {{5000, {"3G2"}, "in the test"}};
    c.nic.cpu_cycles_per_frame = 2000;
    c.nic.retransmit = retransmit;
    c.nic.retransmit_timeout_cycles = 100;
    auto g = std::move(Gateway::Create(c).value());
    StepTo(*g, 2990);
    for (int i = 0; i < 10; ++i) g->InjectIngress(Ingress(*g, i, i));
    StepTo(*g, 4999);
    g->SendEgress(kNode6G0, Egress(*g, kNode6G0, 0));
    RunToEnd(*g);
    const GatewayCounters& k = g->counters();
    EXPECT_EQ(k.frames_in, 10);
    EXPECT_EQ(k.frames_dropped_disabled, 9) << retransmit;  // the first left before 5000
    EXPECT_EQ(k.egress_dropped_disabled, 1);
    if (retransmit) {
      EXPECT_EQ(k.frames_delivered, 10);
      EXPECT_EQ(k.frames_retransmitted, 9);
      EXPECT_EQ(k.nic_frames[1], 9 + 1);  // the re-sent frames and the egress frame
      EXPECT_EQ(k.egress_retransmitted, 1);
      EXPECT_EQ(k.egress_frames, 1);
      EXPECT_EQ(k.egress_lost, 0);
    } else {
      EXPECT_EQ(k.frames_delivered, 1);
      EXPECT_EQ(k.frames_lost, 9);
      EXPECT_EQ(k.egress_frames, 0);
      EXPECT_EQ(k.egress_lost, 1);
    }
    ExpectAccounted(k);
  }
}

// 4G1 fails at cycle 100 during the run. 5G1's way out to 3G1 crosses it: a frame it sends
// before the management node knows is lost (or, with retransmission, re-sent later); once
// the updated detour has arrived every egress frame gets out.
TEST(GatewayManagementTest, RuntimeFaultUpdatesTheEgressDetours) {
  for (bool retransmit : {false, true}) {
    SimConfig c = Group24(DetourPolicy::kManaged);
    c.nic.enabled = {"3G1"};
    c.nic.notify_delay_cycles = 500;
    c.nic.retransmit = retransmit;
    c.nic.retransmit_timeout_cycles = 3000;
    c.faults.events = {NodeEvent(100, FaultEventSpec::Kind::kFailNode, "4G1")};
    auto g = std::move(Gateway::Create(c).value());
    EXPECT_TRUE(g->OutDetourOf(kNode5G1).empty());
    StepTo(*g, 200);
    g->SendEgress(kNode5G1, Egress(*g, kNode5G1, 0));  // before the update
    StepTo(*g, 602);  // notified at 601: the assignments leave the management node
    EXPECT_GT(g->counters().egress_updates_sent, 0);
    EXPECT_TRUE(g->OutDetourOf(kNode5G1).empty());  // not there yet
    while (g->OutDetourOf(kNode5G1).empty() && g->network().now() < 3000) {
      ASSERT_TRUE(g->Step().ok());
    }
    EXPECT_FALSE(g->OutDetourOf(kNode5G1).empty());
    EXPECT_FALSE(g->ReturnDetourOf(kNode5G1).empty());
    for (int i = 1; i <= 20; ++i) g->SendEgress(kNode5G1, Egress(*g, kNode5G1, i));
    RunToEnd(*g);
    const GatewayCounters& k = g->counters();
    EXPECT_EQ(k.egress_frames, retransmit ? 21 : 20) << retransmit;
    EXPECT_EQ(k.egress_lost, retransmit ? 0 : 1);
    EXPECT_EQ(k.egress_retransmitted, retransmit ? 1 : 0);
  }
}

// 4G1 fails at cycle 100 and is repaired at 5000; the network uses it again when the
// repair's reconfiguration ends (before cycle 6000). The repair reaches the
// management node 500 cycles after that, like a fault; it then clears the NIC rows' detours to 5G1
// and 6G1 and 5G1's detours to and from its I/O node.
TEST(GatewayManagementTest, RepairIsNotifiedAndRestoresTheNormalPath) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.nic.enabled = {"3G1"};
  c.nic.notify_delay_cycles = 500;
  c.faults.events = {NodeEvent(100, FaultEventSpec::Kind::kFailNode, "4G1"),
                     NodeEvent(5000, FaultEventSpec::Kind::kRepairNode, "4G1")};
  auto g = std::move(Gateway::Create(c).value());
  auto detour_to = [&](int node) {
    const AddressRow* row = g->nic(0).table().Find(g->MacOf(node));
    return row == nullptr ? std::vector<int32_t>{-1} : row->detour;
  };
  StepTo(*g, 5000);
  while (g->network().faults().NodeFaulty(13)) ASSERT_TRUE(g->Step().ok());
  const int64_t repaired = g->network().now();  // the network uses 4G1 again
  EXPECT_LT(repaired, 6000);
  StepTo(*g, repaired + 490);  // not yet known to the management node
  EXPECT_FALSE(detour_to(kNode5G1).empty());
  EXPECT_FALSE(detour_to(kNode6G1).empty());
  EXPECT_FALSE(g->OutDetourOf(kNode5G1).empty());
  EXPECT_EQ(g->counters().table_updates_sent, 1);
  StepTo(*g, repaired + 510);
  RunToEnd(*g);
  const GatewayCounters& k = g->counters();
  EXPECT_EQ(k.table_updates_sent, 2);
  EXPECT_EQ(k.table_rows_cleared, 2);
  EXPECT_EQ(detour_to(kNode5G1), std::vector<int32_t>{});
  EXPECT_EQ(detour_to(kNode6G1), std::vector<int32_t>{});
  EXPECT_TRUE(g->OutDetourOf(kNode5G1).empty());
  EXPECT_TRUE(g->ReturnDetourOf(kNode5G1).empty());
  g->InjectIngress(Ingress(*g, 13, 0));  // 4G1 itself is back
  g->InjectIngress(Ingress(*g, kNode5G1, 1));
  RunToEnd(*g);
  EXPECT_EQ(k.frames_delivered, 2);
  EXPECT_EQ(k.management_messages_lost, 0);
}

// I/O node 3G1 fails at cycle 100: its NIC's link goes down at once, so the switch gives
// every frame to 3G0 (else those for half the MACs would go to the dead node); after the
// notice every node uses 3G0. After the repair (cycle 20000) is notified the management
// node enables 3G1's NIC again.
TEST(GatewayManagementTest, IoNodeFailureTakesItsLinkDownUntilRepaired) {
  SimConfig c = Group24(DetourPolicy::kManaged);
  c.nic.notify_delay_cycles = 500;
  c.faults.events = {NodeEvent(100, FaultEventSpec::Kind::kFailNode, "3G1"),
                     NodeEvent(20000, FaultEventSpec::Kind::kRepairNode, "3G1")};
  auto g = std::move(Gateway::Create(c).value());
  ASSERT_EQ(g->nic_nodes(), (std::vector<int>{8, 9}));
  StepTo(*g, 102);
  EXPECT_TRUE(g->nic_enabled(0));
  EXPECT_FALSE(g->nic_enabled(1));
  // Notified at 601; the table update and the assignments leave then but wait in the
  // management node's queue while the network's reconfiguration pauses it.
  auto on_3g0 = [&] {
    int n = 0;
    for (int i = 0; i < 24; ++i) n += g->IoNodeOf(i) == 0 ? 1 : 0;
    return n;
  };
  while (g->counters().table_rows_applied == 0 || on_3g0() < 23) {
    ASSERT_LT(g->network().now(), 5000);
    ASSERT_TRUE(g->Step().ok());
  }
  for (int i = 0; i < 24; ++i) g->InjectIngress(Ingress(*g, i, i));
  RunToEnd(*g);
  const GatewayCounters& k = g->counters();
  EXPECT_EQ(k.frames_delivered, 23);  // all but 3G1's own
  EXPECT_EQ(k.frames_owner_faulty, 1);
  EXPECT_EQ(k.frames_lost, 0);
  EXPECT_EQ(k.nic_frames, (std::vector<int64_t>{24, 0}));
  EXPECT_EQ(k.nic_commands_sent, 0);  // no command reaches a dead node
  while (g->network().faults().NodeFaulty(9)) ASSERT_TRUE(g->Step().ok());
  StepTo(*g, g->network().now() + 600);
  RunToEnd(*g);
  EXPECT_EQ(k.nic_commands_sent, 1);
  EXPECT_TRUE(g->nic_enabled(1));
  EXPECT_EQ(g->IoNodeOf(13), 1);  // 4G1 is nearest to 3G1 again
  ExpectAccounted(k);
}

TEST(GatewayManagementTest, JobsKeyIsReadAndCheckedWithItsPlace) {
  auto load = [](const std::string& jobs) {
    return LoadSimConfigsFromString(
        "routing.algorithm = \"dor-detour\"\n[network]\ntopology = \"group\"\n[nic]\n"
        "frames = 10\njobs = " +
            jobs + "\n",
        "g.toml", {});
  };
  auto ok = load(
      "[{cycle = 300000, enabled = [\"3G2\", \"3G3\"]}, {cycle = 400000, enabled = "
      "[\"3G0\"]}]");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->front().nic.jobs.size(), 2u);
  EXPECT_EQ(ok->front().nic.jobs[0].cycle, 300000);
  EXPECT_EQ(ok->front().nic.jobs[0].enabled, (std::vector<std::string>{"3G2", "3G3"}));
  auto error = [&](const std::string& jobs) { return load(jobs).status().message(); };
  EXPECT_THAT(error("[{cycle = 0, enabled = [\"3G2\"]}]"),
              ::testing::AllOf(::testing::HasSubstr("nic.jobs"), ::testing::HasSubstr("> 0"),
                               ::testing::HasSubstr("g.toml:6:")));
  EXPECT_THAT(error("[{cycle = 5, enabled = []}]"), ::testing::HasSubstr("non-empty"));
  EXPECT_THAT(error("[{cycle = 5, enabled = [\"3G2\"], nodes = 3}]"),
              ::testing::HasSubstr("unknown field 'nodes'"));
  EXPECT_THAT(error("[{cycle = 5, enabled = [\"9G2\"]}]"),
              ::testing::AllOf(::testing::HasSubstr("nic.jobs: node \"9G2\""),
                               ::testing::HasSubstr("g.toml:6:")));
  EXPECT_THAT(error("[{cycle = 5, enabled = [\"3G2\", \"3G2\"]}]"),
              ::testing::HasSubstr("listed twice"));
  EXPECT_THAT(error("[{cycle = 9, enabled = [\"3G2\"]}, {cycle = 5, enabled = [\"3G0\"]}]"),
              ::testing::HasSubstr("cycle order"));
  EXPECT_THAT(error("3"), ::testing::HasSubstr("nic.jobs"));
}

}  // namespace
}  // namespace ukai::sim
