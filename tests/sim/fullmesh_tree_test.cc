// The simulated binomial-tree baseline (tree_plan.h): its data equal the directly computed
// result for random N, roots, groups and sizes, and its time equals the closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "sim/fullmesh/machine.h"
#include "sim/fullmesh/tree_plan.h"
#include "sim/fullmesh_test_util.h"

namespace ukai::sim::fullmesh {
namespace {

constexpr OpType kTreeOps[] = {OpType::kMulticast, OpType::kScatter,   OpType::kGather,
                               OpType::kReduce,    OpType::kAllreduce, OpType::kAllgather};

TEST(FullMeshTreeTest, DataEqualTheDirectResultForRandomShapes) {
  Rng rng(1212);
  for (int trial = 0; trial < 200; ++trial) {
    const int nodes = 2 + static_cast<int>(rng.Uniform(15));
    std::vector<int> members;  // a random communicator of >= 2 nodes
    for (int x = 0; x < nodes; ++x) {
      if (rng.Bernoulli(0.7)) members.push_back(x);
    }
    if (members.size() < 2) members = {0, nodes - 1};
    const int root = members[rng.Uniform(members.size())];
    const int64_t bytes = 4 * (1 + static_cast<int64_t>(rng.Uniform(500)));
    for (OpType t : kTreeOps) {
      const Operation op = Op(t, root, -1, bytes);
      const Plan plan = TreePlan(op, members);
      OpData d = MakeOpData(op, members, nodes, 7 + trial);
      ExecutePlanData(plan, &d);
      ASSERT_TRUE(CheckOpData(op, members, d))
          << OpTypeName(t) << " n=" << members.size() << " root=" << root;
      for (const Segment& s : plan.segments) {  // direct links only
        ASSERT_TRUE(s.hop == Hop::kDirect || s.hop == Hop::kLocal);
      }
      // The check can fail: one wrong byte of a result is caught.
      for (int node : members) {
        if (d.out[node].empty()) continue;
        d.out[node].back() ^= 1;
        EXPECT_FALSE(CheckOpData(op, members, d));
        break;
      }
    }
  }
  EXPECT_TRUE(TreePlan(Op(OpType::kP2p, 0, 1, 8), {0, 1}).segments.empty());
  EXPECT_TRUE(TreePlan(Op(OpType::kAlltoall, 0, -1, 8), {0, 1}).segments.empty());
}

// With n a power of two no tree link carries two messages and every chain has log2 n steps:
// with s = S/B and L = log2 n,
//   multicast, reduce: L (T0 + s);  allreduce: 2 L (T0 + s);
//   scatter, gather: L T0 + (n - 1) s  (halving blocks: the root's link chain);
//   allgather: gather, then multicast of the n blocks: L T0 + (n - 1) s + L (T0 + n s).
TEST(FullMeshTreeTest, TimeMatchesTheClosedFormForPowersOfTwo) {
  TimingParams p;
  p.bytes_per_us = 3125;
  p.t0_us = 2;
  PlanTimer timer(32);
  for (int n : {2, 4, 8, 16, 32}) {
    std::vector<int> members(n);
    for (int i = 0; i < n; ++i) members[i] = i;
    for (int64_t bytes : {int64_t{4}, int64_t{40000}, int64_t{1} << 20}) {
      for (OpType t : kTreeOps) {
        const Operation op = Op(t, n / 2 + 1 < n ? n / 2 + 1 : 0, -1, bytes);
        const double l = std::log2(n), s = static_cast<double>(bytes) / p.bytes_per_us;
        double want = 0;
        switch (t) {
          case OpType::kMulticast:
          case OpType::kReduce:
            want = l * (p.t0_us + s);
            break;
          case OpType::kAllreduce:
            want = 2 * l * (p.t0_us + s);
            break;
          case OpType::kScatter:
          case OpType::kGather:
            want = l * p.t0_us + (n - 1) * s;
            break;
          default:
            want = l * p.t0_us + (n - 1) * s + l * (p.t0_us + n * s);
            break;
        }
        const double got = timer.Duration(TreePlan(op, members), p);
        EXPECT_NEAR(got, want, 1e-9 * want) << OpTypeName(t) << " n=" << n << " S=" << bytes;
        EXPECT_NEAR(TreeBaselineUs(op, n, p.bytes_per_us, p.t0_us), want, 1e-9 * want);
      }
    }
  }
}

// The machine reports the simulated tree: for n = 5 a reduce finishes in 2 steps (rank 4
// sends at once, chains 3 -> 2 -> 0 and 1 -> 0), below the formula's ceil(log2 5) = 3.
TEST(FullMeshTreeTest, MachineReportsTheSimulatedTree) {
  FullMeshConfig c;
  c.nodes = 5;
  Machine m(c, {Op(OpType::kReduce, 0, -1, 40000), Op(OpType::kP2p, 0, 1, 8, 0, 1000)});
  const std::vector<OpResult>& r = m.Run();
  ASSERT_EQ(r.size(), 2u);
  const double step = c.t0_us + 40000 / c.BytesPerUs();
  EXPECT_NEAR(r[0].tree_us, 2 * step, 1e-9);
  EXPECT_TRUE(r[0].data_checked && r[0].data_ok);
  EXPECT_EQ(r[1].tree_us, 0);
}

}  // namespace
}  // namespace ukai::sim::fullmesh
