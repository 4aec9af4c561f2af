// The full-mesh controller: the document's A/B/C walk-through (claims-004 ABC1-ABC7), the
// table invariants under random arrival storms (a link is never given to two
// communications, waiting rows keep arrival order, every operation completes), and the
// relay choice of each policy.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/rng.h"
#include "sim/fullmesh/machine.h"
#include "sim/fullmesh_test_util.h"

namespace ukai::sim::fullmesh {
namespace {

FullMeshConfig Emb3(int nodes) {
  FullMeshConfig c;
  c.nodes = nodes;
  c.relay = RelayKind::kSwitch;
  c.policy = Policy::kFixedK;
  c.Normalize();
  return c;
}

// The links of `row` as (from, to) pairs.
std::set<std::pair<int, int>> LinksOf(const Controller& c, const CommRow& row) {
  std::set<std::pair<int, int>> out;
  for (int32_t l : row.links) {
    int f, t, p;
    c.link_table().Endpoints(l, &f, &t, &p);
    out.insert({f, t});
  }
  return out;
}

// The document's nodes 1..4 are our 0..3. A: p2p 1 -> 2 (5000 elements of 4 bytes);
// B: scatter from node 2 (not the text's node 1: claims-004 X5) to WORLD, 5000 elements;
// C: multicast from node 3 to WORLD, 50 elements.
std::vector<Operation> AbcOps(int b_root) {
  return {Op(OpType::kP2p, 0, 1, 20000), Op(OpType::kScatter, b_root, -1, 20000),
          Op(OpType::kMulticast, 2, -1, 200)};
}

TEST(FullMeshAbcTest, TablesFollowTheDocument) {
  Machine m(Emb3(4), AbcOps(/*b_root=*/1));
  const Controller& c = m.controller();
  ASSERT_TRUE(m.Step());  // ABC2: A is row 1, uses direct 1-2 plus relays 3 and 4
  ASSERT_EQ(c.comm_table().rows().size(), 1u);
  const CommRow a = c.comm_table().rows()[0];  // a copy: the rows move
  EXPECT_EQ(a.state, RowState::kCommunicating);
  EXPECT_EQ(a.relays, (std::vector<int>{2, 3}));
  EXPECT_EQ(LinksOf(c, a), (std::set<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {2, 1}, {3, 1}}));
  EXPECT_EQ(c.link_table().usage_hop(c.link_table().LinkId(0, 1, 0)), Hop::kDirect);
  EXPECT_EQ(c.link_table().usage_hop(c.link_table().LinkId(2, 1, 0)), Hop::kSecond);
  ASSERT_TRUE(m.Step());  // ABC3: B (scatter) direct links 2-1, 2-3, 2-4, free: starts
  const CommRow b = c.comm_table().rows()[1];
  EXPECT_EQ(b.state, RowState::kCommunicating);
  EXPECT_TRUE(b.relays.empty());
  EXPECT_EQ(LinksOf(c, b), (std::set<std::pair<int, int>>{{1, 0}, {1, 2}, {1, 3}}));
  ASSERT_TRUE(m.Step());  // ABC4: C is small: direct 3-1, 3-2, 3-4; 3-2 is A's: C waits
  const CommRow& cr = c.comm_table().rows()[2];
  EXPECT_EQ(cr.state, RowState::kWaiting);
  EXPECT_EQ(cr.sender, 2);
  EXPECT_EQ(cr.receiver, -1);  // the communicator (WORLD)
  EXPECT_EQ(c.link_table().usage(c.link_table().LinkId(2, 1, 0)), a.number);
  const int16_t a_number = a.number, b_number = b.number;
  ASSERT_TRUE(m.Step());  // ABC5: A finishes; rows move up; C starts
  ASSERT_EQ(c.comm_table().rows().size(), 2u);
  const CommRow& b2 = c.comm_table().rows()[0];
  const CommRow& c2 = c.comm_table().rows()[1];
  EXPECT_EQ(b2.number, b_number);
  EXPECT_EQ(c2.state, RowState::kCommunicating);
  EXPECT_NE(c2.number, a_number);
  EXPECT_EQ(LinksOf(c, c2), (std::set<std::pair<int, int>>{{2, 0}, {2, 1}, {2, 3}}));
  // ABC6: 6 links busy (B's three, C's three), the other 6 of the 12 idle.
  EXPECT_EQ(c.link_table().busy_links(), 6);
  EXPECT_EQ(m.results()[0].relays, 2);
  EXPECT_TRUE(m.results()[0].direct);
  m.Run();
  for (const OpResult& r : m.results()) EXPECT_TRUE(r.data_ok);
}

TEST(FullMeshAbcTest, OneHopMulticastCWouldStillWaitAfterA) {
  // ABC7: with 1-hop C (K = N = 4) it needs 2-1 and 2-4, which B holds.
  FullMeshConfig cfg = Emb3(4);
  cfg.decision = Decision::kAlways;
  Machine m(cfg, AbcOps(1));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(m.Step());
  const auto& rows = m.controller().comm_table().rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].state, RowState::kWaiting);
}

TEST(FullMeshAbcTest, RootOneContradictsTheDocument) {
  // claims-004 X5: with the text's root (node 1) B would wait, and C behind it.
  Machine m(Emb3(4), AbcOps(0));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(m.Step());
  const auto& rows = m.controller().comm_table().rows();
  EXPECT_EQ(rows[1].state, RowState::kWaiting);
  EXPECT_EQ(rows[2].state, RowState::kWaiting);
}

// Checks the invariants of the tables after every event.
void CheckInvariants(const Controller& c) {
  const auto& rows = c.comm_table().rows();
  std::set<int32_t> held;
  int64_t links = 0;
  bool seen_waiting = false;
  std::set<int16_t> numbers;
  for (const CommRow& row : rows) {
    ASSERT_TRUE(numbers.insert(row.number).second) << "duplicate number";
    if (row.state == RowState::kWaiting) {
      seen_waiting = true;
      ASSERT_TRUE(row.links.empty());
      continue;
    }
    ASSERT_FALSE(seen_waiting) << "a row started ahead of an earlier waiting row";
    for (int32_t l : row.links) {
      ASSERT_TRUE(held.insert(l).second) << "link given to two communications";
      ASSERT_EQ(c.link_table().usage(l), row.number);
      ++links;
    }
  }
  ASSERT_EQ(links, c.link_table().busy_links());
}

struct StormCase {
  Policy policy;
  RelayMode mode;
  int nodes, planes, m;
  bool group_relay;
};

TEST(FullMeshStormTest, RandomArrivalsAllCompleteWithInvariantsKept) {
  const StormCase cases[] = {
      {Policy::kFixedK, RelayMode::kPipelined, 8, 1, 1, false},
      {Policy::kVariableK, RelayMode::kStoreAndForward, 8, 2, 1, false},
      {Policy::kVariableK, RelayMode::kPipelined, 6, 1, 2, true},
      {Policy::kFixedK, RelayMode::kStoreAndForward, 5, 2, 1, true},
  };
  uint64_t seed = 7;
  for (const StormCase& sc : cases) {
    FullMeshConfig cfg = Emb3(sc.nodes);
    cfg.policy = sc.policy;
    cfg.relay_mode = sc.mode;
    cfg.planes = sc.planes;
    cfg.relays_per_node = sc.m;
    cfg.group_relay = sc.group_relay;
    cfg.comms.push_back({"G0", {0, 1, 2}});
    Rng rng(++seed);
    std::vector<Operation> ops;
    double t = 0;
    for (int i = 0; i < 400; ++i) {
      t += rng.NextDouble() * 1.0;
      Operation op;
      op.type = static_cast<OpType>(rng.Uniform(8));
      op.comm = static_cast<int>(rng.Uniform(2));
      const std::vector<int>& mem = cfg.comms[op.comm].members;
      op.root = mem[rng.Uniform(mem.size())];
      op.dest = mem[(std::find(mem.begin(), mem.end(), op.root) - mem.begin() + 1) % mem.size()];
      op.bytes = 4 * static_cast<int64_t>(1 + rng.Uniform(3000));
      op.at_us = t;
      ops.push_back(op);
    }
    ASSERT_TRUE(ValidateFullMesh(cfg, ops).ok()) << ValidateFullMesh(cfg, ops).message();
    Machine m(cfg, ops);
    int64_t steps = 0;
    while (m.Step()) {
      CheckInvariants(m.controller());
      ASSERT_LT(++steps, 10000) << "no progress";
    }
    EXPECT_EQ(m.completed(), static_cast<int64_t>(ops.size()));
    EXPECT_TRUE(m.controller().comm_table().rows().empty());
    EXPECT_EQ(m.controller().link_table().busy_links(), 0);
    for (const OpResult& r : m.results()) {
      EXPECT_TRUE(r.data_ok) << "operation " << r.op_index;
      EXPECT_GE(r.start_us, r.arrival_us);
      EXPECT_GT(r.finish_us, r.start_us);
    }
  }
}

TEST(FullMeshControllerTest, VariableKTakesOnlyIdleRelays) {
  // A p2p 0 -> 1 holds relays 2..5; a second p2p 6 -> 7 under variable-k can only use
  // relays whose hops are idle: 2..5 are idle as links 6->r, r->7 but their relay units
  // are busy (M = 1), so it goes direct-only at once instead of waiting.
  FullMeshConfig cfg = Emb3(8);
  cfg.policy = Policy::kVariableK;
  std::vector<Operation> ops = {Op(OpType::kP2p, 0, 1, 400000), Op(OpType::kP2p, 6, 7, 400000)};
  Machine m(cfg, ops);
  ASSERT_TRUE(m.Step());
  ASSERT_TRUE(m.Step());
  const auto& rows = m.controller().comm_table().rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].relays, (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(rows[1].state, RowState::kCommunicating);
  EXPECT_TRUE(rows[1].relays.empty());
  // The same under fixed-k waits (it wants every relay).
  cfg.policy = Policy::kFixedK;
  Machine f(cfg, ops);
  ASSERT_TRUE(f.Step());
  ASSERT_TRUE(f.Step());
  EXPECT_EQ(f.controller().comm_table().rows()[1].state, RowState::kWaiting);
}

TEST(FullMeshControllerTest, KRangeLimitsVariableK) {
  FullMeshConfig cfg = Emb3(8);
  cfg.policy = Policy::kVariableK;
  cfg.k_max = 3;
  Machine m(cfg, {Op(OpType::kP2p, 0, 1, 400000)});
  m.Run();
  EXPECT_EQ(m.results()[0].relays, 3);
  cfg.k_min = 7;  // a p2p on 8 nodes has at most 6 relays
  cfg.k_max = 0;
  Status st = ValidateFullMesh(cfg, {Op(OpType::kP2p, 0, 1, 400)});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("fullmesh.k_min"), std::string::npos) << st.message();
}

TEST(FullMeshControllerTest, BadSettingsNameTheKey) {
  FullMeshConfig cfg = Emb3(8);
  cfg.comms.push_back({"lonely", {3}});
  Status st = ValidateFullMesh(cfg, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("fullmesh.groups: group 'lonely' has 1 node"), std::string::npos);
  FullMeshConfig k = Emb3(8);
  k.k_max = 9;
  EXPECT_NE(ValidateFullMesh(k, {}).message().find("fullmesh.k_max"), std::string::npos);
  Status red = ValidateFullMesh(Emb3(8), {Op(OpType::kReduce, 0, -1, 6)});
  EXPECT_NE(red.message().find("workload.ops: operation 1"), std::string::npos) << red.message();
  Status p2p = ValidateFullMesh(Emb3(8), {Op(OpType::kP2p, 0, 0, 8)});
  EXPECT_NE(p2p.message().find("receiver"), std::string::npos) << p2p.message();
}

TEST(FullMeshControllerTest, MoreThan1024LiveCommunicationsQueueOutsideTheTable) {
  FullMeshConfig cfg = Emb3(4);
  cfg.data = false;
  std::vector<Operation> ops(1500, Op(OpType::kP2p, 0, 1, 100000));
  Machine m(cfg, ops);
  for (int i = 0; i < 1500; ++i) ASSERT_TRUE(m.Step());
  EXPECT_EQ(m.controller().comm_table().rows().size(), 1024u);
  EXPECT_EQ(m.controller().queued_outside(), 476u);
  m.Run();
  EXPECT_EQ(m.completed(), 1500);
}

TEST(FullMeshAwgTest, CyclicPlanGivesEveryPairItsWavelengthAnd2NFibres) {
  for (int n : {3, 8, 40, 120}) {
    Result<int64_t> f = CheckCyclicAwgPlan(n, 1);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ(*f, 2 * n);
  }
  EXPECT_EQ(*CheckCyclicAwgPlan(8, 2), 32);
}

}  // namespace
}  // namespace ukai::sim::fullmesh

namespace ukai::sim::fullmesh {
namespace {

TEST(FullMeshStreamTest, StreamingGivesTheSameResultsAsAVector) {
  FullMeshConfig cfg = Emb3(6);
  cfg.policy = Policy::kVariableK;
  Rng rng(3);
  std::vector<Operation> ops;
  for (int i = 0; i < 300; ++i) {
    const int root = static_cast<int>(rng.Uniform(6));
    ops.push_back(Op(i % 3 == 0 ? OpType::kAllreduce : OpType::kP2p, root, (root + 1) % 6,
                     4 * (1 + static_cast<int64_t>(rng.Uniform(5000))), 0, 0.5 * i));
  }
  Machine whole(cfg, ops);
  whole.Run();
  size_t next = 0;
  std::vector<OpResult> streamed(ops.size());
  int64_t seen = 0;
  Machine stream(
      cfg,
      [&](Operation* op) {
        if (next == ops.size()) return false;
        *op = ops[next++];
        return true;
      },
      [&](int64_t index, const Operation& op, const OpResult& r) {
        EXPECT_EQ(op.bytes, ops[index].bytes);
        streamed[index] = r;
        ++seen;
      });
  stream.Run();
  ASSERT_EQ(seen, static_cast<int64_t>(ops.size()));
  EXPECT_TRUE(stream.results().empty());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(streamed[i].finish_us, whole.results()[i].finish_us) << i;
    EXPECT_EQ(streamed[i].relays, whole.results()[i].relays) << i;
    EXPECT_TRUE(streamed[i].data_ok) << i;
  }
}

}  // namespace
}  // namespace ukai::sim::fullmesh

namespace ukai::sim::fullmesh {
namespace {

TEST(FullMeshRelayUnitsTest, MConcurrentRelaysPerNode) {
  // N = 5, variable-k: p2p 0 -> 1 takes relays 2, 3, 4. p2p 2 -> 3 can then only use relay
  // 4 (its hops 2->4, 4->3 are idle; 0 and 1 have a busy hop): with M = 1 node 4's unit is
  // taken and 2 -> 3 goes direct only; with M = 2 node 4 relays for both.
  FullMeshConfig cfg = Emb3(5);
  cfg.policy = Policy::kVariableK;
  cfg.data = false;
  const std::vector<Operation> ops = {Op(OpType::kP2p, 0, 1, 1 << 20),
                                      Op(OpType::kP2p, 2, 3, 1 << 20)};
  Machine one(cfg, ops);
  ASSERT_TRUE(one.Step());
  ASSERT_TRUE(one.Step());
  EXPECT_EQ(one.controller().comm_table().rows()[0].relays, (std::vector<int>{2, 3, 4}));
  EXPECT_TRUE(one.controller().comm_table().rows()[1].relays.empty());  // units busy
  cfg.relays_per_node = 2;
  Machine two(cfg, ops);
  ASSERT_TRUE(two.Step());
  ASSERT_TRUE(two.Step());
  EXPECT_EQ(two.controller().comm_table().rows()[1].relays, (std::vector<int>{4}));
  EXPECT_EQ(two.controller().relay_units_busy(4), 2);
}

}  // namespace
}  // namespace ukai::sim::fullmesh

namespace ukai::sim::fullmesh {
namespace {

TEST(FullMeshControllerTest, VariableKUsesOneHopOnlyWhenTheDirectLinkIsBusy) {
  // S426: the direct selection fails (0 -> 1 is held by the first p2p), the 1-hop selection
  // succeeds (relays 4 and 5 are idle): the second p2p starts at once over relays only (L = 0).
  FullMeshConfig cfg = Emb3(8);
  cfg.policy = Policy::kVariableK;
  cfg.k_max = 2;
  Machine m(cfg, {Op(OpType::kP2p, 0, 1, 1 << 20), Op(OpType::kP2p, 0, 1, 1 << 20)});
  ASSERT_TRUE(m.Step());
  ASSERT_TRUE(m.Step());
  const auto& rows = m.controller().comm_table().rows();
  EXPECT_EQ(rows[0].relays, (std::vector<int>{2, 3}));
  EXPECT_EQ(rows[1].state, RowState::kCommunicating);
  EXPECT_EQ(rows[1].relays, (std::vector<int>{4, 5}));
  m.Run();
  EXPECT_TRUE(m.results()[0].direct);
  EXPECT_FALSE(m.results()[1].direct);
  EXPECT_TRUE(m.results()[1].data_ok);
}

}  // namespace
}  // namespace ukai::sim::fullmesh
