// The MPI one-sided path of RMA (docs/rma.md) under mpirun (2 ranks, mpi bootstrap and module):
// rank 0 puts and gets rank 1's registered memory below and above
// RmaOptions::mpi_onesided_min_bytes (unaligned offsets, sizes crossing pages, up to 3 MiB):
// the bytes are right at both ends and RmaStats::onesided_accesses rises only above the
// threshold (one ask packet per operation instead of one packet per 4 KiB). Protection still
// decides at the target: a large put out of bounds, with a revoked key or from a blocked
// process is refused with no byte written; a lazily backed segment and a descheduled
// context take the packet path (fault handler, software path). With the option 0 nothing is
// one-sided.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "rma_mpi_util.h"
#include "rt/rma/rma_wire.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

#if UKAI_HAVE_MPI

constexpr uint64_t kThreshold = 64 * 1024;

uint8_t Pattern(uint32_t seed, size_t i) {
  return static_cast<uint8_t>(seed * 31 + i * 7 + i / 251);
}

std::vector<uint8_t> Filled(uint32_t seed, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Pattern(seed, i);
  return v;
}

// Exchanges keys once more (after a revocation): rank 1 sends a fresh key of `segment`.
Result<RemoteKey> Reswap(testing::RmaRank& rank, uint32_t segment) {
  {
    std::lock_guard<std::mutex> lock(rank.mu);
    rank.peer_key.clear();
  }
  if (Status s = rank.rt->Barrier(); !s.ok()) return s;
  Result<RemoteKey> fresh = rank.rma->KeyOf(segment);
  if (!fresh.ok()) return fresh.status();
  return rank.SwapKeys(*fresh);
}

// Sends a one-sided ask / release made by hand (no release follows an ask sent this way).
void SendByHand(Runtime& r, Rma& a, const RemoteKey& key, internal::RmaWireOp op) {
  internal::RmaRequest req;
  req.op = op;
  req.op_id = 1u << 30;
  req.segment = key.segment;
  req.dest = key.process;
  req.dest_access_id = key.access_id;
  req.init = a.process_id();
  req.init_access_id = a.access_id();
  req.length = static_cast<uint32_t>(kThreshold);
  Buffer b;
  b.block().Resize(Buffer::kHeadroom + internal::RequestSize(req));
  internal::EncodeRequest(req, b.block().data() + Buffer::kHeadroom);
  ASSERT_TRUE(r.SendRsr(std::move(b), key.route, HandlerId::Of("ukai.rma.request")).ok());
}

TEST(MpiRmaOneSidedWorker, LargePutGetAndProtection) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiRmaOneSided";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t kLen = (size_t{3} << 20) + 3 * page;
  testing::RmaRank rank;
  ASSERT_TRUE(rank.Init({.mpi_onesided_min_bytes = kThreshold}).ok());
  Runtime& r = *rank.rt;
  ASSERT_EQ(r.size(), 2);
  Rma& a = *rank.rma;
  // The segment plus one guard page that must never be written.
  auto* mem = static_cast<uint8_t*>(std::aligned_alloc(page, kLen + page));
  std::memset(mem, 0, kLen + page);
  RemoteKey mine = *a.Register({mem, kLen});
  RemoteKey lazy_mine = *a.RegisterLazy(kThreshold * 2);  // segment 2
  uint8_t* backing = nullptr;
  a.SetFaultHandler([&](uint32_t, uint64_t n) -> Result<std::span<uint8_t>> {
    backing = static_cast<uint8_t*>(std::aligned_alloc(page, n));
    return std::span<uint8_t>(backing, n);
  });
  a.SetProtectionHandler([](const ProcessId&, uint32_t) { return true; });  // block offenders
  ASSERT_TRUE(r.Barrier().ok());
  Result<RemoteKey> key = rank.SwapKeys(mine);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  RemoteKey lazy = *key;  // rank 1's lazy segment: same owner and access ID
  lazy.segment = lazy_mine.segment;
  lazy.base = 0;
  lazy.length = lazy_mine.length;
  if (r.rank() == 0) {
    uint32_t seed = 1;
    for (size_t size : {kThreshold - 1, kThreshold, kThreshold + 4097, (size_t{3} << 20) + 5}) {
      for (size_t off : {size_t{0}, size_t{1}, page - 1}) {
        const RmaStats before = a.stats();
        std::vector<uint8_t> data = Filled(seed++, size), back(size);
        ASSERT_TRUE(a.PutSync(*key, off, data).ok()) << size << " @" << off;
        ASSERT_TRUE(a.GetSync(*key, off, back).ok()) << size << " @" << off;
        ASSERT_EQ(back, data) << size << " @" << off;
        const RmaStats after = a.stats();
        const bool above = size >= kThreshold;
        EXPECT_EQ(after.onesided_accesses - before.onesided_accesses, above ? 2u : 0u) << size;
        if (above) {  // 2 asks and 2 releases
          EXPECT_EQ(after.packets_sent - before.packets_sent, 4u) << size;
        }
      }
    }
    EXPECT_EQ(a.stats().onesided_accesses, 18u);
    EXPECT_EQ(a.stats().onesided_fallbacks, 0u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  // The target holds the last put's bytes (seed 12, 3 MiB + 5 at page - 1), the guard page
  // after the segment is untouched, and every large access was granted here.
  if (r.rank() == 1) {
    // Every grant released (the releases may still be on their way after the barrier).
    EXPECT_TRUE(testing::WaitFor([&] { return a.stats().onesided_released == 18; }));
    const std::vector<uint8_t> want = Filled(12, (size_t{3} << 20) + 5);
    EXPECT_EQ(std::memcmp(mem + page - 1, want.data(), want.size()), 0);
    EXPECT_EQ(a.stats().onesided_granted, 18u);
    for (size_t i = 0; i < page; ++i) ASSERT_EQ(mem[kLen + i], 0) << "guard byte " << i;
    std::memset(mem, 0, kLen);  // the refusals below must leave it 0
  }
  ASSERT_TRUE(r.Barrier().ok());
  // Out of bounds at the target: a key claiming a longer segment is refused there.
  if (r.rank() == 0) {
    RemoteKey longer = *key;
    longer.length += kThreshold * 4;
    std::vector<uint8_t> data(kThreshold * 2, 0xAB);
    Status s = a.PutSync(longer, kLen - 1000, data);
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
    EXPECT_EQ(a.stats().onesided_accesses, 18u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    for (size_t i = kLen - 1000; i < kLen + page; ++i) ASSERT_EQ(mem[i], 0) << i;
  }
  // Revocation: the old key is refused (one ask, one access ID mismatch), nothing written;
  // the protection handler blocks rank 0.
  if (r.rank() == 1) a.ChangeAccessId();  // (every grant was released: none overtaken)
  ASSERT_TRUE(r.Barrier().ok());
  const std::vector<uint8_t> marks(kThreshold * 4, 0xAB);
  if (r.rank() == 0) {
    Status s = a.PutSync(*key, 2 * page, marks);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
    EXPECT_NE(s.message().find("access ID mismatch"), std::string::npos) << s.ToString();
  }
  Result<RemoteKey> fresh = Reswap(rank, mine.segment);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  // Blocked: even the fresh key is refused.
  if (r.rank() == 0) {
    Status s = a.PutSync(*fresh, 2 * page, marks);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
    EXPECT_NE(s.message().find("blocked"), std::string::npos) << s.ToString();
    EXPECT_EQ(a.stats().onesided_accesses, 18u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(a.stats().access_rejected, 1u);
    EXPECT_EQ(a.stats().blocked_rejected, 1u);
    for (size_t i = 2 * page; i < 2 * page + marks.size(); ++i) ASSERT_EQ(mem[i], 0) << i;
    a.Unblock(fresh->process);  // rank 0 (the key rank 0 sent names it)
  }
  ASSERT_TRUE(r.Barrier().ok());
  // Unblocked, the fresh key is one-sided again.
  if (r.rank() == 0) {
    ASSERT_TRUE(a.PutSync(*fresh, 2 * page, marks).ok());
    EXPECT_EQ(a.stats().onesided_accesses, 19u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(std::memcmp(mem + 2 * page, marks.data(), marks.size()), 0);
  }
  // A lazily backed segment (translation fault, fault handler) takes the packet path.
  const std::vector<uint8_t> lazy_data = Filled(99, kThreshold * 2);
  if (r.rank() == 0) {
    lazy.access_id = fresh->access_id;
    std::vector<uint8_t> back(lazy_data.size());
    ASSERT_TRUE(a.PutSync(lazy, 0, lazy_data).ok());
    ASSERT_TRUE(a.GetSync(lazy, 0, back).ok());
    EXPECT_EQ(back, lazy_data);
    EXPECT_EQ(a.stats().onesided_accesses, 19u);
    EXPECT_EQ(a.stats().onesided_fallbacks, 2u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(a.stats().translation_faults, 1u);
    ASSERT_NE(backing, nullptr);
    EXPECT_EQ(std::memcmp(backing, lazy_data.data(), lazy_data.size()), 0);
    a.SetScheduled(false);  // descheduled: the software path (process ID mismatch)
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) {
    ASSERT_TRUE(a.PutSync(*fresh, 0, lazy_data).ok());
    EXPECT_EQ(a.stats().onesided_accesses, 19u);
    EXPECT_EQ(a.stats().onesided_fallbacks, 3u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(a.stats().process_mismatch, lazy_data.size() / page);
    EXPECT_EQ(std::memcmp(mem, lazy_data.data(), lazy_data.size()), 0);
  }
  ASSERT_TRUE(r.Barrier().ok());  // checked before rank 0 writes the same bytes again
  // A large put started in a non-threaded handler (inside the progress pass, where no answer
  // to an ask could be dispatched) takes the packet path instead of waiting.
  if (r.rank() == 0) {
    Result<Endpoint*> ep = r.FindContext(testing::kRankCtx)->CreateEndpoint({2});
    ASSERT_TRUE(ep.ok()) << ep.status().ToString();
    std::atomic<bool> started{false};
    Result<RmaOp> op = Status::Internal("not run");
    const std::vector<uint8_t> data = Filled(77, kThreshold * 2);
    ASSERT_TRUE((*ep)
                    ->RegisterHandler("put", HandlerKind::kNonThreaded,
                                      [&](Rsr&) {
                                        op = a.Put(*fresh, 0, data);
                                        started = true;
                                      })
                    .ok());
    ASSERT_TRUE(r.SendRsr(Buffer(), (*ep)->MakeStartpoint(), HandlerId::Of("put")).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return started.load(); }));
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    ASSERT_TRUE(a.Wait(*op).ok());
    EXPECT_EQ(a.stats().onesided_accesses, 19u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  // The race, counted: a grant whose transfer has not ended (an ask made by hand, never
  // released) when the target revokes its keys.
  if (r.rank() == 1) {
    a.SetScheduled(true);
    EXPECT_EQ(a.stats().onesided_revoked_in_flight, 0u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) SendByHand(r, a, *fresh, internal::RmaWireOp::kOneSidedPut);
  if (r.rank() == 1) {
    ASSERT_TRUE(testing::WaitFor([&] { return a.stats().onesided_granted == 20; }));
    EXPECT_EQ(a.stats().onesided_released, 19u);
    a.ChangeAccessId();
    EXPECT_EQ(a.stats().onesided_revoked_in_flight, 1u);
  }
  // Deregister waits for the grant on that segment to be released (its memory may be freed
  // right after).
  std::atomic<bool> deregistered{false};
  std::thread deregister;
  if (r.rank() == 1) {
    deregister = std::thread([&] {
      EXPECT_TRUE(a.Deregister(mine.segment).ok());
      deregistered = true;
    });
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(deregistered.load());
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 0) SendByHand(r, a, *fresh, internal::RmaWireOp::kOneSidedDone);
  if (r.rank() == 1) {
    EXPECT_TRUE(testing::WaitFor([&] { return deregistered.load(); }));
    deregister.join();
    EXPECT_EQ(a.stats().onesided_released, 20u);
  }
  ASSERT_TRUE(r.Barrier().ok());
  rank.rma.reset();
  EXPECT_TRUE(r.Finalize().ok());
  std::free(mem);
  std::free(backing);
}

TEST(MpiRmaOneSidedWorker, OptionZeroDisablesIt) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiRmaOneSided";
  testing::RmaRank rank;
  ASSERT_TRUE(rank.Init({.mpi_onesided_min_bytes = 0}).ok());
  Runtime& r = *rank.rt;
  Rma& a = *rank.rma;
  std::vector<uint8_t> mem(size_t{1} << 20);
  Result<RemoteKey> key = rank.SwapKeys(*a.Register(mem));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  if (r.rank() == 0) {
    std::vector<uint8_t> data = Filled(5, mem.size() - 3), back(data.size());
    ASSERT_TRUE(a.PutSync(*key, 3, data).ok());
    ASSERT_TRUE(a.GetSync(*key, 3, back).ok());
    EXPECT_EQ(back, data);
    EXPECT_EQ(a.stats().onesided_accesses, 0u);
    EXPECT_GE(a.stats().packets_sent, 2 * data.size() / kRmaMaxPacketBytes);
  }
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_EQ(a.stats().onesided_granted, 0u);
  }
  rank.rma.reset();
  EXPECT_TRUE(r.Finalize().ok());
}

// One mpirun each: the bootstrap finalizes MPI with the runtime.
TEST(MpiRmaOneSidedTest, LargeOpsOverMpiWindows) {
  testing::RunUnderMpirun(2, "MpiRmaOneSidedWorker.LargePutGetAndProtection");
}

TEST(MpiRmaOneSidedTest, OptionZeroDisablesIt) {
  testing::RunUnderMpirun(2, "MpiRmaOneSidedWorker.OptionZeroDisablesIt");
}

#else

TEST(MpiRmaOneSidedTest, NotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
