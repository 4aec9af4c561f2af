// Memory bounds of a point (experiment/memory_budget.h): the estimate matches what a
// Network really allocates, a network over run.memory_limit is refused naming the keys,
// and a point past saturation stops at the source-queue backlog bound, marked saturated
// and saying why, instead of filling the memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <memory>

#include "sim/engine/network.h"
#include "sim/experiment/memory_budget.h"
#include "sim/experiment/run.h"
#include "sim_test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define UKAI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UKAI_ASAN 1
#endif
#endif

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

#ifndef UKAI_ASAN
// Heap bytes in use (glibc), for comparing the estimate with real allocations.
double HeapInUse() { return static_cast<double>(mallinfo2().uordblks + mallinfo2().hblkhd); }
#endif

TEST(MemoryBudgetTest, EstimateMatchesWhatCreateAllocates) {
#ifdef UKAI_ASAN
  GTEST_SKIP() << "the sanitizer's allocator does not report mallinfo2";
#else
  struct Case {
    TopologyKind kind;
    std::vector<int> k;
    int vcs, buffer;
  };
  for (const Case& tc :
       {Case{TopologyKind::kTorus, {16, 16}, 4, 8}, Case{TopologyKind::kMesh, {8, 8, 8}, 8, 16},
        Case{TopologyKind::kTorus, {32, 32}, 2, 64}}) {
    SimConfig c = testing::SmallConfig(tc.kind, tc.k);
    c.router.vcs = tc.vcs;
    c.router.vc_buffer_flits = tc.buffer;
    const double before = HeapInUse();
    auto net = Network::Create(c);
    ASSERT_TRUE(net.ok()) << net.status().ToString();
    // The heap, and the arrays reserved outside it (LazyArray: backed page by page).
    const double used = HeapInUse() - before + (*net)->ReservedBytes();
    const double estimate = Network::StateBytes(c);
    EXPECT_GT(estimate, 0.9 * used)
        << "k " << tc.k[0] << ": estimate " << estimate << ", used " << used;
    EXPECT_LT(estimate, 1.3 * used)
        << "k " << tc.k[0] << ": estimate " << estimate << ", used " << used;
  }
#endif
}

TEST(MemoryBudgetTest, LimitDefaultsToHalfThePhysicalMemory) {
  RunConfig run;
  const MemoryLimit def = EffectiveMemoryLimit(run);
  EXPECT_GT(def.bytes, 0);
  EXPECT_THAT(def.origin, HasSubstr("run.memory_limit = 0"));
  run.memory_limit = 12345;
  EXPECT_EQ(EffectiveMemoryLimit(run).bytes, 12345);
  EXPECT_EQ(EffectiveMemoryLimit(run).origin, "run.memory_limit = 12345");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
}

TEST(MemoryBudgetTest, NetworkOverTheLimitIsRefusedNamingTheKeys) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {16, 16});
  c.run.memory_limit = static_cast<int64_t>(Network::StateBytes(c) / 2);
  const Status st = CheckMemory(c);
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  for (const char* key : {"run.memory_limit", "network.k", "network.n", "router.vcs = 4",
                          "router.pe_vcs = 2", "router.vc_buffer_flits = 8", "256 nodes"}) {
    EXPECT_THAT(st.message(), HasSubstr(key));
  }
  // RunPoint refuses it too, before building anything.
  Result<PointResult> r = RunPoint(c);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("run.memory_limit"));
  c.run.memory_limit = static_cast<int64_t>(Network::StateBytes(c)) + 1;
  EXPECT_TRUE(CheckMemory(c).ok());
}

TEST(MemoryBudgetTest, BacklogBoundIsPerNodeAndUnderTheMemoryLeft) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8});
  EXPECT_EQ(BacklogBound(c, 64), 64 * kBacklogPerSendingNode);  // default: memory is plenty
  c.run.memory_limit = static_cast<int64_t>(Network::StateBytes(c)) + 500 * kBytesPerQueuedMessage;
  EXPECT_EQ(BacklogBound(c, 64), 500);
  c.run.memory_limit = static_cast<int64_t>(Network::StateBytes(c));
  EXPECT_EQ(BacklogBound(c, 64), 64);  // never below one message per sending node
  // Never near the message pool's 2^30 indices (the pool aborts past them).
  c.run.memory_limit = int64_t{1} << 50;
  EXPECT_EQ(BacklogBound(c, 1 << 26), int64_t{1} << 29);
}

// The issue's `--set network.k=32 --set traffic.rate=1.0 --set traffic.message_bytes=4
// --set measure.mode=cycles` on the quickstart config, whose source queues grew until
// std::bad_alloc: with a low run.memory_limit (so that the test is quick) the point stops
// at the backlog bound, saturated, and says so.
TEST(MemoryBudgetTest, PastSaturationThePointStopsAtTheBacklogBound) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {32, 32});
  c.traffic.rate = 1.0;
  c.traffic.message_bytes = 4;
  c.measure.mode = MeasureMode::kCycles;
  c.run.memory_limit =
      static_cast<int64_t>(Network::StateBytes(c)) + 20000 * kBytesPerQueuedMessage;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->saturated);
  EXPECT_LT(r->cycles, c.measure.warmup_cycles);  // long before the measurement began
  EXPECT_THAT(r->note, HasSubstr("messages waited in the source queues, more than the bound "
                                 "of 20000"));
  // The same in messages mode.
  c.measure.mode = MeasureMode::kMessages;
  c.measure.warmup_messages = 100000000;
  r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->saturated);
  EXPECT_THAT(r->note, HasSubstr("bound of 20000"));
}

TEST(MemoryBudgetTest, BelowSaturationNoNote) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {4, 4});
  c.measure.warmup_messages = 100;
  c.measure.measure_messages = 300;
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->note, "");
  EXPECT_FALSE(r->saturated);
}

}  // namespace
}  // namespace ukai::sim
