// The mpi module under mpirun: MpiTest runs `mpirun -n 2` on this very test binary with a
// worker filter; each worker initialises a Runtime with the "mpi" bootstrap and module,
// checks rank/size and the module choice, exchanges ordered RSRs (non-threaded and
// threaded; some larger than a receive slot, split in two messages), a 16 MiB message, and
// meets the other rank in a barrier (MpiTest.ReceiveSlotSizes: the same with other receive
// slot sizes, mpi.slot_bytes; MpiTest.WindowOffOnOneRank: mpi.window=off on one rank, no
// one-sided window on either). MpiTest.OrderlyLeave
// runs 3 ranks: rank 1 finalizes early; ranks 0 and 2 get an orderly peer event for it,
// their sends to it fail with kUnavailable, and they keep talking to each other.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
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

TEST(MpiWorker, PingPongOrderAndLargeMessages) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  constexpr int kCount = 500;
  constexpr size_t kLarge = size_t{16} << 20;
  std::atomic<int> next{0}, threaded{0}, large_ok{0};
  std::atomic<bool> in_order{true};
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  // UKAI_MPI_ITEST_SLOTS="A,B": mpi.slot_bytes of rank 0 and rank 1 (MpiTest.ReceiveSlotSizes);
  // UKAI_MPI_ITEST_WINDOW="A,B": mpi.window of rank 0 and rank 1 (MpiTest.WindowOffOnOneRank).
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  const bool rank1 = rank_env != nullptr && std::string(rank_env) == "1";
  auto per_rank = [rank1](const std::string& all) {
    const size_t comma = all.find(',');
    return rank1 ? all.substr(comma + 1) : all.substr(0, comma);
  };
  if (const char* slots = std::getenv("UKAI_MPI_ITEST_SLOTS"); slots != nullptr) {
    o.params["mpi.slot_bytes"] = per_rank(slots);
  }
  bool window_expected = true;  // the job's window exists unless a rank turned it off
  if (const char* window = std::getenv("UKAI_MPI_ITEST_WINDOW"); window != nullptr) {
    o.params["mpi.window"] = per_rank(window);
    window_expected = std::string(window).find("off") == std::string::npos;
  }
  // UKAI_MPI_ITEST_RECYCLE="A,B": mpi.recycle_bytes of rank 0 and rank 1 (default: the
  // module's, 32 MiB); UKAI_MPI_ITEST_HUGE="A,B": mpi.huge_pages (default on).
  bool recycling = true;
  if (const char* recycle = std::getenv("UKAI_MPI_ITEST_RECYCLE"); recycle != nullptr) {
    o.params["mpi.recycle_bytes"] = per_rank(recycle);
    recycling = per_rank(recycle) != "0";
  }
  bool huge = true;
  if (const char* h = std::getenv("UKAI_MPI_ITEST_HUGE"); h != nullptr) {
    o.params["mpi.huge_pages"] = per_rank(h);
    huge = per_rank(h) == "on";
  }
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ASSERT_EQ(r.size(), 2);
  EXPECT_EQ(r.impl()->ModuleCounters("mpi")["one_sided_window"], window_expected ? 1u : 0u)
      << "rank " << r.rank();
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    auto a = (*ep)->RegisterHandler("seq", HandlerKind::kNonThreaded, [&](Rsr& rsr) {
      auto v = rsr.reader().GetU32();
      if (!v.ok() || static_cast<int>(*v) != next.load()) in_order = false;
      if (v.ok() && *v % 50 == 25) {  // the split ones arrive whole
        auto pad = rsr.reader().GetBytes();
        bool whole = pad.ok() && pad->size() == (100 << 10);
        for (size_t i = 0; whole && i < pad->size(); i += 97) {
          whole = (*pad)[i] == static_cast<uint8_t>(*v);
        }
        if (!whole) in_order = false;
      }
      ++next;
    });
    auto b = (*ep)->RegisterHandler("slow", HandlerKind::kThreaded, [&](Rsr&) { ++threaded; });
    auto c2 = (*ep)->RegisterHandler("large", HandlerKind::kThreaded, [&](Rsr& rsr) {
      auto bytes = rsr.reader().GetBytes();
      bool ok = bytes.ok() && bytes->size() == kLarge;
      for (size_t i = 0; ok && i < kLarge; i += 4099) ok = (*bytes)[i] == static_cast<uint8_t>(i);
      if (ok) ++large_ok;
    });
    return a.ok() && b.ok() && c2.ok() ? Status::Ok() : Status::Internal("register");
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  const int peer = 1 - r.rank();
  auto sp = r.WorldStartpoint(peer, kCtx, kEp);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  auto module = r.SelectModule(*sp);
  ASSERT_TRUE(module.ok());
  EXPECT_EQ(*module, "mpi");
  for (int i = 0; i < kCount; ++i) {
    // Every 50th is larger than a receive slot (64 KiB): it travels as a head and a tail
    // (mpi_module.cc) and must keep its place among the small ones. Those and every 7th
    // come from NewBuffer (recycled blocks with mpi.recycle_bytes > 0), the others from
    // the heap.
    Buffer b = i % 50 == 25 ? r.NewBuffer((100 << 10) + 16)
               : i % 7 == 0 ? r.NewBuffer(64)
                            : Buffer();
    b.PutU32(static_cast<uint32_t>(i));
    if (i % 50 == 25) b.PutBytes(std::vector<uint8_t>(100 << 10, static_cast<uint8_t>(i)));
    ASSERT_TRUE(r.SendRsr(std::move(b), *sp, HandlerId::Of("seq")).ok());
    if (i % 10 == 0) {
      ASSERT_TRUE(r.SendRsr(Buffer(), *sp, HandlerId::Of("slow")).ok());
    }
  }
  std::vector<uint8_t> big(kLarge);
  for (size_t i = 0; i < kLarge; ++i) big[i] = static_cast<uint8_t>(i);
  Buffer lb;
  lb.PutBytes(big);
  ASSERT_TRUE(r.SendRsr(std::move(lb), *sp, HandlerId::Of("large")).ok());
  ASSERT_TRUE(testing::WaitFor([&] {
    return next.load() == kCount && threaded.load() == kCount / 10 && large_ok.load() == 1;
  })) << next.load()
      << " " << threaded.load() << " " << large_ok.load();
  EXPECT_TRUE(in_order.load());
  ASSERT_TRUE(r.Barrier().ok());
  // Every recycled block comes back once MPI completed its send (the progress thread tests
  // them) or its frame was dispatched; the next NewBuffer of that size reuses one. The
  // 16 MiB frame from the peer was received into a huge-page block (unless this rank
  // turned them off), the split 100 KiB ones into heap blocks of the same source.
  auto counters = [&r] { return r.impl()->ModuleCounters("mpi"); };
  if (recycling) {
    EXPECT_GE(counters()["recycled_allocated"], 2u);
    if (huge) {
      EXPECT_GE(counters()["recycled_mapped"], 1u);
    } else {
      EXPECT_EQ(counters()["recycled_mapped"], 0u);
    }
    EXPECT_TRUE(testing::WaitFor([&] { return counters()["recycled_blocks_in_use"] == 0; }))
        << counters()["recycled_blocks_in_use"];
    const uint64_t reused = counters()["recycled_reused"];
    Buffer again = r.NewBuffer(100 << 10);
    EXPECT_EQ(counters()["recycled_reused"], reused + 1);
    EXPECT_EQ(counters()["recycled_blocks_in_use"], 1u);
  } else {
    EXPECT_EQ(counters().count("recycled_allocated"), 0u);
  }
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(MpiWorker, OrderlyLeave) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  std::atomic<int> pings{0}, after{0};
  std::mutex mu;
  std::vector<PeerEvent> events;
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  o.on_peer_event = [&](const PeerEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  };
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  ASSERT_EQ(r.size(), 3);
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    auto a = (*ep)->RegisterHandler("ping", HandlerKind::kNonThreaded, [&](Rsr&) { ++pings; });
    auto b = (*ep)->RegisterHandler("after", HandlerKind::kNonThreaded, [&](Rsr&) { ++after; });
    return a.ok() && b.ok() ? Status::Ok() : Status::Internal("register");
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());
  std::vector<Startpoint> sps;
  for (int i = 0; i < 3; ++i) {
    auto sp = r.WorldStartpoint(i, kCtx, kEp);
    ASSERT_TRUE(sp.ok()) << sp.status().ToString();
    sps.push_back(*sp);
  }
  for (int i = 0; i < 3; ++i) {
    if (i != r.rank()) {
      ASSERT_TRUE(r.SendRsr(Buffer(), sps[i], HandlerId::Of("ping")).ok());
    }
  }
  ASSERT_TRUE(testing::WaitFor([&] { return pings.load() == 2; })) << pings.load();
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) {
    EXPECT_TRUE(r.Finalize().ok());  // says goodbye; MPI_Finalize waits for the others
    return;
  }
  const RuntimeId left = sps[1].runtime();
  ASSERT_TRUE(testing::WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !events.empty();
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].peer, left);
    EXPECT_EQ(events[0].module, "mpi");
    EXPECT_TRUE(events[0].orderly);
  }
  Status gone = r.SendRsr(Buffer(), sps[1], HandlerId::Of("after"));
  EXPECT_EQ(gone.code(), StatusCode::kUnavailable) << gone.ToString();
  const int other = 2 - r.rank();  // 0 <-> 2 go on
  ASSERT_TRUE(r.SendRsr(Buffer(), sps[other], HandlerId::Of("after")).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return after.load() == 1; })) << after.load();
  EXPECT_TRUE(r.Finalize().ok());
}

using testing::RunUnderMpirun;

TEST(MpiTest, ModuleWorksUnderMpirunWithTwoProcesses) {
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages");
}

// Receive slots of other sizes (mpi.slot_bytes), different on the two ranks: each sender
// splits by the receiver's slots (from its descriptor). Rank 0's 4 KiB slots make rank 1
// split the 100 KiB RSRs and rank 1's 1 MiB + 4 KiB slots let them arrive whole.
TEST(MpiTest, ReceiveSlotSizes) {
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_SLOTS=4096,1052672");
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages",
                 "UKAI_MPI_ITEST_SLOTS=1052672,1052672");
}

// Runtime::Init with the mpi module parameter `key` set to each of `values` fails with
// kInvalidArgument naming the key and the value (before MPI is needed: no mpirun).
void ExpectRefused(const std::string& key, std::initializer_list<const char*> values) {
  for (const char* v : values) {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"mpi"};
    o.params[key] = v;
    auto rt = Runtime::Init(o);
    ASSERT_FALSE(rt.ok()) << key << "=" << v;
    EXPECT_EQ(rt.status().code(), StatusCode::kInvalidArgument) << rt.status().ToString();
    EXPECT_NE(rt.status().message().find(key + "=" + v), std::string::npos)
        << rt.status().ToString();
  }
}

TEST(MpiTest, BadSlotSizeIsAnError) {
  ExpectRefused("mpi.slot_bytes", {"100", "x", "-5", "67108865"});
}

// mpi.window=off on one rank only: Init agrees on it (MPI_Allreduce), so neither rank
// creates the one-sided window (counter one_sided_window 0 on both; the default run above
// checks 1), and frames of every size still travel in order.
TEST(MpiTest, WindowOffOnOneRank) {
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_WINDOW=on,off");
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_WINDOW=off,on");
}

// NewBuffer from recycled blocks (mpi.recycle_bytes) on both ranks, then on rank 1 only
// with a bound smaller than one huge-page block (rank 0 sends and receives into heap
// blocks): the same traffic arrives whole and in order, and every recycled block comes
// back (the worker checks).
TEST(MpiTest, RecycleBytesPerRank) {
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages",
                 "UKAI_MPI_ITEST_RECYCLE=33554432,33554432");
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_RECYCLE=0,1048576");
}

// Huge-page blocks on one rank only (mpi.huge_pages=off on the other): the traffic is the
// same, and only the rank that kept them on maps any (the worker checks recycled_mapped).
TEST(MpiTest, HugePagesOffOnOneRank) {
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_HUGE=on,off");
  RunUnderMpirun(2, "MpiWorker.PingPongOrderAndLargeMessages", "UKAI_MPI_ITEST_HUGE=off,on");
}

TEST(MpiTest, BadHugePagesValueIsAnError) {
  ExpectRefused("mpi.huge_pages", {"yes", "1", "ON", "of"});
}

TEST(MpiTest, BadRecycleBytesIsAnError) {
  ExpectRefused("mpi.recycle_bytes", {"x", "-1", "68719476737", "1k"});
}

TEST(MpiTest, BadZeroCopyBytesIsAnError) {
  ExpectRefused("mpi.zero_copy_bytes", {"x", "-1", "67174401", "256k"});
  ExpectRefused("mpi.zero_copy_max_bytes", {"y", "-2", "67174401", "1M"});
}

TEST(MpiTest, BadWindowValueIsAnError) { ExpectRefused("mpi.window", {"yes", "1", "On", "of"}); }

TEST(MpiTest, OrderlyLeaveIsAPeerEventAndTheOthersGoOn) {
  RunUnderMpirun(3, "MpiWorker.OrderlyLeave");
}

#else

TEST(MpiTest, NotBuilt) { GTEST_SKIP() << "Open MPI was not found at build time"; }

#endif

}  // namespace
}  // namespace ukai::rt
