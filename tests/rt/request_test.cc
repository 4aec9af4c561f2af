// Request/reply (include/ukai/rt/request.hpp) over every module of the conformance list:
// futures and callbacks, Rsr::Reply, deferred answers through a Replier, handler failures
// and missing handlers answered as errors, timeouts, cancellation, and failure of the
// future when the peer fails (a killed process) or leaves, or the requester finalizes.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance_modules.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

using std::chrono::milliseconds;

class Requests : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < 2; ++i) {
      auto rt = Runtime::Init(ModuleOptions(GetParam().name, fabric_));
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rts_[i] = std::move(*rt);
      ep_[i] = *(*rts_[i]->CreateContext({.name = "c" + std::to_string(i)}))->CreateEndpoint();
    }
    // "add": u64 a, u64 b -> u64 a + b (non-threaded); "add_t": the same, threaded.
    for (auto [name, kind] : {std::pair{"add", HandlerKind::kNonThreaded},
                              std::pair{"add_t", HandlerKind::kThreaded}}) {
      ASSERT_TRUE(ep_[1]
                      ->RegisterHandler(name, kind,
                                        [](Rsr& m) {
                                          const uint64_t a = *m.reader().GetU64();
                                          const uint64_t b = *m.reader().GetU64();
                                          Buffer r;
                                          r.PutU64(a + b);
                                          EXPECT_TRUE(m.Reply(std::move(r)).ok());
                                          EXPECT_FALSE(m.Reply(Buffer()).ok());  // once
                                        })
                      .ok());
    }
  }
  void TearDown() override {
    for (auto& rt : rts_) {
      if (rt) {
        EXPECT_TRUE(rt->Finalize().ok());
      }
    }
  }
  static Buffer Pair(uint64_t a, uint64_t b) {
    Buffer buf;
    buf.PutU64(a);
    buf.PutU64(b);
    return buf;
  }
  Startpoint Sp() const { return ep_[1]->MakeStartpoint(); }

  std::shared_ptr<InprocFabric> fabric_;
  std::unique_ptr<Runtime> rts_[2];
  Endpoint* ep_[2] = {nullptr, nullptr};
};

// `{}` as the options picks the future form (the callback form is a template that a braced
// list cannot select): this compiles, and the future gets the reply.
TEST_P(Requests, BracedDefaultOptionsMeanTheFutureForm) {
  ReplyFuture f = rts_[0]->Request(Pair(1, 2), Sp(), HandlerId::Of("add"), {});
  const Reply& r = f.Wait();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r.reader().GetU64(), 3u);
}

TEST_P(Requests, FutureGetsTheHandlersReply) {
  for (const char* h : {"add", "add_t"}) {
    for (uint64_t i = 0; i < 50; ++i) {
      ReplyFuture f = rts_[0]->Request(Pair(i, 1000), Sp(), HandlerId::Of(h));
      const Reply& r = f.Wait();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r.peer(), rts_[1]->id());
      Reader rd = r.reader();
      EXPECT_EQ(*rd.GetU64(), i + 1000);
      EXPECT_TRUE(f.Ready());
      EXPECT_FALSE(f.Cancel());  // completed already
    }
  }
  // Many in flight at once, completed in any order, each with its own answer.
  std::vector<ReplyFuture> fs;
  for (uint64_t i = 0; i < 200; ++i)
    fs.push_back(rts_[0]->Request(Pair(i, i), Sp(), HandlerId::Of("add_t")));
  for (uint64_t i = 0; i < 200; ++i) {
    ASSERT_TRUE(fs[i].Wait().ok());
    EXPECT_EQ(*fs[i].Wait().reader().GetU64(), 2 * i);
  }
}

TEST_P(Requests, CallbackRunsOnceWithTheReply) {
  std::promise<uint64_t> got;
  std::atomic<int> calls{0};
  ASSERT_TRUE(rts_[0]
                  ->Request(Pair(2, 3), Sp(), HandlerId::Of("add"),
                            [&](Reply& r) {
                              ++calls;
                              got.set_value(r.ok() ? *r.reader().GetU64() : 0);
                            })
                  .ok());
  auto fut = got.get_future();
  ASSERT_TRUE(
      WaitFor([&] { return fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }));
  EXPECT_EQ(fut.get(), 5u);
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_FALSE(rts_[0]->Request(Buffer(), Sp(), HandlerId::Of("add"), ReplyCallback()).ok());
}

// Whatever the handler does, the requester gets exactly one answer.
TEST_P(Requests, HandlerFailuresAndMissingHandlersAreAnsweredAsErrors) {
  ASSERT_TRUE(ep_[1]->RegisterHandler("silent", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("fails", HandlerKind::kThreaded,
                                    [](Rsr& m) { m.Fail(Status::NotFound("key 'k'")); })
                  .ok());
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("throws", HandlerKind::kThreaded,
                                    [](Rsr&) { throw std::runtime_error("boom"); })
                  .ok());
  struct Case {
    const char* handler;
    Buffer payload;
    StatusCode code;
    std::string message;
  };
  Case cases[] = {
      {"silent", Buffer(), StatusCode::kFailedPrecondition,
       "handler 'silent' returned without replying"},
      {"fails", Buffer(), StatusCode::kNotFound, "key 'k'"},
      {"throws", Buffer(), StatusCode::kInternal, "handler 'throws' threw: boom"},
      {"add", Buffer(), StatusCode::kOutOfRange, ""},  // a failed unpack, dereferenced
      {"nope", Buffer(), StatusCode::kNotFound, ""},
  };
  for (Case& c : cases) {
    const Reply r = rts_[0]->Request(std::move(c.payload), Sp(), HandlerId::Of(c.handler)).Wait();
    EXPECT_EQ(r.status().code(), c.code) << c.handler << ": " << r.status().ToString();
    if (!c.message.empty()) {
      EXPECT_EQ(r.status().message(), c.message);
    }
    EXPECT_TRUE(r.payload().empty());
  }
  EXPECT_NE(rts_[0]
                ->Request(Buffer(), Sp(), HandlerId::Of("nope"))
                .Wait()
                .status()
                .message()
                .find("has no handler"),
            std::string::npos);
  EXPECT_EQ(rts_[1]->stats().handler_errors, 2u);  // "throws" and the failed unpack
}

TEST_P(Requests, DeferredRepliesTimeoutsAndCancellation) {
  std::mutex mu;
  std::vector<Replier> held;
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("hold", HandlerKind::kNonThreaded,
                                    [&](Rsr& m) {
                                      std::lock_guard<std::mutex> lock(mu);
                                      held.push_back(m.TakeReplier());
                                    })
                  .ok());
  auto held_count = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return held.size();
  };
  // Deferred: answered later from another thread.
  ReplyFuture f = rts_[0]->Request(Buffer(), Sp(), HandlerId::Of("hold"));
  ASSERT_TRUE(WaitFor([&] { return held_count() == 1; }));
  EXPECT_FALSE(f.WaitFor(milliseconds(20)));
  std::thread([&] {
    Buffer b;
    b.PutString("later");
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(held[0].Send(std::move(b)).ok());
    EXPECT_FALSE(held[0].Send(Buffer()).ok());
  }).join();
  ASSERT_TRUE(f.Wait().ok());
  EXPECT_EQ(*f.Wait().reader().GetString(), "later");

  // Timeout: no answer within 100 ms; a late answer is dropped.
  const auto start = std::chrono::steady_clock::now();
  ReplyFuture t =
      rts_[0]->Request(Buffer(), Sp(), HandlerId::Of("hold"), {.timeout = milliseconds(100)});
  EXPECT_EQ(t.Wait().status().code(), StatusCode::kTimeout) << t.Wait().status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
  ASSERT_TRUE(WaitFor([&] { return held_count() == 2; }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(held[1].Send(Buffer()).ok());
  }
  // Cancellation: completes at once with kCancelled, the callback too.
  std::promise<StatusCode> cancelled;
  ReplyFuture c = rts_[0]->Request(Buffer(), Sp(), HandlerId::Of("hold"));
  EXPECT_TRUE(c.Cancel());
  EXPECT_FALSE(c.Cancel());
  EXPECT_EQ(c.Wait().status().code(), StatusCode::kCancelled);
  EXPECT_EQ(t.Wait().status().code(), StatusCode::kTimeout);  // the late answer changed nothing
  // A request that timed out does not answer twice: the next one still works.
  ReplyFuture ok = rts_[0]->Request(Pair(1, 1), Sp(), HandlerId::Of("add"));
  EXPECT_TRUE(ok.Wait().ok());
}

// The peer leaves (Finalize) while it holds requests: they fail with kUnavailable; so do the
// requester's own pending ones when it finalizes.
TEST_P(Requests, PeerLeavingOrFinalizingFailsPendingRequests) {
  std::vector<Replier> held;  // progress thread of rts_[1] only
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("hold", HandlerKind::kNonThreaded,
                                    [&](Rsr& m) { held.push_back(m.TakeReplier()); })
                  .ok());
  ReplyFuture f = rts_[0]->Request(Buffer(), Sp(), HandlerId::Of("hold"));
  EXPECT_FALSE(f.WaitFor(milliseconds(50)));
  ASSERT_TRUE(rts_[1]->Finalize().ok());
  EXPECT_EQ(f.Wait().status().code(), StatusCode::kUnavailable) << f.Wait().status().ToString();
  rts_[1].reset();

  auto rt2 = Runtime::Init(ModuleOptions(GetParam().name, fabric_));
  ASSERT_TRUE(rt2.ok());
  Endpoint* ep2 = *(*(*rt2)->CreateContext({.name = "x"}))->CreateEndpoint();
  std::vector<Replier> held2;
  ASSERT_TRUE(ep2->RegisterHandler("hold", HandlerKind::kNonThreaded,
                                   [&](Rsr& m) { held2.push_back(m.TakeReplier()); })
                  .ok());
  std::atomic<int> callback_status{-1};
  ReplyFuture g = rts_[0]->Request(Buffer(), ep2->MakeStartpoint(), HandlerId::Of("hold"));
  ASSERT_TRUE(rts_[0]
                  ->Request(Buffer(), ep2->MakeStartpoint(), HandlerId::Of("hold"),
                            [&](Reply& r) { callback_status = int(r.status().code()); })
                  .ok());
  EXPECT_FALSE(g.WaitFor(milliseconds(50)));
  ASSERT_TRUE(rts_[0]->Finalize().ok());
  EXPECT_EQ(g.Wait().status().ToString(), "unavailable: runtime finalized");
  EXPECT_EQ(callback_status.load(), int(StatusCode::kUnavailable));
  EXPECT_EQ(rts_[0]
                ->Request(Buffer(), ep2->MakeStartpoint(), HandlerId::Of("hold"))
                .Wait()
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*rt2)->Finalize().ok());
}

// A peer process killed (SIGKILL) while it holds a request: the future fails.
TEST_P(Requests, PeerProcessCrashFailsTheFuture) {
  if (!GetParam().multi_process) GTEST_SKIP() << "single-process module";
  PeerProcess peer(
      {"--ukai-modules=" + std::string(GetParam().name), "--ukai-param=tcp.listen=127.0.0.1:0"});
  ASSERT_TRUE(peer.error().empty()) << peer.error();
  ReplyFuture f = rts_[0]->Request(Buffer(), peer.startpoint(), HandlerId::Of("hold"));
  EXPECT_FALSE(f.WaitFor(milliseconds(100)));
  peer.Kill();
  ASSERT_TRUE(f.WaitFor(std::chrono::seconds(20)));
  EXPECT_EQ(f.Wait().status().code(), StatusCode::kUnavailable) << f.Wait().status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Modules, Requests, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

// Without a progress thread, Wait drives the progress itself.
TEST(RequestsNoProgressThread, WaitProgresses) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  o.progress_thread = false;
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok());
  Endpoint* ep = *(*(*rt)->CreateContext({.name = "c"}))->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("echo", HandlerKind::kNonThreaded, [](Rsr& m) {
                  m.Reply(Buffer());
                }).ok());
  ReplyFuture f = (*rt)->Request(Buffer(), ep->MakeStartpoint(), HandlerId::Of("echo"));
  EXPECT_TRUE(f.Wait().ok()) << f.Wait().status().ToString();
  EXPECT_TRUE((*rt)->Finalize().ok());
}

}  // namespace
}  // namespace ukai::rt::testing
