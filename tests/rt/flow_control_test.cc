// Flow control and flushing, quickly, over inproc: a receiver whose progress nobody drives
// takes nothing, so the sender's per-peer queue fills: TrySendRsr says kWouldBlock (the
// buffer untouched), SendRsr blocks until the receiver progresses, and Finalize reports
// what the receiver never took. (tests/rt/flow_control_itest.cc: tcp and shm with a
// stopped receiver process.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr size_t kPayload = 1000;

struct Pair {
  std::unique_ptr<Runtime> sender, receiver;
  Endpoint* ep = nullptr;
  std::atomic<int> got{0};
};

// The receiver has no progress thread: frames stay in its inbox until receiver->Progress().
void MakePair(Pair* p, uint64_t queue_limit, int flush_timeout_ms) {
  auto fabric = NewInprocFabric();
  RuntimeOptions so = ModuleOptions("inproc", fabric);
  so.send_queue_bytes = queue_limit;
  so.flush_timeout_ms = flush_timeout_ms;
  RuntimeOptions ro = ModuleOptions("inproc", fabric);
  ro.progress_thread = false;
  auto s = Runtime::Init(so);
  auto r = Runtime::Init(ro);
  ASSERT_TRUE(s.ok() && r.ok());
  p->sender = std::move(*s);
  p->receiver = std::move(*r);
  auto ctx = p->receiver->CreateContext({.name = "r"});
  ASSERT_TRUE(ctx.ok());
  p->ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(p->ep->RegisterHandler("n", HandlerKind::kNonThreaded, [p](Rsr&) { ++p->got; }).ok());
}

Buffer Payload() {
  Buffer b;
  b.PutBytes(std::vector<uint8_t>(kPayload, 1));
  return b;
}

TEST(FlowControl, TrySendRsrWouldBlockWhenThePeersQueueIsFull) {
  Pair p;
  MakePair(&p, /*queue_limit=*/16 * kPayload, /*flush_timeout_ms=*/5000);
  const Startpoint sp = p.ep->MakeStartpoint();
  int accepted = 0;
  Status st;
  for (; accepted < 1000; ++accepted) {
    Buffer b = Payload();
    st = p.sender->TrySendRsr(b, sp, HandlerId::Of("n"));
    if (!st.ok()) {
      EXPECT_EQ(b.size(), Payload().size()) << "a refused buffer is left as it was";
      break;
    }
    EXPECT_EQ(b.block().size(), 0u) << "an accepted buffer was moved out";
  }
  EXPECT_EQ(st.code(), StatusCode::kWouldBlock) << st.ToString();
  EXPECT_EQ(accepted, 16);  // 16 frames of kPayload + header reach the limit
  EXPECT_EQ(p.sender->stats().send_errors, 0u);
  // The receiver takes them: room again, and everything accepted arrives.
  while (p.receiver->Progress() > 0) {
  }
  Buffer b = Payload();
  EXPECT_TRUE(p.sender->TrySendRsr(b, sp, HandlerId::Of("n")).ok());
  ASSERT_TRUE(WaitFor([&] {
    p.receiver->Progress();
    return p.got.load() == accepted + 1;
  }));
  EXPECT_TRUE(p.sender->Finalize().ok());
}

TEST(FlowControl, SendRsrBlocksUntilThePeerTakesItsQueue) {
  Pair p;
  MakePair(&p, /*queue_limit=*/16 * kPayload, /*flush_timeout_ms=*/5000);
  const Startpoint sp = p.ep->MakeStartpoint();
  std::atomic<int> accepted{0};
  std::atomic<bool> done{false};
  std::thread sender([&] {
    for (int i = 0; i < 100; ++i) {
      if (!p.sender->SendRsr(Payload(), sp, HandlerId::Of("n")).ok()) break;
      ++accepted;
    }
    done = true;
  });
  ASSERT_TRUE(WaitFor([&] { return accepted.load() >= 16; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(accepted.load(), 16) << "SendRsr must block while the peer's queue is full";
  EXPECT_FALSE(done.load());
  ASSERT_TRUE(WaitFor([&] {
    p.receiver->Progress();
    return done.load();
  }));
  sender.join();
  EXPECT_EQ(accepted.load(), 100);
  ASSERT_TRUE(WaitFor([&] {
    p.receiver->Progress();
    return p.got.load() == 100;
  }));
  EXPECT_TRUE(p.sender->Finalize().ok());
}

// SendOptions::timeout bounds the wait: kTimeout (the RSR not sent) after it, not before;
// a request's wait for room counts against RequestOptions::timeout the same way.
TEST(FlowControl, ABlockedSendRsrTimesOut) {
  Pair p;
  MakePair(&p, /*queue_limit=*/16 * kPayload, /*flush_timeout_ms=*/0);
  const Startpoint sp = p.ep->MakeStartpoint();
  for (int i = 0; i < 16; ++i)
    ASSERT_TRUE(p.sender->SendRsr(Payload(), sp, HandlerId::Of("n")).ok());
  const auto start = std::chrono::steady_clock::now();
  const Status st = p.sender->SendRsr(Payload(), sp, HandlerId::Of("n"),
                                      {.timeout = std::chrono::milliseconds(150)});
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("no room within 150 ms"), std::string::npos) << st.ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  ReplyFuture f = p.sender->Request(Payload(), sp, HandlerId::Of("n"),
                                    {.timeout = std::chrono::milliseconds(100)});
  EXPECT_EQ(f.Wait().status().code(), StatusCode::kTimeout) << f.Wait().status().ToString();
  EXPECT_EQ(
      p.sender
          ->SendRsr(Payload(), sp, HandlerId::Of("n"), {.timeout = std::chrono::milliseconds(-1)})
          .code(),
      StatusCode::kInvalidArgument);
  // Nothing of the timed-out sends reached the queue: the receiver gets the 16.
  ASSERT_TRUE(WaitFor([&] {
    p.receiver->Progress();
    return p.got.load() == 16;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.receiver->Progress();
  EXPECT_EQ(p.got.load(), 16);
}

TEST(FlowControl, FinalizeReportsWhatThePeerNeverTook) {
  Pair p;
  MakePair(&p, /*queue_limit=*/0, /*flush_timeout_ms=*/100);  // no limit: 40 wait
  const Startpoint sp = p.ep->MakeStartpoint();
  for (int i = 0; i < 40; ++i)
    ASSERT_TRUE(p.sender->SendRsr(Payload(), sp, HandlerId::Of("n")).ok());
  const auto start = std::chrono::steady_clock::now();
  const Status st = p.sender->Finalize();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("40 frames"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("flush_timeout_ms"), std::string::npos) << st.ToString();
  // The time it actually waited, then the limit.
  EXPECT_NE(st.message().find(" ms of 100 ms, flush_timeout_ms"), std::string::npos)
      << st.ToString();
  EXPECT_TRUE(p.sender->Finalize().ok());  // idempotent
}

TEST(FlowControl, FinalizeWaitsForThePeerToTakeEverything) {
  Pair p;
  MakePair(&p, /*queue_limit=*/0, /*flush_timeout_ms=*/10000);
  const Startpoint sp = p.ep->MakeStartpoint();
  for (int i = 0; i < 40; ++i)
    ASSERT_TRUE(p.sender->SendRsr(Payload(), sp, HandlerId::Of("n")).ok());
  std::atomic<bool> stop{false};
  std::thread receiver([&] {  // starts taking frames only after Finalize began
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    while (!stop.load()) p.receiver->Progress();
  });
  const Status st = p.sender->Finalize();
  stop = true;
  receiver.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(p.got.load(), 40);
}

TEST(FlowControl, OptionsAndEnvironment) {
  RuntimeOptions o;
  char a0[] = "prog", a1[] = "--ukai-send-queue-bytes=65536", a2[] = "--ukai-flush-timeout-ms=0";
  char* argv[] = {a0, a1, a2, nullptr};
  int argc = 3;
  ASSERT_TRUE(ParseRuntimeArgs(argc, argv, &o).ok());
  EXPECT_EQ(o.send_queue_bytes, 65536u);
  EXPECT_EQ(o.flush_timeout_ms, 0);
  char b1[] = "--ukai-send-queue-bytes=-1";
  char* bad[] = {a0, b1, nullptr};
  argc = 2;
  const Status st = ParseRuntimeArgs(argc, bad, &o);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--ukai-send-queue-bytes"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace ukai::rt::testing
