// Collective schedules (sim/workload/collectives.h): every algorithm's message count and
// bytes against its closed formula (powers of two and other sizes), the data reaching every
// rank it must (simulated over the schedule), and the step order (`need`) forming no cycle.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "sim/workload/collectives.h"

namespace ukai::sim {
namespace {

using A = CollectiveAlgorithm;
using Op = CollectiveOp;

int Log2(int p) { return static_cast<int>(std::lround(std::log2(p))); }
int Pow2Below(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

CollectiveSizes N(int64_t n) { return {n, {}}; }
CollectiveSizes Blocks(int p, int64_t b) { return {0, std::vector<int64_t>(p, b)}; }

// The schedule can run: processing messages whose sender has received `need` of its
// incoming messages, in any order, delivers every message (no wait cycle).
void ExpectRunnable(const CollSchedule& s, int p) {
  std::vector<std::vector<int>> incoming(p);
  for (size_t i = 0; i < s.messages.size(); ++i) {
    incoming[s.messages[i].to].push_back(static_cast<int>(i));
  }
  std::vector<int> position(s.messages.size());
  for (const auto& in : incoming) {
    for (size_t k = 0; k < in.size(); ++k) position[in[k]] = static_cast<int>(k);
  }
  std::vector<std::vector<bool>> arrived(p);
  for (int r = 0; r < p; ++r) arrived[r].assign(incoming[r].size(), false);
  auto prefix = [&](int r) {
    int k = 0;
    while (k < static_cast<int>(arrived[r].size()) && arrived[r][k]) ++k;
    return k;
  };
  std::vector<bool> sent(s.messages.size(), false);
  size_t done = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < s.messages.size(); ++i) {
      const CollMessage& m = s.messages[i];
      if (sent[i] || prefix(m.from) < m.need) continue;
      sent[i] = true;
      arrived[m.to][position[i]] = true;
      ++done;
      progress = true;
    }
  }
  EXPECT_EQ(done, s.messages.size()) << "the step order has a cycle";
}

struct Case {
  Op op;
  A algorithm;
  int p;
  int64_t messages;
  int64_t bytes;
};

TEST(Collectives, MessageCountsAndBytesMatchTheirFormulas) {
  const int64_t n = 4096, b = 96;  // n divisible by every p below
  std::vector<Case> cases;
  for (int p : {2, 4, 8, 16, 32}) {
    const int lg = Log2(p);
    cases.insert(
        cases.end(),
        {
            {Op::kBarrier, A::kBinomial, p, 2 * (p - 1), 0},
            {Op::kBarrier, A::kRing, p, 2 * p, 0},
            {Op::kBarrier, A::kRecursiveDoubling, p, p * lg, 0},
            {Op::kBcast, A::kBinomial, p, p - 1, (p - 1) * n},
            {Op::kBcast, A::kRing, p, p - 1, (p - 1) * n},
            // van de Geijn: binomial scatter of n/p chunks + recursive-doubling allgather.
            {Op::kBcast, A::kRecursiveDoubling, p, (p - 1) + p * lg, n * lg / 2 + n * (p - 1)},
            {Op::kReduce, A::kBinomial, p, p - 1, (p - 1) * n},
            {Op::kReduce, A::kRing, p, p - 1, (p - 1) * n},
            // Rabenseifner: recursive halving, then a binomial gather of n/p chunks.
            {Op::kReduce, A::kRecursiveDoubling, p, p * lg + p - 1, n * (p - 1) + n * lg / 2},
            {Op::kAllreduce, A::kBinomial, p, 2 * (p - 1), 2 * (p - 1) * n},
            {Op::kAllreduce, A::kRing, p, 2 * p * (p - 1), 2 * (p - 1) * n},
            {Op::kAllreduce, A::kRecursiveDoubling, p, p * lg, p * lg * n},
            {Op::kGather, A::kBinomial, p, p - 1, b * p * lg / 2},
            {Op::kGather, A::kRecursiveDoubling, p, p - 1, b * p * lg / 2},
            {Op::kGather, A::kRing, p, p - 1, b * p * (p - 1) / 2},
            {Op::kScatter, A::kBinomial, p, p - 1, b * p * lg / 2},
            {Op::kScatter, A::kRing, p, p - 1, b * p * (p - 1) / 2},
            {Op::kAllgather, A::kRing, p, p * (p - 1), b * p * (p - 1)},
            {Op::kAllgather, A::kRecursiveDoubling, p, p * lg, b * p * (p - 1)},
            {Op::kAllgather, A::kBinomial, p, 2 * (p - 1), b * p * lg / 2 + (p - 1) * p * b},
            {Op::kAlltoall, A::kRing, p, p * (p - 1), b * p * (p - 1)},
            {Op::kAlltoall, A::kBinomial, p, p * (p - 1), b * p * (p - 1)},
            // Bruck: every round each rank forwards the p/2 blocks whose distance has the bit.
            {Op::kAlltoall, A::kRecursiveDoubling, p, p * lg, b * p * (p / 2) * lg},
            {Op::kReduceScatterBlock, A::kRing, p, p * (p - 1), b * p * (p - 1)},
            {Op::kReduceScatterBlock, A::kRecursiveDoubling, p, p * lg, b * p * (p - 1)},
            {Op::kReduceScatterBlock, A::kBinomial, p, 2 * (p - 1),
             (p - 1) * b * p + b * p * lg / 2},
            {Op::kScan, A::kRing, p, p - 1, (p - 1) * n},
        });
    int64_t rd_scan = 0;
    for (int d = 1; d < p; d *= 2) rd_scan += p - d;
    cases.push_back({Op::kScan, A::kRecursiveDoubling, p, rd_scan, rd_scan * n});
    cases.push_back({Op::kExscan, A::kBinomial, p, rd_scan, rd_scan * n});
  }
  for (int p : {3, 5, 6, 7, 12, 13}) {  // the folded ranks: 2 (p - p') more messages
    const int p2 = Pow2Below(p), lg = Log2(p2), extra = p - p2;
    cases.insert(cases.end(),
                 {
                     {Op::kBarrier, A::kRecursiveDoubling, p, p2 * lg + 2 * extra, 0},
                     {Op::kAllreduce, A::kRecursiveDoubling, p, p2 * lg + 2 * extra,
                      (p2 * lg + 2 * extra) * n},
                     {Op::kAllgather, A::kRecursiveDoubling, p, p2 * lg + 2 * extra, -1},
                     {Op::kBcast, A::kBinomial, p, p - 1, (p - 1) * n},
                     {Op::kGather, A::kRing, p, p - 1, b * p * (p - 1) / 2},
                     {Op::kAlltoall, A::kRing, p, p * (p - 1), b * p * (p - 1)},
                     {Op::kAllreduce, A::kRing, p, 2 * p * (p - 1), -1},
                 });
    int bruck = 0;
    for (int k = 1; k < p; k *= 2) ++bruck;
    cases.push_back({Op::kAlltoall, A::kRecursiveDoubling, p, p * bruck, -1});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(CollectiveOpName(c.op)) + " p=" + std::to_string(c.p) +
                 " alg=" + std::to_string(static_cast<int>(c.algorithm)));
    const bool blocks = c.op == Op::kGather || c.op == Op::kScatter || c.op == Op::kAllgather ||
                        c.op == Op::kAlltoall || c.op == Op::kReduceScatterBlock;
    const CollSchedule s = BuildSchedule(c.op, c.algorithm, c.p, 0, blocks ? Blocks(c.p, b) : N(n));
    EXPECT_EQ(static_cast<int64_t>(s.messages.size()), c.messages);
    if (c.bytes >= 0) {
      EXPECT_EQ(s.total_bytes(), c.bytes);
    }
    ExpectRunnable(s, c.p);
    for (const CollMessage& m : s.messages) {
      EXPECT_NE(m.from, m.to);
      EXPECT_GE(m.from, 0);
      EXPECT_LT(m.to, c.p);
    }
  }
}

// Follows the blocks: at the end every rank holds every block an allgather gives it, and
// an alltoall's block (origin, destination) reaches its destination.
TEST(Collectives, DataReachesEveryRankThatNeedsIt) {
  for (int p : {2, 3, 5, 8, 11, 16}) {
    for (A a : {A::kBinomial, A::kRing, A::kRecursiveDoubling}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " alg=" + std::to_string(static_cast<int>(a)));
      // allgather: blocks flow along messages, in schedule (step) order.
      const CollSchedule s = BuildSchedule(Op::kAllgather, a, p, 0, Blocks(p, 1));
      std::vector<std::set<int>> held(p);
      for (int r = 0; r < p; ++r) held[r].insert(r);
      for (const CollMessage& m : s.messages) {
        for (int blk : m.blocks) {
          EXPECT_TRUE(held[m.from].count(blk)) << m.from << " forwards block " << blk;
          held[m.to].insert(blk);
        }
      }
      for (int r = 0; r < p; ++r) EXPECT_EQ(held[r].size(), static_cast<size_t>(p)) << r;
      // gather to a root other than 0.
      const int root = p / 2;
      const CollSchedule g = BuildSchedule(Op::kGather, a, p, root, Blocks(p, 1));
      std::vector<std::set<int>> got(p);
      for (int r = 0; r < p; ++r) got[r].insert(r);
      for (const CollMessage& m : g.messages) {
        for (int blk : m.blocks) got[m.to].insert(blk);
      }
      EXPECT_EQ(got[root].size(), static_cast<size_t>(p));
      // bcast from a root: everyone receives a message.
      const CollSchedule bc = BuildSchedule(Op::kBcast, a, p, root, N(1000));
      std::set<int> reached = {root};
      for (const CollMessage& m : bc.messages) reached.insert(m.to);
      EXPECT_EQ(reached.size(), static_cast<size_t>(p));
    }
  }
}

TEST(Collectives, VariantSizesComeFromEachRanksBlock) {
  // gatherv over 4 ranks with blocks 10, 20, 30, 40 to root 0: the binomial tree moves
  // block 3 twice (3 -> 2 -> 0), block 2 once, block 1 once.
  CollectiveSizes s{0, {10, 20, 30, 40}};
  CollSchedule g = BuildSchedule(Op::kGatherv, A::kBinomial, 4, 0, s);
  EXPECT_EQ(g.total_bytes(), 40 + (30 + 40) + 20);
  // alltoallv: each rank sends its block to every other rank.
  CollSchedule a = BuildSchedule(Op::kAlltoallv, A::kRing, 4, 0, s);
  EXPECT_EQ(a.total_bytes(), 3 * (10 + 20 + 30 + 40));
  // reduce_scatter with parts 10..40: ring moves every part p - 1 times.
  CollSchedule rs = BuildSchedule(Op::kReduceScatter, A::kRing, 4, 0, s);
  EXPECT_EQ(rs.total_bytes(), 3 * 100);
}

TEST(Collectives, AutoFollowsOpenMpisFixedDecisions) {
  EXPECT_EQ(AutoAlgorithm(Op::kAllreduce, 16, N(8)), A::kRecursiveDoubling);
  EXPECT_EQ(AutoAlgorithm(Op::kAllreduce, 16, N(1 << 20)), A::kRing);
  EXPECT_EQ(AutoAlgorithm(Op::kBcast, 64, N(1024)), A::kBinomial);
  EXPECT_EQ(AutoAlgorithm(Op::kBcast, 64, N(4 << 20)), A::kRing);
  EXPECT_EQ(AutoAlgorithm(Op::kAlltoall, 32, Blocks(32, 100)), A::kRecursiveDoubling);  // Bruck
  EXPECT_EQ(AutoAlgorithm(Op::kAlltoall, 8, Blocks(8, 100)), A::kBinomial);             // linear
  EXPECT_EQ(AutoAlgorithm(Op::kAlltoall, 8, Blocks(8, 8192)), A::kRing);                // pairwise
  EXPECT_EQ(AutoAlgorithm(Op::kBarrier, 7, {}), A::kRecursiveDoubling);
  EXPECT_EQ(AutoAlgorithm(Op::kAllgather, 8, Blocks(8, 100)), A::kRecursiveDoubling);
  EXPECT_EQ(AutoAlgorithm(Op::kAllgather, 8, Blocks(8, 100000)), A::kRing);
  EXPECT_EQ(AutoAlgorithm(Op::kScan, 8, N(8)), A::kRing);
  // BuildSchedule resolves auto the same way.
  EXPECT_EQ(BuildSchedule(Op::kAllreduce, A::kAuto, 8, 0, N(8)).messages.size(),
            BuildSchedule(Op::kAllreduce, A::kRecursiveDoubling, 8, 0, N(8)).messages.size());
}

TEST(Collectives, OneRankSendsNothing) {
  for (int op = 0; op < kCollectiveOpCount; ++op) {
    EXPECT_TRUE(BuildSchedule(static_cast<Op>(op), A::kAuto, 1, 0, N(100)).messages.empty());
  }
}

}  // namespace
}  // namespace ukai::sim
