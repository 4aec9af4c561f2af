// Full-mesh operations: every plan moves and combines real bytes to the result computed
// directly (random sizes, N, K, relay sets, groups, both relay modes), the Fig. 32 vectors,
// the large-size ratios of claims-004 T3/X4 and the first-principles crossover.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "sim/fullmesh/decision.h"
#include "sim/fullmesh/machine.h"
#include "sim/fullmesh_test_util.h"

namespace ukai::sim::fullmesh {
namespace {

std::vector<int> Range(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

// A random non-empty subset of `from`, ascending.
std::vector<int> Subset(Rng& rng, const std::vector<int>& from) {
  std::vector<int> out;
  for (int x : from) {
    if (rng.Bernoulli(0.6)) out.push_back(x);
  }
  if (out.empty()) out.push_back(from[rng.Uniform(from.size())]);
  return out;
}

void ExpectMovesData(const Operation& op, const std::vector<int>& members, const Plan& plan,
                     int nodes) {
  OpData d = MakeOpData(op, members, nodes, 99);
  ExecutePlanData(plan, &d);
  ASSERT_TRUE(CheckOpData(op, members, d)) << OpTypeName(op.type) << " bytes=" << op.bytes;
  // The check can fail: one wrong byte anywhere in a result is caught.
  for (int node : members) {
    if (d.out[node].empty()) continue;
    d.out[node][d.out[node].size() / 2] ^= 1;
    EXPECT_FALSE(CheckOpData(op, members, d));
    return;
  }
}

TEST(FullMeshDataTest, EveryPlanGivesTheDirectResultForRandomShapes) {
  Rng rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 3 + static_cast<int>(rng.Uniform(10));
    const std::vector<int> all = Range(n);
    const int root = static_cast<int>(rng.Uniform(n));
    const int dest = (root + 1 + static_cast<int>(rng.Uniform(n - 1))) % n;
    const int64_t bytes = 4 * (1 + static_cast<int64_t>(rng.Uniform(2000)));
    std::vector<int> others;
    for (int x : all) {
      if (x != root && x != dest) others.push_back(x);
    }
    Operation p2p = Op(OpType::kP2p, root, dest, bytes + static_cast<int64_t>(rng.Uniform(4)));
    ExpectMovesData(p2p, all, P2pRelayPlan(p2p, Subset(rng, others), rng.Bernoulli(0.5)), n);
    Operation mc = Op(OpType::kMulticast, root, -1, bytes + static_cast<int64_t>(rng.Uniform(4)));
    ExpectMovesData(mc, all, MulticastRelayPlan(mc, all, Subset(rng, all)), n);
    for (OpType t : {OpType::kReduce, OpType::kAllreduce}) {
      Operation red = Op(t, root, -1, bytes);
      ExpectMovesData(red, all, ReduceRelayPlan(red, all, Subset(rng, all)), n);
    }
    for (OpType t : {OpType::kP2p, OpType::kMulticast, OpType::kScatter, OpType::kGather,
                     OpType::kReduce, OpType::kAllreduce, OpType::kAllgather, OpType::kAlltoall}) {
      Operation op = Op(t, root, dest, bytes);
      ExpectMovesData(op, all, DirectPlan(op, all), n);
    }
    // A group of the first half; relays from the other half (Fig. 29).
    const int half = std::max(2, n / 2);
    const std::vector<int> group = Range(half);
    for (OpType t : {OpType::kScatter, OpType::kGather}) {
      Operation op = Op(t, static_cast<int>(rng.Uniform(half)), -1, bytes);
      std::vector<int> relay_of;
      for (int i = 0; i + 1 < half; ++i) {
        relay_of.push_back(half + i < n && rng.Bernoulli(0.7) ? half + i : -1);
      }
      ExpectMovesData(op, group, GroupRelayPlan(op, group, relay_of), n);
    }
  }
}

TEST(FullMeshDataTest, Fig32VectorsAreSummed) {
  // N = K = 4; node 1 [1,3,5,7], node 2 [1,2,3,4] (nodes 3 and 4 are not in the text: 0).
  const std::vector<int> all = Range(4);
  for (OpType t : {OpType::kReduce, OpType::kAllreduce}) {
    Operation op = Op(t, 0, -1, 16);
    OpData d = MakeOpData(op, all, 4, 1);
    const uint32_t a[4] = {1, 3, 5, 7}, b[4] = {1, 2, 3, 4}, zero[4] = {0, 0, 0, 0};
    std::memcpy(d.in[0].data(), a, 16);
    std::memcpy(d.in[1].data(), b, 16);
    std::memcpy(d.in[2].data(), zero, 16);
    std::memcpy(d.in[3].data(), zero, 16);
    ExecutePlanData(ReduceRelayPlan(op, all, all), &d);
    const uint32_t want[4] = {2, 5, 8, 11};
    for (int node : all) {
      if (t == OpType::kReduce && node != 0) continue;
      ASSERT_EQ(d.out[node].size(), 16u);
      EXPECT_EQ(std::memcmp(d.out[node].data(), want, 16), 0) << "node " << node;
    }
  }
}

struct RatioCase {
  const char* claim;
  OpType type;
  Policy policy;
  RelayKind relay;
  RelayMode mode;
  int nodes, k_max;
  double want;  // time / baseline at large size
};

FullMeshConfig Config(int nodes, Policy policy, RelayKind relay, RelayMode mode) {
  FullMeshConfig c;
  c.nodes = nodes;
  c.policy = policy;
  c.relay = relay;
  c.relay_mode = mode;
  c.data = false;
  c.Normalize();
  return c;
}

TEST(FullMeshRatioTest, LargeSizeRatiosOfTheDocument) {
  const auto P = RelayMode::kPipelined;
  const auto S = RelayMode::kStoreAndForward;
  const RatioCase cases[] = {
      {"emb 1 p2p 1/(N-1)", OpType::kP2p, Policy::kVariableK, RelayKind::kMemory, P, 8, 0, 1.0 / 7},
      {"emb 1 p2p SAF 2/(N-1)", OpType::kP2p, Policy::kVariableK, RelayKind::kMemory, S, 8, 0,
       2.0 / 7},
      {"emb 3 multicast 2/N", OpType::kMulticast, Policy::kFixedK, RelayKind::kSwitch, P, 8, 0,
       2.0 / 8},
      {"emb 3 multicast SAF 2/N", OpType::kMulticast, Policy::kFixedK, RelayKind::kSwitch, S, 8, 0,
       2.0 / 8},
      {"emb 4 reduce 2/N", OpType::kReduce, Policy::kFixedK, RelayKind::kMemory, P, 8, 0, 2.0 / 8},
      {"emb 4 allreduce 2/N", OpType::kAllreduce, Policy::kFixedK, RelayKind::kMemory, S, 8, 0,
       2.0 / 8},
      {"emb 6 multicast 1/K, K=7", OpType::kMulticast, Policy::kVariableK, RelayKind::kSwitch, P, 8,
       7, 1.0 / 7},
      {"emb 6 multicast SAF 2/K", OpType::kMulticast, Policy::kVariableK, RelayKind::kSwitch, S, 8,
       7, 2.0 / 7},
      {"emb 6 p2p 1/(K+1), K=1", OpType::kP2p, Policy::kVariableK, RelayKind::kSwitch, P, 8, 1,
       1.0 / 2},
      {"emb 6 reduce 1/K pipelined, K=2", OpType::kReduce, Policy::kVariableK, RelayKind::kSwitch,
       P, 4, 2, 1.0 / 2},
      {"emb 6 reduce 2/K SAF, K=3", OpType::kReduce, Policy::kVariableK, RelayKind::kSwitch, S, 4,
       3, 2.0 / 3},
  };
  for (const RatioCase& rc : cases) {
    FullMeshConfig cfg = Config(rc.nodes, rc.policy, rc.relay, rc.mode);
    cfg.k_max = rc.k_max;
    Machine m(cfg, {Op(rc.type, 0, 1, 16 << 20)});
    const OpResult& r = m.Run()[0];
    EXPECT_NEAR(r.time_us() / r.baseline_us, rc.want, 0.02 * rc.want) << rc.claim;
  }
}

TEST(FullMeshRatioTest, GroupScatterThroughTheOtherGroupIsTwiceAsFast) {
  FullMeshConfig cfg = Config(8, Policy::kFixedK, RelayKind::kSwitch, RelayMode::kPipelined);
  cfg.group_relay = true;
  cfg.comms.push_back({"A", {0, 1, 2, 3}});
  cfg.comms.push_back({"B", {4, 5, 6, 7}});
  Machine m(cfg, {Op(OpType::kScatter, 0, -1, 4 << 20, 1)});
  const OpResult& r = m.Run()[0];
  EXPECT_EQ(r.relays, 3);
  EXPECT_NEAR(r.baseline_us / r.time_us(), 2.0, 0.02);
  // Store-and-forward: the relayed half arrives no sooner; the rule keeps the direct links.
  cfg.relay_mode = RelayMode::kStoreAndForward;
  Machine s(cfg, {Op(OpType::kScatter, 0, -1, 4 << 20, 1)});
  EXPECT_EQ(s.Run()[0].relays, 0);
}

TEST(FullMeshDecisionTest, P2pCrossoverMatchesTheSimulatedTimes) {
  for (RelayMode mode : {RelayMode::kPipelined, RelayMode::kStoreAndForward}) {
    for (RelayKind relay : {RelayKind::kMemory, RelayKind::kSwitch}) {
      for (int n : {4, 8, 16}) {
        FullMeshConfig cfg = Config(n, Policy::kFixedK, relay, mode);
        PlanTimer timer(n);
        TimingParams t{cfg.BytesPerUs(), cfg.t0_us, cfg.T1(), mode, cfg.chunk_bytes};
        const int k = n - 2;
        const double cross =
            P2pCrossoverBytes(k, mode, t.bytes_per_us, t.t0_us, t.t1_us, cfg.chunk_bytes);
        for (double f : {0.97, 1.03}) {
          Operation op = Op(OpType::kP2p, 0, 1, static_cast<int64_t>(cross * f));
          std::vector<int> relays;
          for (int r = 2; r < n; ++r) relays.push_back(r);
          const double via = timer.Duration(P2pRelayPlan(op, relays, true), t);
          const double direct = timer.Duration(DirectPlan(op, Range(n)), t);
          EXPECT_EQ(via<direct, f> 1) << "n=" << n << " S*=" << cross << " f=" << f;
        }
      }
    }
  }
}

TEST(FullMeshDecisionTest, PrintedRuleIsGuardedAndReadAsGreaterThan) {
  const double b = 3125, t0 = 2, t1 = 4;  // B (T1 - T0) = 6250 bytes
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kP2p, 2, true, b, t0, t1), 6250);   // 1/0
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kP2p, 1, false, b, t0, t1), 6250);  // 0
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kP2p, 6, true, b, t0, t1), 6250 * 5 / 4.0);
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kMulticast, 8, true, b, t0, t1), 6250 * 8 / 6.0);
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kMulticast, 7, false, b, t0, t1), 6250 * 6 / 5.0);
  EXPECT_DOUBLE_EQ(PrintedThresholdBytes(OpType::kReduce, 4, false, b, t0, t1), 6250 * 2);
  // In a machine: above the printed right side the relays are used, below not.
  FullMeshConfig cfg = Config(8, Policy::kFixedK, RelayKind::kMemory, RelayMode::kPipelined);
  cfg.decision = Decision::kPrinted;
  Machine small(cfg, {Op(OpType::kP2p, 0, 1, 7000)});
  EXPECT_EQ(small.Run()[0].relays, 0);
  Machine large(cfg, {Op(OpType::kP2p, 0, 1, 8000)});
  EXPECT_EQ(large.Run()[0].relays, 6);
  cfg.decision = Decision::kThreshold;
  cfg.threshold_bytes = 10000;
  Machine th(cfg, {Op(OpType::kP2p, 0, 1, 10001)});
  EXPECT_EQ(th.Run()[0].relays, 6);
}

TEST(FullMeshMainNodeTest, InstructionSheetDelaysTheStart) {
  FullMeshConfig cfg = Config(8, Policy::kVariableK, RelayKind::kMemory, RelayMode::kPipelined);
  Machine every(cfg, {Op(OpType::kP2p, 0, 1, 100000)});
  cfg.tables = TableSite::kMainNode;
  Machine main(cfg, {Op(OpType::kP2p, 0, 1, 100000)});
  const double sheet = cfg.t0_us + 2.0 * 8 * cfg.sheet_entry_bytes / cfg.BytesPerUs();
  EXPECT_NEAR(main.Run()[0].time_us() - every.Run()[0].time_us(), sheet, 1e-9);
}

TEST(FullMeshPlaneTest, TwoPlanesLetTwoCommunicationsShareAPair) {
  FullMeshConfig cfg = Config(4, Policy::kDirect, RelayKind::kSwitch, RelayMode::kPipelined);
  std::vector<Operation> ops = {Op(OpType::kP2p, 0, 1, 100000), Op(OpType::kP2p, 0, 1, 100000)};
  Machine one(cfg, ops);
  one.Run();
  cfg.planes = 2;
  Machine two(cfg, ops);
  two.Run();
  EXPECT_GT(one.results()[1].start_us, 0);
  EXPECT_EQ(two.results()[1].start_us, 0);
}

}  // namespace
}  // namespace ukai::sim::fullmesh
