// RecycledBlocks (rt/core/recycled_blocks.h): size classes, LIFO reuse of the blocks given
// back, the bound on the memory kept, refused sizes, blocks outliving their creator's
// reference, growth of a ByteBlock from the source, and threads allocating and freeing at
// once (the counts balance; ASan sees any block freed twice or leaked), and huge-page
// blocks (classes rounded to 2 MiB granules, aligned, bounded like the others).
#include "rt/core/recycled_blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace ukai::rt {
namespace {

constexpr size_t kKiB = 1024;

struct Ref {
  Ref(size_t min, size_t max, size_t keep, size_t huge = 0)
      : p(RecycledBlocks::Create(min, max, keep, huge)) {}
  ~Ref() { p->Unref(); }
  RecycledBlocks* operator->() const { return p; }
  RecycledBlocks* p;
};

TEST(RecycledBlocksTest, ClassesAreAtMostAQuarterLarger) {
  Ref r(64, size_t{1} << 30, 0);
  EXPECT_EQ(r->ClassBytes(64), 64u);
  EXPECT_EQ(r->ClassBytes(65), 80u);
  EXPECT_EQ(r->ClassBytes(1024 * kKiB), 1024 * kKiB);
  EXPECT_EQ(r->ClassBytes(1024 * kKiB + 1), 1280 * kKiB);
  EXPECT_EQ(r->ClassBytes(1536 * kKiB), 1536 * kKiB);
  EXPECT_EQ(r->ClassBytes(1537 * kKiB), 1792 * kKiB);
  EXPECT_EQ(r->ClassBytes(1793 * kKiB), 2048 * kKiB);
  for (size_t n = 64; n < (size_t{1} << 22); n = n * 9 / 7 + 3) {
    const size_t c = r->ClassBytes(n);
    EXPECT_GE(c, n);
    EXPECT_LE(c, n + n / 4) << n;
  }
}

TEST(RecycledBlocksTest, RefusesSizesOutsideItsRange) {
  Ref r(16 * kKiB, 1024 * kKiB, 4096 * kKiB);
  size_t cap = 0;
  EXPECT_EQ(r->Allocate(16 * kKiB - 1, &cap), nullptr);
  EXPECT_EQ(r->Allocate(1024 * kKiB + 1, &cap), nullptr);
  ByteBlock b = ByteBlock::FromSource(r.p, 8);
  EXPECT_EQ(b.capacity(), 0u);  // the caller (NewBuffer) then takes the heap
  EXPECT_EQ(r->stats().allocated, 0u);
}

TEST(RecycledBlocksTest, AGivenBackBlockServesTheNextRequestOfItsClass) {
  Ref r(16 * kKiB, 64 << 20, 64 << 20);
  const uint8_t* first = nullptr;
  {
    ByteBlock b = ByteBlock::FromSource(r.p, 1024 * kKiB + 61);
    ASSERT_EQ(b.capacity(), 1280 * kKiB);
    EXPECT_EQ(b.source(), r.p);
    first = b.data();
    b.Resize(b.capacity());
    std::memset(b.data(), 1, b.size());  // the whole capacity is ours to write
    EXPECT_EQ(r->stats().blocks_in_use, 1u);
  }
  EXPECT_EQ(r->stats().kept_bytes, 1280 * kKiB);
  ByteBlock again = ByteBlock::FromSource(r.p, 1100 * kKiB);  // the same class
  EXPECT_EQ(again.data(), first);
  ByteBlock other = ByteBlock::FromSource(r.p, 1300 * kKiB);  // the next class: a new block
  EXPECT_NE(other.data(), first);
  const RecycledBlocks::Stats s = r->stats();
  EXPECT_EQ(s.allocated, 2u);
  EXPECT_EQ(s.reused, 1u);
  EXPECT_EQ(s.blocks_in_use, 2u);
  EXPECT_EQ(s.kept_bytes, 0u);
}

TEST(RecycledBlocksTest, LastGivenBackFirstOut) {
  Ref r(16 * kKiB, 64 << 20, 64 << 20);
  std::vector<ByteBlock> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(ByteBlock::FromSource(r.p, 64 * kKiB));
  const uint8_t* last = blocks[1].data();
  blocks[0] = ByteBlock();
  blocks[1] = ByteBlock();  // given back last
  EXPECT_EQ(ByteBlock::FromSource(r.p, 64 * kKiB).data(), last);
}

TEST(RecycledBlocksTest, KeepsNoMoreThanItsBound) {
  Ref r(16 * kKiB, 64 << 20, 3 * 1024 * kKiB);  // room for three 1 MiB blocks
  {
    std::vector<ByteBlock> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(ByteBlock::FromSource(r.p, 1024 * kKiB));
  }
  RecycledBlocks::Stats s = r->stats();
  EXPECT_EQ(s.kept_bytes, 3 * 1024 * kKiB);
  EXPECT_EQ(s.released, 5u);
  EXPECT_EQ(s.blocks_in_use, 0u);
  Ref none(16 * kKiB, 64 << 20, 0);  // keeps nothing: every block is deleted when given back
  { ByteBlock b = ByteBlock::FromSource(none.p, 64 * kKiB); }
  EXPECT_EQ(none->stats().kept_bytes, 0u);
  EXPECT_EQ(none->stats().released, 1u);
}

TEST(RecycledBlocksTest, BlocksOutliveTheCreatorsReference) {
  RecycledBlocks* r = RecycledBlocks::Create(16 * kKiB, 64 << 20, 64 << 20);
  ByteBlock b = ByteBlock::FromSource(r, 100 * kKiB);
  ByteBlock kept = ByteBlock::FromSource(r, 200 * kKiB);
  kept = ByteBlock();  // kept by the source, deleted with it
  r->Unref();          // the creator leaves; `b` still holds the source
  b.Resize(100 * kKiB);
  std::memset(b.data(), 7, b.size());
  ByteBlock copy = b.Clone();  // from the same source
  EXPECT_EQ(copy.source(), b.source());
  EXPECT_EQ(copy.data()[100 * kKiB - 1], 7);
}  // the last block gone, the source deletes itself and its kept block (ASan: no leak)

TEST(RecycledBlocksTest, GrowthStaysInTheSourceAndKeepsTheBytes) {
  Ref r(16 * kKiB, 64 << 20, 64 << 20);
  ByteBlock b = ByteBlock::FromSource(r.p, 20 * kKiB);
  b.Resize(20 * kKiB);
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(i * 13);
  b.Resize(3 * 1024 * kKiB);
  EXPECT_EQ(b.source(), r.p);
  for (size_t i = 0; i < 20 * kKiB; ++i) ASSERT_EQ(b.data()[i], static_cast<uint8_t>(i * 13));
  b.Resize(100 << 20);  // beyond the largest class: the heap
  EXPECT_EQ(b.source(), nullptr);
  EXPECT_EQ(b.data()[20 * kKiB - 1], static_cast<uint8_t>((20 * kKiB - 1) * 13));
  EXPECT_EQ(r->stats().blocks_in_use, 0u);
}

TEST(RecycledBlocksTest, ThreadsAllocateAndGiveBackAtOnce) {
  Ref r(16 * kKiB, 64 << 20, 8 << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&r, t] {
      std::vector<ByteBlock> held;
      for (int i = 0; i < 2000; ++i) {
        ByteBlock b = ByteBlock::FromSource(r.p, (16 + (i * 7 + t) % 300) * kKiB);
        ASSERT_GT(b.capacity(), 0u);
        b.Resize(8);
        std::memset(b.data(), t, 8);
        held.push_back(std::move(b));
        if (held.size() > 5) held.erase(held.begin());  // another size goes back
        for (const ByteBlock& h : held) ASSERT_EQ(h.data()[7], t);
      }
    });
  }
  for (auto& th : threads) th.join();
  const RecycledBlocks::Stats s = r->stats();
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_LE(s.kept_bytes, size_t{8} << 20);
  EXPECT_EQ(s.allocated + s.reused, 8000u);
  EXPECT_GT(s.reused, 0u);
}

// Huge-page blocks (huge_min_bytes 1 MiB): classes of 1 MiB and more round up to whole
// 2 MiB granules, each itself a class (a block given back serves the next request of its
// size); smaller classes stay heap blocks of their class.
TEST(RecycledBlocksTest, HugeClassesAreWholeGranules) {
  constexpr size_t kMiB = 1024 * kKiB;
  Ref r(16 * kKiB, 64 << 20, 64 << 20, kMiB);
  EXPECT_EQ(r->ClassBytes(896 * kKiB), 896 * kKiB);     // the largest class below 1 MiB
  EXPECT_EQ(r->ClassBytes(1024 * kKiB - 1), 2 * kMiB);  // class 1 MiB: huge
  EXPECT_EQ(r->ClassBytes(1024 * kKiB + 56), 2 * kMiB);
  EXPECT_EQ(r->ClassBytes(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(r->ClassBytes(2 * kMiB + 1), 4 * kMiB);  // class 2.5 MiB
  EXPECT_EQ(r->ClassBytes(4 * kMiB + 1), 6 * kMiB);  // class 5 MiB
  EXPECT_EQ(r->ClassBytes(6 * kMiB + 1), 8 * kMiB);  // class 7 MiB
  EXPECT_EQ(r->ClassBytes(17 * kMiB), 20 * kMiB);
  EXPECT_EQ(r->ClassBytes(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(r->ClassBytes(64 * kMiB + 1), 0u);  // refused: above max_bytes
  for (size_t n = 900 * kKiB; n <= (size_t{64} << 20); n = n * 9 / 7 + 4099) {
    const size_t c = r->ClassBytes(n);
    ASSERT_GE(c, n);
    if (c < kMiB) continue;
    ASSERT_EQ(c % RecycledBlocks::kHugeBytes, 0u) << n;
    const uint8_t* first = nullptr;
    {
      ByteBlock b = ByteBlock::FromSource(r.p, n);
      ASSERT_EQ(b.capacity(), c) << n;
      first = b.data();
    }
    ByteBlock again = ByteBlock::FromSource(r.p, n);  // the same class: the same block
    EXPECT_EQ(again.data(), first) << n;
  }
  EXPECT_EQ(r->stats().blocks_in_use, 0u);
}

TEST(RecycledBlocksTest, HugeBlocksAreAlignedWritableAndBounded) {
  constexpr size_t kMiB = 1024 * kKiB;
  Ref r(16 * kKiB, 64 << 20, 4 * kMiB, kMiB);  // keeps two 2 MiB blocks
  {
    std::vector<ByteBlock> blocks;
    for (int i = 0; i < 3; ++i) {
      ByteBlock b = ByteBlock::FromSource(r.p, kMiB + 56);
      ASSERT_EQ(b.capacity(), 2 * kMiB);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % RecycledBlocks::kHugeBytes, 0u);
      b.Resize(b.capacity());
      std::memset(b.data(), i + 1, b.size());  // the whole mapping is ours to write
      blocks.push_back(std::move(b));
    }
    ByteBlock small = ByteBlock::FromSource(r.p, 512 * kKiB);  // below 1 MiB: the heap
    EXPECT_EQ(small.capacity(), 512 * kKiB);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(blocks[i].data()[2 * kMiB - 1], i + 1);
    RecycledBlocks::Stats s = r->stats();
    EXPECT_EQ(s.allocated, 4u);
    EXPECT_EQ(s.mapped, 3u);
  }
  RecycledBlocks::Stats s = r->stats();
  EXPECT_EQ(s.blocks_in_use, 0u);
  // Given back in order 512 KiB (kept), 2 MiB (kept: 2.5 MiB), 2 MiB, 2 MiB (over 4 MiB).
  EXPECT_EQ(s.kept_bytes, 2 * kMiB + 512 * kKiB);
  EXPECT_EQ(s.released, 2u);
  Ref none(16 * kKiB, 64 << 20, 0, kMiB);  // huge blocks, none kept: unmapped at once
  for (int i = 0; i < 3; ++i) {
    ByteBlock b = ByteBlock::FromSource(none.p, 3 * kMiB);
    ASSERT_EQ(b.capacity(), 4 * kMiB);
    b.Resize(b.capacity());
    b.data()[b.size() - 1] = 1;
  }
  EXPECT_EQ(none->stats().mapped, 3u);
  EXPECT_EQ(none->stats().released, 3u);
}

}  // namespace
}  // namespace ukai::rt
