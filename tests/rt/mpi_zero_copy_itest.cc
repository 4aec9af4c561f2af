// Runtime::SendRsrBytes over the mpi module from the caller's memory (mpi.zero_copy_bytes,
// MpiChannel::SendLent), under `mpirun -n 2`:
// - BothWaysAtOnce: both ranks (no progress thread: only their waits drive progress) send
//   1 MiB payloads to each other at the same time, overwriting their array as soon as each
//   call returns, while a second thread sends split frames from Buffers: no deadlock, every
//   payload arrives whole (the call returned only once MPI no longer read the array), in
//   order with the small RSRs between them, and the counter zero_copy_sends says how many
//   went from the caller's memory (80 KiB and 1 MiB: over the default mpi.zero_copy_bytes,
//   64 KiB). With mpi.zero_copy_bytes=0 the same traffic is copied; with
//   mpi.zero_copy_max_bytes below 1 MiB the 1 MiB payloads are.
// - HandlersCopy: non-threaded handlers on both ranks answer with 1 MiB SendRsrBytes at the
//   same time; inside a progress pass they cannot wait for the peer, so they copy (the
//   counter stays 0) and both answers arrive.
// - PeerLeavesWhileLent: rank 1 stalls, then finalizes while rank 0 waits in a 1 MiB
//   SendRsrBytes to it: rank 1's Close takes the payload before it leaves, rank 0's call
//   returns kUnavailable (not hanging, not returning before MPI is done with the array).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

#if UKAI_HAVE_MPI

constexpr ContextId kCtx = 1;
constexpr EndpointId kEp = 1;
constexpr size_t kLarge = size_t{1} << 20;
constexpr size_t kSplit = size_t{80} << 10;  // split (over a 64 KiB slot)

// The byte at `i` of large payload number `n`.
uint8_t Pattern(uint32_t n, size_t i) { return static_cast<uint8_t>(n * 31 + i * 7 + (i >> 12)); }

bool IsPattern(std::span<const uint8_t> p, uint32_t n) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != Pattern(n, i)) return false;
  }
  return true;
}

RuntimeOptions MpiOptions(bool progress_thread) {
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  o.progress_thread = progress_thread;
  if (const char* z = std::getenv("UKAI_MPI_ITEST_ZERO_COPY"); z != nullptr) {
    o.params["mpi.zero_copy_bytes"] = z;
  }
  if (const char* z = std::getenv("UKAI_MPI_ITEST_ZERO_COPY_MAX"); z != nullptr) {
    o.params["mpi.zero_copy_max_bytes"] = z;
  }
  return o;
}

uint64_t ZeroCopySends(Runtime& r) { return r.impl()->ModuleCounters("mpi")["zero_copy_sends"]; }

TEST(MpiZeroCopyWorker, BothWaysAtOnce) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  constexpr uint32_t kRounds = 40;    // each: a small RSR, then a 1 MiB one from the array
  constexpr uint32_t kSplits = 1000;  // from the other thread, half of them lent
  // UKAI_MPI_ITEST_ZERO_COPY: mpi.zero_copy_bytes, unset (the default, 64 KiB: every large
  // one lent) or 0 (none); UKAI_MPI_ITEST_ZERO_COPY_MAX: mpi.zero_copy_max_bytes (unset: no
  // bound; below 1 MiB: the 1 MiB ones copied, the 80 KiB ones lent).
  const char* z = std::getenv("UKAI_MPI_ITEST_ZERO_COPY");
  const char* zmax = std::getenv("UKAI_MPI_ITEST_ZERO_COPY_MAX");
  const bool zero_copy = z == nullptr || std::string(z) != "0";
  const uint64_t max = zmax == nullptr ? UINT64_MAX : std::strtoull(zmax, nullptr, 10);
  std::atomic<uint32_t> next{0}, splits{0};
  std::atomic<bool> ok{true};
  auto rt = Runtime::Init(MpiOptions(/*progress_thread=*/false));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    // Small RSRs carry 2n, large ones are number 2n+1: one sequence, in send order.
    auto small = (*ep)->RegisterHandler("small", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      auto v = rsr.reader().GetU32();
      if (!v.ok() || *v != 2 * (next.load() / 2) || next.load() % 2 != 0) ok = false;
      ++next;
    });
    auto large = (*ep)->RegisterHandler("large", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      const uint32_t n = next.load();
      if (n % 2 != 1 || rsr.payload().size() != kLarge || !IsPattern(rsr.payload(), n)) {
        ok = false;
      }
      ++next;
    });
    auto split = (*ep)->RegisterHandler("split", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      std::span<const uint8_t> p = rsr.payload();
      if (p.size() != kSplit) {  // packed by a Buffer
        auto b = rsr.reader().GetBytes();
        p = b.ok() ? *b : std::span<const uint8_t>();
      }
      if (p.size() != kSplit || !IsPattern(p, 7)) ok = false;
      ++splits;
    });
    return small.ok() && large.ok() && split.ok() ? Status::Ok() : Status::Internal("register");
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  auto sp = r.WorldStartpoint(1 - r.rank(), kCtx, kEp);
  ASSERT_TRUE(sp.ok());
  std::vector<uint8_t> split_payload(kSplit);
  for (size_t i = 0; i < kSplit; ++i) split_payload[i] = Pattern(7, i);
  // Split frames from another thread between the main thread's, lent (SendRsrBytes) and
  // copied (a Buffer): heads and tails of all of them must leave in one order, or the peer
  // pairs a head with another frame's tail (rejected, or the wrong bytes).
  std::thread other([&] {
    for (uint32_t i = 0; i < kSplits; ++i) {
      if (i % 2 == 0) {
        if (!r.SendRsrBytes(split_payload, *sp, HandlerId::Of("split")).ok()) ok = false;
        continue;
      }
      Buffer b = r.NewBuffer(kSplit + 8);
      b.PutBytes(split_payload);
      if (!r.SendRsr(std::move(b), *sp, HandlerId::Of("split")).ok()) ok = false;
    }
  });
  std::vector<uint8_t> data(kLarge);
  for (uint32_t n = 0; n < kRounds; ++n) {
    Buffer b;
    b.PutU32(2 * n);
    ASSERT_TRUE(r.SendRsr(std::move(b), *sp, HandlerId::Of("small")).ok());
    for (size_t i = 0; i < kLarge; ++i) data[i] = Pattern(2 * n + 1, i);
    Status st = r.SendRsrBytes(data, *sp, HandlerId::Of("large"));
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::fill(data.begin(), data.end(), 0xee);  // the module no longer reads it
  }
  other.join();
  while (next.load() < 2 * kRounds || splits.load() < kSplits) r.Progress();
  EXPECT_TRUE(ok.load());
  const uint64_t lent = (max >= kLarge ? kRounds : 0) + (max >= kSplit ? kSplits / 2 : 0);
  EXPECT_EQ(ZeroCopySends(r), zero_copy ? lent : 0u);
  ASSERT_TRUE(r.Barrier().ok());
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(MpiZeroCopyWorker, HandlersCopy) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  std::atomic<int> answers{0};
  std::atomic<bool> ok{true};
  std::vector<uint8_t> data(kLarge);
  for (size_t i = 0; i < kLarge; ++i) data[i] = Pattern(3, i);
  auto rt = Runtime::Init(MpiOptions(/*progress_thread=*/true));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  Startpoint peer;
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    // Runs inside a progress pass: a lent send would wait there for the peer, whose pass
    // waits the same way for us.
    auto ping = (*ep)->RegisterHandler("ping", HandlerKind::kNonThreaded, [&](Rsr&) {
      if (!r.SendRsrBytes(data, peer, HandlerId::Of("answer")).ok()) ok = false;
    });
    auto answer = (*ep)->RegisterHandler("answer", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      if (!IsPattern(rsr.payload(), 3) || rsr.payload().size() != kLarge) ok = false;
      ++answers;
    });
    return ping.ok() && answer.ok() ? Status::Ok() : Status::Internal("register");
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  auto sp = r.WorldStartpoint(1 - r.rank(), kCtx, kEp);
  ASSERT_TRUE(sp.ok());
  peer = *sp;
  ASSERT_TRUE(r.Barrier().ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(r.SendRsr(Buffer(), peer, HandlerId::Of("ping")).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return answers.load() == 8; })) << answers.load();
  EXPECT_TRUE(ok.load());
  EXPECT_EQ(ZeroCopySends(r), 0u);
  // Both ranks saw their 8 answers before either sends the 9th (else a rank still waiting
  // for 8 may already see 9).
  ASSERT_TRUE(r.Barrier().ok());
  // Outside a pass the same call lends the array.
  ASSERT_TRUE(r.SendRsrBytes(data, peer, HandlerId::Of("answer")).ok());
  EXPECT_EQ(ZeroCopySends(r), 1u);
  ASSERT_TRUE(testing::WaitFor([&] { return answers.load() == 9; })) << answers.load();
  ASSERT_TRUE(r.Barrier().ok());
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(MpiZeroCopyWorker, PeerLeavesWhileLent) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  constexpr auto kStall = std::chrono::milliseconds(500);
  // No progress thread on either rank: rank 1 takes nothing until it finalizes, and rank 0
  // sees rank 1's goodbye in the pass its wait runs after the send completed.
  auto rt = Runtime::Init(MpiOptions(/*progress_thread=*/false));
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    return (*ep)->RegisterHandler("large", HandlerKind::kNonThreaded, [](Rsr&) {}).status();
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    std::this_thread::sleep_for(kStall);
    EXPECT_TRUE(r.Finalize().ok());  // takes the pending payload, then says goodbye
    EXPECT_EQ(r.impl()->ModuleCounters("mpi")["close_dropped_large_frames"], 1u);
    return;
  }
  auto sp = r.WorldStartpoint(1, kCtx, kEp);
  ASSERT_TRUE(sp.ok());
  std::vector<uint8_t> data(kLarge, 0x5a);
  const auto t0 = std::chrono::steady_clock::now();
  Status st = r.SendRsrBytes(data, *sp, HandlerId::Of("large"));
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_GE(waited, kStall / 2);  // it waited for rank 1's Close
  EXPECT_EQ(ZeroCopySends(r), 1u);
  // Finalize reports the frame the peer dropped (its goodbye came first).
  (void)r.Finalize();
}

using testing::RunUnderMpirun;

TEST(MpiTest, ZeroCopyBothWaysAtOnce) {
  RunUnderMpirun(2, "MpiZeroCopyWorker.BothWaysAtOnce");
  RunUnderMpirun(2, "MpiZeroCopyWorker.BothWaysAtOnce", "UKAI_MPI_ITEST_ZERO_COPY=0");
  RunUnderMpirun(2, "MpiZeroCopyWorker.BothWaysAtOnce", "UKAI_MPI_ITEST_ZERO_COPY_MAX=1048575");
}

TEST(MpiTest, ZeroCopyHandlersCopy) { RunUnderMpirun(2, "MpiZeroCopyWorker.HandlersCopy"); }

TEST(MpiTest, ZeroCopyPeerLeavesWhileLent) {
  RunUnderMpirun(2, "MpiZeroCopyWorker.PeerLeavesWhileLent");
}

#else

TEST(MpiTest, ZeroCopyNotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
