// Flow control of the mpi module under `mpirun -n 2`: rank 1 does not progress (no
// progress thread, it sleeps) for a while; rank 0 sends 256 KiB RSRs to it (over MPI's
// eager limit: an MPI_Isend completes only once rank 1 receives it) with send_queue_bytes =
// 1 MiB. TrySendRsr must return kWouldBlock once the queue is full, having accepted at most
// the limit plus one frame, and a blocking SendRsr must wait; once rank 1 progresses,
// every accepted RSR arrives, in order, and both Finalize OK.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

#if UKAI_HAVE_MPI

constexpr ContextId kCtx = 1;
constexpr EndpointId kEp = 1;
constexpr uint64_t kLimit = uint64_t{1} << 20;
constexpr size_t kPayload = size_t{256} << 10;
constexpr auto kStall = std::chrono::seconds(3);  // rank 1 neither progresses nor polls

Buffer Numbered(uint32_t i) {
  Buffer b;
  b.PutU32(i);
  b.PutBytes(std::vector<uint8_t>(kPayload, 0x5a));
  return b;
}

// Rank 0: fills the queue to the stalled rank 1, checks the bound, then a blocking SendRsr
// waits until rank 1 progresses; finally tells rank 1 how many RSRs to expect.
void SendToStalledRank(Runtime& r, const Startpoint& sp) {
  const auto start = std::chrono::steady_clock::now();
  uint32_t accepted = 0;
  Status st;
  for (;;) {
    Buffer b = Numbered(accepted);
    st = r.TrySendRsr(b, sp, HandlerId::Of("seq"));
    if (!st.ok()) break;
    ++accepted;
    ASSERT_LT(accepted, 1000u) << "TrySendRsr never said kWouldBlock";
  }
  ASSERT_EQ(st.code(), StatusCode::kWouldBlock) << st.ToString();
  ASSERT_LT(std::chrono::steady_clock::now() - start, kStall / 2) << "too slow to test";
  const uint64_t frame = Numbered(0).size() + 56;  // payload + RSR header, about
  EXPECT_GE(accepted * frame, kLimit) << "kWouldBlock before the queue was full";
  EXPECT_LE(accepted * frame, kLimit + frame) << "more than the limit plus one frame queued";
  std::atomic<bool> returned{false};
  std::thread blocked([&] {
    EXPECT_TRUE(r.SendRsr(Numbered(accepted), sp, HandlerId::Of("seq")).ok());
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(returned.load()) << "SendRsr did not block on a full queue";
  blocked.join();  // returns once rank 1 progresses
  EXPECT_GE(std::chrono::steady_clock::now() - start, kStall / 2);
  Buffer total;
  total.PutU32(accepted + 1);
  ASSERT_TRUE(r.SendRsr(std::move(total), sp, HandlerId::Of("total")).ok());
  std::printf("[ mpi ] %u RSRs of %zu B accepted before kWouldBlock (limit %llu B)\n", accepted,
              kPayload, static_cast<unsigned long long>(kLimit));
}

TEST(MpiFlowWorker, StalledRankBoundsTheSender) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  std::atomic<uint32_t> next{0}, total{0};
  std::atomic<bool> in_order{true};
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  o.send_queue_bytes = kLimit;
  o.flush_timeout_ms = 30000;
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  const bool receiver = rank_env != nullptr && std::string(rank_env) == "1";
  if (receiver) o.progress_thread = false;  // progresses only when it calls Progress()
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ASSERT_EQ(r.size(), 2);
  ASSERT_EQ(r.rank() == 1, receiver);
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    auto a = (*ep)->RegisterHandler("seq", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      auto v = rsr.reader().GetU32();
      if (!v.ok() || *v != next.load()) in_order = false;
      ++next;
    });
    auto b = (*ep)->RegisterHandler("total", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      auto v = rsr.reader().GetU32();
      total = v.ok() ? *v : 1u << 31;
    });
    return a.ok() && b.ok() ? Status::Ok() : Status::Internal("register");
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  if (!receiver) {
    auto sp = r.WorldStartpoint(1, kCtx, kEp);
    ASSERT_TRUE(sp.ok()) << sp.status().ToString();
    SendToStalledRank(r, *sp);
  } else {
    std::this_thread::sleep_for(kStall);  // the stall: no progress, no MPI call
    ASSERT_TRUE(testing::WaitFor([&] {
      r.Progress();
      return total.load() != 0 && next.load() == total.load();
    })) << next.load()
        << " of " << total.load();
    EXPECT_TRUE(in_order.load());
  }
  ASSERT_TRUE(r.Barrier().ok());
  const Status fin = r.Finalize();
  EXPECT_TRUE(fin.ok()) << fin.ToString();
}

TEST(MpiTest, FlowControlBoundsASenderToAStalledRank) {
  testing::RunUnderMpirun(2, "MpiFlowWorker.StalledRankBoundsTheSender");
}

#else

TEST(MpiTest, FlowControlNotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
