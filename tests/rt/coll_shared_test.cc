// Shared work between members on one host: large steps of broadcast, scatter and gather
// copied by both sides at once (GroupOptions::shared_copy_bytes, src/rt/coll/coll_op.h),
// over inproc (several runtimes in this process: memcpy stands for process_vm_writev /
// process_vm_readv; the multi-process slice in coll_itest.cc runs the system calls).
#include "coll_test_util.h"
#include "rt/coll/cross_memory.h"
#include "rt/coll/group_state.h"

namespace ukai::rt {
namespace {

using testing::CollWorld;

int32_t Pattern(uint64_t i) { return static_cast<int32_t>(i * 2654435761u); }

struct Counts {
  uint64_t reads = 0, writes = 0;
};

Counts CountsOf(CollWorld& w, int r) {
  const internal::CollCounters& c = w.group(r).state()->counters();
  return {c.shared_reads.load(), c.shared_writes.load()};
}

// Odd sizes (halves that are not whole elements apart from the 64-byte cut), three roots:
// every result complete, every receiver read its half once per step and every sender wrote
// one; below the threshold, and with the feature off, nothing is shared.
TEST(Coll, LargeRootedCopiesAreSharedAndComplete) {
  constexpr int kN = 3;
  CollWorld w(kN, "inproc");
  ASSERT_TRUE(w.ok());
  if (!coll::Verify(w.group(0).state()->OwnProof())) {
    GTEST_SKIP() << "cross-memory reads are not permitted here (no single copy)";
  }
  CollOptions direct;
  direct.algorithm = Algorithm::kDirect;
  w.Run([&](int r, Group* g) {
    const size_t count = (size_t{3} << 18) / 4 + 7;  // 768 KiB + 28 bytes of int32
    std::vector<int32_t> buf(count, -1);
    if (r == 1) {
      for (size_t i = 0; i < count; ++i) buf[i] = Pattern(i);
    }
    ASSERT_TRUE(g->Broadcast(buf, 1, direct).ok());
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(buf[i], Pattern(i)) << "element " << i;

    const size_t block = 65543;  // int64: 512 KiB + 56 bytes per rank
    std::vector<int64_t> all(r == 0 ? kN * block : 0), mine(block, -1);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i) * 3 + 1;
    ASSERT_TRUE(g->Scatter(all, mine, 0, direct).ok());
    for (size_t i = 0; i < block; ++i) {
      ASSERT_EQ(mine[i], static_cast<int64_t>(r * block + i) * 3 + 1) << "element " << i;
    }
    std::vector<int64_t> got(r == 2 ? kN * block : 0, -1);
    ASSERT_TRUE(g->Gather(mine, got, 2, direct).ok());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], static_cast<int64_t>(i) * 3 + 1) << "element " << i;
    }
  });
  // broadcast from 1: 0 and 2 read, 1 wrote twice; scatter from 0: 1 and 2 read, 0 wrote
  // twice; gather to 2: 2 read twice, 0 and 1 wrote once.
  const Counts want[kN] = {{1, 3}, {1, 3}, {4, 0}};
  for (int r = 0; r < kN; ++r) {
    EXPECT_EQ(CountsOf(w, r).reads, want[r].reads) << "rank " << r;
    EXPECT_EQ(CountsOf(w, r).writes, want[r].writes) << "rank " << r;
  }
  w.Run([&](int r, Group* g) {  // one element short of 256 KiB: read by the receiver alone
    std::vector<int32_t> buf((size_t{256} << 10) / 4 - 1, r == 0 ? 5 : 0);
    ASSERT_TRUE(g->Broadcast(buf, 0, direct).ok());
    for (int32_t v : buf) ASSERT_EQ(v, 5);
  });
  for (int r = 0; r < kN; ++r) EXPECT_EQ(CountsOf(w, r).writes, want[r].writes);

  GroupOptions off;
  off.shared_copy_bytes = 0;
  CollWorld plain(kN, "inproc", off);
  ASSERT_TRUE(plain.ok());
  plain.Run([&](int r, Group* g) {
    std::vector<int64_t> buf(size_t{1} << 17, r == 2 ? 11 : 0);  // 1 MiB
    ASSERT_TRUE(g->Broadcast(buf, 2, direct).ok());
    for (int64_t v : buf) ASSERT_EQ(v, 11);
  });
  for (int r = 0; r < kN; ++r) {
    EXPECT_EQ(CountsOf(plain, r).reads, 0u);
    EXPECT_EQ(CountsOf(plain, r).writes, 0u);
  }
}

}  // namespace
}  // namespace ukai::rt
