// The SSS NIC model's multicasts (nic/sss_plan.h, nic/sss_nic.h): every mode delivers
// exactly one copy to each member, ack combining returns exactly one ack per multicast,
// conversions between the header kinds, and the upper-link counts of the paper's claims.
#include <gtest/gtest.h>

#include "sim/experiment/sss_keys.h"
#include "sim/nic/sss_nic.h"
#include "sim/nic/sss_plan.h"
#include "sim/sss_test_util.h"
#include "sim/topology/graph.h"

namespace ukai::sim {
namespace {

using testing::RunUntilDone;
using testing::SssTree;

struct Mode {
  MulticastKind kind;
  bool acks;
};

class MulticastModeTest : public ::testing::TestWithParam<Mode> {};

TEST_P(MulticastModeTest, OneCopyPerMemberAndOneAck) {
  SimConfig c = SssTree(4, 2);
  c.sss.acks = GetParam().acks;
  Result<std::unique_ptr<SssMachine>> made = SssMachine::Create(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  SssMachine& m = **made;
  m.TrackDeliveries(true);
  SssOp op;
  op.kind = SssOp::Kind::kMulticast;
  op.multicast = GetParam().kind;
  op.src = 5;
  op.members = {0, 1, 2, 6, 9, 10, 15};
  op.bytes = 100;
  op.ack = GetParam().acks;
  op.measured = true;
  Result<int64_t> id = m.Submit(op);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const SssCompletion done = RunUntilDone(m, *id);
  EXPECT_GT(done.completed, done.started);
  // Drain the members' DMAs (an acked multicast completes on its acks).
  for (int i = 0; i < 100000 && !m.Idle(); ++i) m.Step();
  for (int node = 0; node < m.topology().NumTerminals(); ++node) {
    const bool member = std::count(op.members.begin(), op.members.end(), node) > 0;
    EXPECT_EQ(m.deliveries(*id, node), member ? 1 : 0) << "node " << node;
  }
  const int64_t expected_acks = !op.ack ? 0 : op.multicast == MulticastKind::kNaive ? 7 : 1;
  EXPECT_EQ(m.counters().acks_returned, expected_acks);
  EXPECT_EQ(m.counters().packets_dropped, 0);
  EXPECT_TRUE(m.network().CheckInvariants().ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, MulticastModeTest,
                         ::testing::Values(Mode{MulticastKind::kNaive, false},
                                           Mode{MulticastKind::kNaive, true},
                                           Mode{MulticastKind::kHierarchical, false},
                                           Mode{MulticastKind::kHierarchical, true},
                                           Mode{MulticastKind::kChained, false},
                                           Mode{MulticastKind::kChained, true}));

}  // namespace
}  // namespace ukai::sim

namespace ukai::sim {
namespace {

// The paper's claims on the upper links, exactly, on a tree of 4 x 4 (end nodes n0..n15
// under s1.0..s1.3, s2.0 on top): n0 sends to one member under each other leaf switch. The
// multicast tree has 4 upper channels (s1.0 up, s2.0 down three times).
TEST(MulticastUpperLinksTest, NaiveHierarchicalChainedWithAndWithoutAcks) {
  struct Case {
    MulticastKind kind;
    bool acks;
    int64_t packets;  // packets over upper channels (per channel crossed)
  };
  for (const Case& cs :
       {Case{MulticastKind::kNaive, false, 6}, Case{MulticastKind::kNaive, true, 12},
        Case{MulticastKind::kHierarchical, false, 4}, Case{MulticastKind::kHierarchical, true, 8},
        Case{MulticastKind::kChained, false, 6}, Case{MulticastKind::kChained, true, 8}}) {
    SimConfig c = testing::SssTree(4, 2);
    c.sss.acks = cs.acks;
    auto m = std::move(SssMachine::Create(c)).value();
    SssOp op;
    op.kind = SssOp::Kind::kMulticast;
    op.multicast = cs.kind;
    op.src = 0;
    op.members = {4, 8, 12};
    op.bytes = 64;
    op.ack = cs.acks;
    op.measured = true;
    testing::RunUntilDone(*m, m->Submit(op).value());
    EXPECT_EQ(m->counters().upper_link_packets, cs.packets)
        << MulticastKindName(cs.kind) << (cs.acks ? " with acks" : "");
  }
}

// Header conversion: leaf switches that cannot copy make the top switch convert the tree's
// branches into chains (hierarchical -> chained, the route back kept for the ack); a chained
// packet meets a switch that can copy and becomes a tree (chained -> hierarchical). Each
// member still gets one copy and the source one ack.
TEST(MulticastConversionTest, BothWaysOneCopyEachOneAck) {
  struct Case {
    MulticastKind kind;
    bool convert;
    std::vector<std::string> copy;  // empty: every switch
  };
  for (const Case& cs :
       {Case{MulticastKind::kHierarchical, false, {"s2.0"}},
        Case{MulticastKind::kHierarchical, false, {"s1.0"}},
        Case{MulticastKind::kChained, true, {"s2.0"}}, Case{MulticastKind::kChained, true, {}}}) {
    for (bool acks : {false, true}) {
      SimConfig c = testing::SssTree(4, 2);
      c.sss.acks = acks;
      c.sss.multicast_convert = cs.convert;
      if (!cs.copy.empty()) {
        c.sss.copy_all = false;
        c.sss.copy_switches = cs.copy;
      }
      auto m = std::move(SssMachine::Create(c)).value();
      m->TrackDeliveries(true);
      SssOp op;
      op.kind = SssOp::Kind::kMulticast;
      op.multicast = cs.kind;
      op.src = 1;
      op.members = {0, 2, 5, 6, 7, 9, 14, 15};
      op.bytes = 300;
      op.ack = acks;
      op.measured = true;
      const int64_t id = m->Submit(op).value();
      testing::RunUntilDone(*m, id);
      for (int i = 0; i < 100000 && !m->Idle(); ++i) m->Step();
      for (int node = 0; node < 16; ++node) {
        const bool member = std::count(op.members.begin(), op.members.end(), node) > 0;
        EXPECT_EQ(m->deliveries(id, node), member ? 1 : 0) << "node " << node;
      }
      EXPECT_EQ(m->counters().acks_returned, acks ? 1 : 0);
      EXPECT_EQ(m->counters().packets_dropped, 0);
    }
  }
}

// The plans themselves: what converts where.
TEST(MulticastPlanTest, ConversionsAppearWhereTheSwitchesAllowThem) {
  Result<GraphSpec> spec = TreeSpec(4, 2, 1);
  auto g = std::move(GraphTopology::Create(*spec)).value();
  auto table = std::move(SourceRouteTable::Build(*g, SourceRouteMode::kAuto, -1, 1)).value();
  SssConfig c;
  c.acks = true;
  std::vector<uint8_t> all(g->NumNodes(), 1), top(g->NumNodes(), 0);
  top[g->Find("s2.0")] = 1;
  const std::vector<int> members = {0, 2, 5, 6, 9};
  // All switches copy: one tree, no chain, acks combined at s1.0, s1.1 and s2.0.
  McastPlan h =
      std::move(BuildMulticastPlan(*g, *table, c, all, MulticastKind::kHierarchical, 1, members))
          .value();
  EXPECT_EQ(h.txs.size(), 1u);
  EXPECT_TRUE(h.txs[0].tree);
  EXPECT_EQ(h.source_acks, 1);
  // Only the top copies: s1.0 (members 0, 2) and s1.1 (5, 6) cannot branch, so s2.0 converts
  // their members into chains; member 9 is the tree's own leaf.
  McastPlan t =
      std::move(BuildMulticastPlan(*g, *table, c, top, MulticastKind::kHierarchical, 1, members))
          .value();
  int chains = 0;
  for (const McastTx& tx : t.txs) chains += tx.kind == SssPacketKind::kMulticastChain;
  EXPECT_GE(chains, 4);
  EXPECT_EQ(t.source_acks, 1);
  // Chained with conversion: the first switch that copies (s1.0 itself) takes it.
  c.multicast_convert = true;
  McastPlan x =
      std::move(BuildMulticastPlan(*g, *table, c, all, MulticastKind::kChained, 1, members))
          .value();
  EXPECT_EQ(x.txs[0].kind, SssPacketKind::kConverted);
  EXPECT_EQ(g->NodeName(x.txs[0].dst), "s1.0");
  EXPECT_FALSE(BuildMulticastPlan(*g, *table, c, all, MulticastKind::kChained, 1, {1, 2}).ok());
}

}  // namespace
}  // namespace ukai::sim
