// Registered memory: the shm module's shared-memory pool (shm_pool.h), ByteBlocks from a
// BlockSource, Runtime::NewBuffer, and pool frames between runtimes (delivered in place
// from the sender's pool, blocks back to the pool, peer death, threaded handlers' copies).
#include "rt/modules/shm/shm_pool.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"

namespace ukai::rt {
namespace {

using shm::ShmPool;
using testing::WaitFor;

// A pool released at scope end (our reference; blocks keep it alive longer).
struct PoolRef {
  explicit PoolRef(size_t bytes) {
    Result<ShmPool*> p = ShmPool::Create(bytes);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    pool = p.ok() ? *p : nullptr;
  }
  ~PoolRef() {
    if (pool != nullptr) pool->Unref();
  }
  ShmPool* operator->() const { return pool; }
  ShmPool* pool;
};

TEST(ShmPoolTest, AllocatesPowerOfTwoClassesAndReusesTheLastFreedBlockFirst) {
  PoolRef pool(size_t{4} << 20);
  ASSERT_NE(pool.pool, nullptr);
  size_t cap_a = 0, cap_b = 0, cap_c = 0;
  uint8_t* a = pool->Allocate(100000, &cap_a);
  uint8_t* b = pool->Allocate(100000, &cap_b);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(cap_a, size_t{128} << 10);
  EXPECT_NE(a, b);
  EXPECT_TRUE(pool->Contains(a, cap_a));
  EXPECT_EQ(pool->stats().blocks_in_use, 2u);
  pool->Free(b, cap_b);
  pool->Free(a, cap_a);
  uint8_t* c = pool->Allocate(70000, &cap_c);  // same class: the block freed last
  EXPECT_EQ(c, a);
  EXPECT_EQ(pool->stats().blocks_in_use, 1u);
  size_t small = 0;
  uint8_t* d = pool->Allocate(1, &small);
  EXPECT_EQ(small, ShmPool::kMinBlock);
  pool->Free(c, cap_c);
  pool->Free(d, small);
  EXPECT_EQ(pool->stats().blocks_in_use, 0u);
  EXPECT_EQ(pool->stats().bytes_in_use, 0u);
}

TEST(ShmPoolTest, ExhaustionAndOversizeAreRefused) {
  PoolRef pool(size_t{256} << 10);
  size_t c1 = 0, c2 = 0, c3 = 0;
  uint8_t* a = pool->Allocate(size_t{128} << 10, &c1);
  uint8_t* b = pool->Allocate(size_t{100} << 10, &c2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool->Allocate(1, &c3), nullptr);  // both halves in use
  EXPECT_EQ(pool->Allocate(size_t{1} << 20, &c3), nullptr);
  EXPECT_EQ(pool->stats().failures, 2u);
  pool->Free(a, c1);
  EXPECT_EQ(pool->Allocate(size_t{128} << 10, &c3), a);
  pool->Free(a, c3);
  pool->Free(b, c2);
  EXPECT_FALSE(ShmPool::Create(1000).ok());
}

TEST(ShmPoolTest, SplitsLargerBlocksAndMergesFreeBuddiesWhenNothingElseFits) {
  PoolRef pool(size_t{1} << 20);
  std::vector<std::pair<uint8_t*, size_t>> small;
  for (int i = 0; i < 16; ++i) {  // the whole pool in 64 KiB blocks
    size_t cap = 0;
    uint8_t* p = pool->Allocate(1, &cap);
    ASSERT_NE(p, nullptr) << i;
    ASSERT_TRUE(pool->Contains(p, cap));
    small.emplace_back(p, cap);
  }
  size_t cap = 0;
  EXPECT_EQ(pool->Allocate(1, &cap), nullptr);
  EXPECT_EQ(pool->stats().bytes_touched, size_t{1} << 20);
  for (auto [p, c] : small) pool->Free(p, c);
  uint8_t* whole = pool->Allocate(size_t{1} << 20, &cap);  // merged back into one block
  ASSERT_EQ(whole, pool->base());
  EXPECT_EQ(cap, size_t{1} << 20);
  pool->Free(whole, cap);
  // Mixed sizes in and out, many times: never refused while the total fits.
  std::vector<std::pair<uint8_t*, size_t>> live;
  for (int round = 0; round < 200; ++round) {
    const size_t want = (size_t{64} << 10) << (round % 3);  // 64, 128, 256 KiB
    uint8_t* p = pool->Allocate(want, &cap);
    if (p == nullptr) {
      ASSERT_GT(pool->stats().bytes_in_use + want, size_t{1} << 20) << round;
    } else {
      for (auto [q, c] : live) ASSERT_TRUE(p + cap <= q || q + c <= p) << "overlap";
      live.emplace_back(p, cap);
    }
    if (live.size() > 3) {
      pool->Free(live.front().first, live.front().second);
      live.erase(live.begin());
    }
  }
  for (auto [p, c] : live) pool->Free(p, c);
  EXPECT_EQ(pool->stats().blocks_in_use, 0u);
}

TEST(ShmPoolTest, BlocksGrowFromTheSourceThenTheHeapAndCloneFromTheSource) {
  PoolRef pool(size_t{512} << 10);
  ByteBlock b = ByteBlock::FromSource(pool.pool, 1000);
  ASSERT_EQ(b.source(), pool.pool);
  EXPECT_EQ(b.capacity(), ShmPool::kMinBlock);
  for (size_t i = 0; i < 1000; ++i) *b.Extend(1) = static_cast<uint8_t>(i);
  ByteBlock copy = b.Clone();
  EXPECT_EQ(copy.source(), pool.pool);
  EXPECT_EQ(pool->stats().blocks_in_use, 2u);
  b.Resize(size_t{200} << 10);  // 256 KiB class: still room in the pool
  EXPECT_EQ(b.source(), pool.pool);
  EXPECT_EQ(b.capacity(), size_t{256} << 10);
  b.Resize(size_t{400} << 10);  // no 512 KiB block left: the heap
  EXPECT_EQ(b.source(), nullptr);
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(b.data()[i], static_cast<uint8_t>(i)) << i;
  EXPECT_EQ(std::memcmp(copy.data(), b.data(), 1000), 0);
  EXPECT_EQ(pool->stats().blocks_in_use, 1u);  // the copy
  copy = ByteBlock();
  EXPECT_EQ(pool->stats().blocks_in_use, 0u);
  // A source that cannot serve gives an empty block.
  ByteBlock none = ByteBlock::FromSource(pool.pool, size_t{1} << 30);
  EXPECT_EQ(none.capacity(), 0u);
  EXPECT_EQ(none.source(), nullptr);
}

TEST(ShmPoolTest, BlocksKeepTheSourceAliveAndMayBeFreedByAnyThread) {
  std::vector<ByteBlock> blocks;
  {
    PoolRef pool(size_t{8} << 20);
    for (int i = 0; i < 64; ++i) blocks.push_back(ByteBlock::FromSource(pool.pool, 50000));
  }  // our reference is gone; the blocks hold the pool
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&blocks, t] {
      for (int i = t; i < 64; i += 4) {
        blocks[static_cast<size_t>(i)].Resize(50000);
        std::memset(blocks[static_cast<size_t>(i)].data(), i, 50000);
        ByteBlock more = ByteBlock::FromSource(blocks[static_cast<size_t>(i)].source(), 9999);
        more.Resize(9999);
        blocks[static_cast<size_t>(i)] = ByteBlock();  // frees into the pool from this thread
      }
    });
  }
  for (auto& th : threads) th.join();  // the last block freed unmapped the pool (ASan checks)
}

TEST(ShmPoolTest, PeerPoolsMustBeSealedAgainstResizing) {
  PoolRef pool(size_t{1} << 20);
  Result<std::unique_ptr<shm::PeerPool>> mapped = shm::PeerPool::Map(pool->fd());
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ((*mapped)->size(), pool->size());
  EXPECT_NE(ftruncate(pool->fd(), 4096), 0);  // the seal holds
  const int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(ftruncate(unsealed, 1 << 20), 0);
  Result<std::unique_ptr<shm::PeerPool>> refused = shm::PeerPool::Map(unsealed);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("sealed"), std::string::npos);
  close(unsealed);
}

// ---- NewBuffer and pool frames between runtimes ----

RuntimeOptions ShmOptions(std::map<std::string, std::string> params = {}) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"shm"};
  o.spin_us = 50;
  o.params = std::move(params);
  return o;
}

uint64_t Counter(Runtime& rt, const char* name) {
  auto c = rt.impl()->ModuleCounters("shm");
  auto it = c.find(name);
  return it == c.end() ? ~uint64_t{0} : it->second;
}

TEST(ShmPoolTest, NewBufferComesFromThePoolForLargePayloadsOnly) {
  auto rt = Runtime::Init(ShmOptions());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Buffer big = (*rt)->NewBuffer(size_t{1} << 20);
  EXPECT_NE(big.block().source(), nullptr);
  EXPECT_GE(big.block().capacity(), Buffer::kHeadroom + (size_t{1} << 20));
  EXPECT_EQ(big.size(), 0u);
  EXPECT_EQ((*rt)->NewBuffer(100).block().source(), nullptr);  // < shm.pool_min_bytes
  EXPECT_EQ(Counter(**rt, "pool_blocks_in_use"), 1u);
  EXPECT_EQ(Counter(**rt, "pool_bytes"), size_t{256} << 20);
  // Outlives the runtime: packs, copies and frees after it is gone.
  ASSERT_TRUE((*rt)->Finalize().ok());
  rt->reset();
  std::vector<uint8_t> data(size_t{1} << 20, 9);
  big.PutBytes(data);
  Buffer copy = big;
  EXPECT_EQ(copy.block().source(), big.block().source());
  EXPECT_EQ(copy.payload()[100], 9);

  auto off = Runtime::Init(ShmOptions({{"shm.pool_bytes", "0"}}));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->NewBuffer(size_t{1} << 20).block().source(), nullptr);
  EXPECT_FALSE(Runtime::Init(ShmOptions({{"shm.pool_bytes", "1000"}})).ok());
  EXPECT_FALSE(Runtime::Init(ShmOptions({{"shm.pool_min_bytes", "x"}})).ok());
}

TEST(ShmPoolTest, ExhaustedPoolFallsBackToTheHeap) {
  auto rt = Runtime::Init(ShmOptions({{"shm.pool_bytes", "131072"}}));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Buffer a = (*rt)->NewBuffer(100000);
  Buffer b = (*rt)->NewBuffer(100000);
  EXPECT_NE(a.block().source(), nullptr);
  EXPECT_EQ(b.block().source(), nullptr);
  EXPECT_EQ(Counter(**rt, "pool_failures"), 1u);
}

using Pair = testing::ShmPair;

Pair MakePoolPair(const std::map<std::string, std::string>& params = {}) {
  return testing::MakeShmPair(params);
}

uint8_t PoolPattern(size_t i, uint32_t seq) { return static_cast<uint8_t>(i * 131 + seq * 7 + 3); }

Buffer PoolMessage(Runtime& rt, uint32_t seq, size_t n) {
  Buffer b = rt.NewBuffer(n + 16);
  b.PutU32(seq);
  uint8_t* p = b.block().Extend(5 + n);
  p[0] = static_cast<uint8_t>(TypeTag::kBytes);
  wire::PutLe32(p + 1, static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) p[5 + i] = PoolPattern(i, seq);
  return b;
}

// Checks seq + pattern every `stride` bytes (and the last one).
bool Intact(Rsr& m, const std::vector<size_t>& sizes, uint32_t* seq_out, size_t stride) {
  auto seq = m.reader().GetU32();
  auto v = m.reader().GetBytes();
  if (!seq.ok() || !v.ok() || *seq >= sizes.size() || v->size() != sizes[*seq]) return false;
  *seq_out = *seq;
  for (size_t i = 0; i < v->size(); i += stride) {
    if ((*v)[i] != PoolPattern(i, *seq)) return false;
  }
  return v->empty() || v->back() == PoolPattern(v->size() - 1, *seq);
}

// Registers non-threaded handler "m": counts messages in *next, bad or out-of-order ones in
// *bad.
bool CheckInOrder(Endpoint* ep, const std::vector<size_t>* sizes, size_t stride,
                  std::atomic<uint32_t>* next, std::atomic<int>* bad) {
  return ep
      ->RegisterHandler("m", HandlerKind::kNonThreaded,
                        [=](Rsr& m) {
                          uint32_t seq = 0;
                          if (!Intact(m, *sizes, &seq, stride) || seq != next->load()) ++*bad;
                          ++*next;
                        })
      .ok();
}

TEST(ShmPoolTest, PoolFramesArriveIntactInOrderUpTo64MiBAndBlocksComeBack) {
  Pair p = MakePoolPair();
  ASSERT_NE(p.ep_b, nullptr);
  // Around every class boundary that matters (64 KiB blocks, 1 MiB), up to the largest RSR.
  const std::vector<size_t> sizes = {
      16384,   16385,         65535,   65536,   65537,
      100000,  262143,        262144,  70000,   (1 << 20) - 1,
      1 << 20, (1 << 20) + 3, 3 << 20, 1 << 24, wire::kMaxPayloadBytes - 10};
  std::atomic<uint32_t> next{0};
  std::atomic<int> bad{0};
  ASSERT_TRUE(CheckInOrder(p.ep_b, &sizes, 997, &next, &bad));
  const Startpoint sp = p.ep_b->MakeStartpoint();
  for (uint32_t seq = 0; seq < sizes.size(); ++seq) {
    Buffer b = PoolMessage(*p.a, seq, sizes[seq]);
    ASSERT_NE(b.block().source(), nullptr) << sizes[seq];
    ASSERT_TRUE(p.a->SendRsr(std::move(b), sp, HandlerId::Of("m")).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return next.load() == sizes.size(); }, std::chrono::seconds(60)));
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(p.b->stats().frames_rejected, 0u);
  EXPECT_EQ(Counter(*p.a, "pool_frames_sent"), sizes.size());
  EXPECT_EQ(Counter(*p.b, "pool_frames_received"), sizes.size());
  // The receiver says it is done at its next poll (or before its engine blocks).
  EXPECT_TRUE(WaitFor([&] { return Counter(*p.a, "pool_blocks_in_use") == 0; }));
  EXPECT_TRUE(p.a->Finalize().ok());
  EXPECT_TRUE(p.b->Finalize().ok());
}

TEST(ShmPoolTest, ManyPoolFramesInFlight) {
  Pair p = MakePoolPair({{"shm.pool_bytes", std::to_string(size_t{32} << 20)}});
  ASSERT_NE(p.ep_b, nullptr);
  constexpr uint32_t kCount = 400;
  const std::vector<size_t> sizes(kCount, size_t{200} << 10);
  std::atomic<uint32_t> next{0};
  std::atomic<int> bad{0};
  ASSERT_TRUE(CheckInOrder(p.ep_b, &sizes, 4099, &next, &bad));
  const Startpoint sp = p.ep_b->MakeStartpoint();
  for (uint32_t seq = 0; seq < kCount; ++seq) {
    ASSERT_TRUE(p.a->SendRsr(PoolMessage(*p.a, seq, sizes[seq]), sp, HandlerId::Of("m")).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return next.load() == kCount; }, std::chrono::seconds(60)));
  EXPECT_EQ(bad.load(), 0);
  // 32 MiB hold 128 blocks of 256 KiB: the sender outran the receiver and some went by the
  // heap (ring) instead; both kinds arrived in order.
  EXPECT_GT(Counter(*p.a, "pool_frames_sent"), 0u);
  EXPECT_TRUE(WaitFor([&] { return Counter(*p.a, "pool_blocks_in_use") == 0; }));
}

TEST(ShmPoolTest, ThreadedHandlersGetACopyThatSurvivesBlockReuse) {
  Pair p = MakePoolPair();
  ASSERT_NE(p.ep_b, nullptr);
  const std::vector<size_t> sizes = {size_t{300} << 10, size_t{300} << 10};
  std::atomic<bool> second_seen{false};
  std::atomic<int> good{0}, bad{0};
  ASSERT_TRUE(p.ep_b
                  ->RegisterHandler("slow", HandlerKind::kThreaded,
                                    [&](Rsr& m) {
                                      // Keep the message until the sender reused its block.
                                      WaitFor([&] { return second_seen.load(); });
                                      uint32_t seq = 0;
                                      ++(Intact(m, sizes, &seq, 1) && seq == 0 ? good : bad);
                                    })
                  .ok());
  ASSERT_TRUE(p.ep_b
                  ->RegisterHandler("fast", HandlerKind::kNonThreaded,
                                    [&](Rsr& m) {
                                      uint32_t seq = 0;
                                      ++(Intact(m, sizes, &seq, 1) && seq == 1 ? good : bad);
                                      second_seen = true;
                                    })
                  .ok());
  const Startpoint sp = p.ep_b->MakeStartpoint();
  Buffer first = PoolMessage(*p.a, 0, sizes[0]);
  const uint8_t* where = first.block().data();
  ASSERT_TRUE(p.a->SendRsr(std::move(first), sp, HandlerId::Of("slow")).ok());
  ASSERT_TRUE(WaitFor([&] { return Counter(*p.a, "pool_blocks_in_use") == 0; }));
  Buffer second = PoolMessage(*p.a, 1, sizes[1]);
  EXPECT_EQ(second.block().data(), where);  // the same (warm) block, overwritten
  ASSERT_TRUE(p.a->SendRsr(std::move(second), sp, HandlerId::Of("fast")).ok());
  ASSERT_TRUE(WaitFor([&] { return good.load() + bad.load() == 2; }));
  EXPECT_EQ(good.load(), 2);
  EXPECT_EQ(Counter(*p.b, "pool_frames_received"), 2u);
}

// True once process `pid` is stopped (state T in /proc/PID/stat).
bool Stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T';
}

// `heap`: the RSRs are ordinary heap Buffers, staged in the pool by the channel.
void PeerDeathReleasesHeldBlocks(bool heap) {
  auto rt = Runtime::Init(ShmOptions());
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  testing::PeerProcess peer({"--ukai-modules=shm", "--ukai-bootstrap=single"});
  ASSERT_TRUE(peer.startpoint().valid()) << peer.error();
  auto ctx = (*rt)->CreateContext({.name = "a"});
  ASSERT_TRUE(ctx.ok());
  auto ep = (*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep.ok());
  std::atomic<uint64_t> echoed{0};
  ASSERT_TRUE((*ep)
                  ->RegisterHandler("echo_reply", HandlerKind::kNonThreaded,
                                    [&](Rsr& m) { echoed = *m.reader().GetU64(); })
                  .ok());
  auto echo = [&](uint64_t v) {
    Buffer b = heap ? Buffer() : (*rt)->NewBuffer(size_t{64} << 10);
    b.PutU64(v);
    b.PutStartpoint((*ep)->MakeStartpoint());
    b.PutBytes(std::vector<uint8_t>(size_t{64} << 10, 1));
    EXPECT_EQ(b.block().source() == nullptr, heap);
    return (*rt)->SendRsr(std::move(b), peer.startpoint(), HandlerId::Of("echo"));
  };
  ASSERT_TRUE(echo(41).ok());  // connects; a pool record from the first RSR on
  ASSERT_TRUE(WaitFor([&] { return echoed.load() == 42; }));
  ASSERT_TRUE(WaitFor([&] { return Counter(**rt, "pool_blocks_in_use") == 0; }));
  ASSERT_TRUE(WaitFor([&] { return Counter(**rt, "pool_blocks_in_use") == 0; }));
  const uint64_t sent = Counter(**rt, "pool_frames_sent");
  EXPECT_EQ(sent, 1u);
  ASSERT_EQ(::kill(peer.pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return Stopped(peer.pid()); }));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(echo(100).ok());
  EXPECT_EQ(Counter(**rt, "pool_blocks_in_use"), 5u);  // held for the stopped peer
  EXPECT_EQ(Counter(**rt, "pool_frames_sent"), sent + 5);
  EXPECT_EQ(Counter(**rt, "pool_frames_staged"), heap ? sent + 5 : 0);
  peer.Kill();
  EXPECT_TRUE(WaitFor([&] { return Counter(**rt, "pool_blocks_in_use") == 0; }));
}

TEST(ShmPoolTest, PeerProcessDeathReleasesHeldBlocks) { PeerDeathReleasesHeldBlocks(false); }

TEST(ShmPoolTest, PeerProcessDeathReleasesHeldBlocksOfStagedHeapFrames) {
  PeerDeathReleasesHeldBlocks(true);
}

}  // namespace
}  // namespace ukai::rt
