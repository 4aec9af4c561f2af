// The shm module's own paths beyond the conformance suite: chunked frames through a small
// ring, cross-memory-attach frames (shm.cma_bytes), both with non-threaded (in place) and
// threaded (owned) handlers, per-sender order across the paths, bad parameters, and no
// shared-memory names left behind.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"

namespace ukai::rt {
namespace {

using Pair = testing::ShmPair;
Pair MakePair(const std::map<std::string, std::string>& params) {
  return testing::MakeShmPair(params);
}

uint8_t Pattern(size_t i, uint32_t seq) { return static_cast<uint8_t>(i * 131 + seq * 7 + 3); }

// Sends messages of the given sizes (each tagged with its sequence number) and checks
// content and order in a handler of `kind`; *counters: the sender's shm counters at the end.
void SendAndCheckInto(const std::map<std::string, std::string>& params, HandlerKind kind,
                      const std::vector<size_t>& sizes, std::map<std::string, uint64_t>* counters) {
  Pair p = MakePair(params);
  ASSERT_NE(p.ep_b, nullptr);
  // Non-threaded handlers run in send order; threaded ones only start in that order and
  // may overlap (runtime.hpp), so for them only content and completeness are checked.
  const bool ordered = kind == HandlerKind::kNonThreaded;
  std::atomic<uint32_t> next{0}, done{0};
  std::atomic<int> bad{0};
  std::vector<std::atomic<int>> seen(sizes.size());
  ASSERT_TRUE(p.ep_b
                  ->RegisterHandler("m", kind,
                                    [&](Rsr& m) {
                                      auto seq = m.reader().GetU32();
                                      auto v = m.reader().GetBytes();
                                      bool good = seq.ok() && v.ok() && *seq < sizes.size() &&
                                                  v->size() == sizes[*seq] &&
                                                  (!ordered || *seq == next.load());
                                      for (size_t i = 0; good && i < v->size(); i += 1021) {
                                        good = (*v)[i] == Pattern(i, *seq);
                                      }
                                      if (good) ++seen[*seq];
                                      if (!good) ++bad;
                                      ++next;
                                      ++done;
                                    })
                  .ok());
  const Startpoint sp = p.ep_b->MakeStartpoint();
  ASSERT_EQ(*p.a->SelectModule(sp), "shm");
  for (uint32_t seq = 0; seq < sizes.size(); ++seq) {
    std::vector<uint8_t> data(sizes[seq]);
    for (size_t i = 0; i < data.size(); ++i) data[i] = Pattern(i, seq);
    Buffer b;
    b.PutU32(seq);
    b.PutBytes(data);
    ASSERT_TRUE(p.a->SendRsr(std::move(b), sp, HandlerId::Of("m")).ok());
  }
  ASSERT_TRUE(
      testing::WaitFor([&] { return next.load() == sizes.size(); }, std::chrono::seconds(60)))
      << next.load() << " of " << sizes.size();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(p.b->stats().frames_rejected, 0u);
  *counters = p.a->impl()->ModuleCounters("shm");
  EXPECT_TRUE(p.a->Finalize().ok());
  EXPECT_TRUE(p.b->Finalize().ok());
}

// SendAndCheckInto, returning the sender's shm counters (empty when a check stopped it).
std::map<std::string, uint64_t> SendAndCheck(const std::map<std::string, std::string>& params,
                                             HandlerKind kind, const std::vector<size_t>& sizes) {
  std::map<std::string, uint64_t> counters;
  SendAndCheckInto(params, kind, sizes, &counters);
  return counters;
}

const std::vector<size_t> kMixed = {10,      70000, 3,       300000, 1 << 20, 5,
                                    3 << 20, 64,    200000,  7,      9000,    (1 << 20) + 17,
                                    1,       12345, 5 << 20, 2};

TEST(ShmModuleTest, ChunkedFramesThroughASmallRingInPlace) {
  // 64 KiB rings: everything above ~32 KiB goes in chunks; CMA and staging off.
  SendAndCheck({{"shm.ring_bytes", "65536"}, {"shm.cma_bytes", "0"}, {"shm.stage_bytes", "0"}},
               HandlerKind::kNonThreaded, kMixed);
}

TEST(ShmModuleTest, ChunkedFramesThreaded) {
  SendAndCheck({{"shm.ring_bytes", "65536"},
                {"shm.cma_bytes", "0"},
                {"shm.stage_bytes", "0"},
                {"shm.chunk_bytes", "4096"}},
               HandlerKind::kThreaded, kMixed);
}

TEST(ShmModuleTest, CrossMemoryAttachFrames) {
  SendAndCheck({{"shm.cma_bytes", "65536"}, {"shm.stage_bytes", "0"}}, HandlerKind::kNonThreaded,
               kMixed);
  SendAndCheck({{"shm.cma_bytes", "65536"}, {"shm.stage_bytes", "0"}}, HandlerKind::kThreaded,
               kMixed);
}

// Heap frames staged in the pool (the default from 64 KiB): in place for non-threaded
// handlers, copies for threaded ones; with a pool of 1 MiB most large frames find it
// exhausted and go by CMA or the ring instead, in order with the staged ones.
TEST(ShmModuleTest, StagedHeapFrames) {
  // kMixed holds 7 frames of 64 KiB or more; the pool of 256 MiB takes them all.
  for (HandlerKind kind : {HandlerKind::kNonThreaded, HandlerKind::kThreaded}) {
    auto c = SendAndCheck({}, kind, kMixed);
    EXPECT_EQ(c["pool_frames_staged"], 7u);
    EXPECT_EQ(c["pool_frames_sent"], 7u);
  }
  EXPECT_EQ(SendAndCheck({{"shm.stage_bytes", "0"}}, HandlerKind::kNonThreaded,
                         kMixed)["pool_frames_staged"],
            0u);
  // A pool of 1 MiB (one 5 MiB frame never fits): whatever did not fit went another way.
  for (const char* cma : {"65536", "0"}) {
    auto c = SendAndCheck({{"shm.pool_bytes", "1048576"}, {"shm.cma_bytes", cma}},
                          HandlerKind::kNonThreaded, kMixed);
    EXPECT_GE(c["pool_frames_staged"], 1u) << cma;
    EXPECT_LT(c["pool_frames_staged"], 7u) << cma;
    EXPECT_GE(c["pool_failures"], 1u) << cma;
  }
}

TEST(ShmModuleTest, BadParametersAreErrors) {
  for (auto [key, value] : {std::pair{"shm.ring_bytes", "1000"}, std::pair{"shm.ring_bytes", "x"},
                            std::pair{"shm.chunk_bytes", "10"}, std::pair{"shm.cma_bytes", "-3"},
                            std::pair{"shm.stage_bytes", "1e6"}}) {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"shm"};
    o.params[key] = value;
    auto rt = Runtime::Init(o);
    EXPECT_FALSE(rt.ok()) << key << "=" << value;
    if (!rt.ok()) {
      EXPECT_NE(rt.status().message().find(key), std::string::npos) << rt.status().ToString();
    }
  }
}

TEST(ShmModuleTest, NoSharedMemoryNamesLeftBehind) {
  SendAndCheck({}, HandlerKind::kNonThreaded, {1, 2, 3});
  const std::string prefix = "ukai-shm-" + std::to_string(getpid()) + "-";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_NE(e.path().filename().string().rfind(prefix, 0), 0u) << e.path();
  }
}

// Progress threads that block right away (spin_us = 0): every RSR finds the receiver's
// engine asleep or about to sleep, so it must arm the doorbell before blocking
// (Module::PrepareToBlock) and the sender must ring it: no message may wait for a timeout.
TEST(ShmModuleTest, RsrsWakeABlockedProgressEngine) {
  std::unique_ptr<Runtime> rt[2];
  for (auto& r : rt) {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"shm"};
    o.spin_us = 0;
    auto made = Runtime::Init(o);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    r = std::move(*made);
  }
  std::atomic<int> got{0};
  auto ctx = rt[1]->CreateContext({.name = "b"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("m", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  const Startpoint sp = ep->MakeStartpoint();
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the receiver blocks
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(rt[0]->SendRsr(Buffer(), sp, HandlerId::Of("m")).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return got.load() == i + 1; })) << "message " << i;
    // Below the engine's 100 ms poll timeout (which a lost wake-up would wait for, the
    // engine having gone to sleep right after the previous message): the doorbell woke it.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(80)) << i;
  }
}

// Both runtimes connect at once (two channels per pair), one streams more than its ring
// holds and finalizes: the orderly-leave event comes after every RSR was handled.
TEST(ShmModuleTest, GoodbyeAfterTheLastRecordWithTwoChannels) {
  constexpr int kCount = 200;
  for (int round = 0; round < 3; ++round) {
    std::atomic<int> got{0}, got_at_event{-1};
    std::unique_ptr<Runtime> rt[2];
    for (int i = 0; i < 2; ++i) {
      RuntimeOptions o;
      o.bootstrap = "single";
      o.modules = {"shm"};
      o.spin_us = 50;
      if (i == 0) {
        o.on_peer_event = [&](const PeerEvent& e) {
          if (e.orderly) got_at_event = got.load();
        };
      }
      auto made = Runtime::Init(o);
      ASSERT_TRUE(made.ok()) << made.status().ToString();
      rt[i] = std::move(*made);
    }
    Endpoint* ep[2] = {};
    for (int i = 0; i < 2; ++i) {
      auto ctx = rt[i]->CreateContext({.name = "c"});
      ep[i] = *(*ctx)->CreateEndpoint();
      ASSERT_TRUE(
          ep[i]->RegisterHandler("n", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
    }
    const Startpoint to0 = ep[0]->MakeStartpoint(), to1 = ep[1]->MakeStartpoint();
    std::thread connect1([&] { ASSERT_TRUE(rt[1]->SelectModule(to0).ok()); });
    ASSERT_TRUE(rt[0]->SelectModule(to1).ok());
    connect1.join();
    std::vector<uint8_t> chunk(64 << 10, 1);  // 12.5 MiB in all: more than a 4 MiB ring
    for (int k = 0; k < kCount; ++k) {
      Buffer b;
      b.PutBytes(chunk);
      ASSERT_TRUE(rt[1]->SendRsr(std::move(b), to0, HandlerId::Of("n")).ok());
    }
    ASSERT_TRUE(rt[1]->Finalize().ok());
    ASSERT_TRUE(testing::WaitFor([&] { return got_at_event.load() >= 0; })) << round;
    EXPECT_EQ(got_at_event.load(), kCount) << "round " << round;
  }
}

}  // namespace
}  // namespace ukai::rt
