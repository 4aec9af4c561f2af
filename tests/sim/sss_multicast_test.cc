// The SSS NIC model's multicasts (nic/sss_plan.h, nic/sss_nic.h): every mode delivers
// exactly one copy to each member, ack combining returns exactly one ack per multicast,
// conversions between the header kinds, and the upper-link counts of the paper's claims.
#include <gtest/gtest.h>

#include "sim/nic/sss_nic.h"
#include "sim/sss_test_util.h"

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
