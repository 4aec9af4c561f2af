// Threaded handlers that cannot starve (src/rt/core/thread_pool.h): handlers that block in
// a nested Request's Wait do not deadlock the pool, whether it may grow
// (handler_threads_max, default 64) or not (then the waiting threads run queued handlers).
// 16 concurrent requests, each 8 levels deep, bouncing between two runtimes.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr uint32_t kDepth = 8;
constexpr int kConcurrent = 16;

class HandlerStarvation : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto fabric = NewInprocFabric();
    for (int i = 0; i < 2; ++i) {
      RuntimeOptions o = ModuleOptions("inproc", fabric);
      o.handler_threads = 2;
      o.handler_threads_max = GetParam();
      auto rt = Runtime::Init(o);
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rt_[i] = std::move(*rt);
      ep_[i] = *(*rt_[i]->CreateContext({.name = "c"}))->CreateEndpoint();
    }
    // "nest": u32 depth d -> u32 d + 1, asking the other runtime for d - 1 first (threaded:
    // the handler blocks in the nested request's Wait).
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(ep_[i]
                      ->RegisterHandler("nest", HandlerKind::kThreaded,
                                        [this, i](Rsr& m) {
                                          const uint32_t d = *m.reader().GetU32();
                                          uint32_t below = 0;
                                          if (d > 0) {
                                            Buffer q;
                                            q.PutU32(d - 1);
                                            ReplyFuture f = rt_[i]->Request(
                                                std::move(q), ep_[1 - i]->MakeStartpoint(),
                                                HandlerId::Of("nest"),
                                                {.timeout = std::chrono::seconds(60)});
                                            const Reply& r = f.Wait();
                                            if (!r.ok()) {
                                              (void)m.Fail(r.status());
                                              return;
                                            }
                                            below = *r.reader().GetU32();
                                          }
                                          Buffer a;
                                          a.PutU32(below + 1);
                                          (void)m.Reply(std::move(a));
                                        })
                      .ok());
    }
  }
  void TearDown() override {
    for (auto& rt : rt_) EXPECT_TRUE(rt->Finalize().ok());
  }

  std::unique_ptr<Runtime> rt_[2];
  Endpoint* ep_[2] = {};
};

TEST_P(HandlerStarvation, EightLevelsOfNestingWithSixteenConcurrentRequests) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<ReplyFuture> futures;
  for (int k = 0; k < kConcurrent; ++k) {
    Buffer q;
    q.PutU32(kDepth);
    futures.push_back(rt_[0]->Request(std::move(q), ep_[1]->MakeStartpoint(), HandlerId::Of("nest"),
                                      {.timeout = std::chrono::seconds(120)}));
  }
  for (ReplyFuture& f : futures) {
    const Reply& r = f.Wait();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r.reader().GetU32(), kDepth + 1);
  }
  // Far below any request timeout: nothing waited for a timeout to free a thread.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  const uint64_t peak =
      std::max(rt_[0]->stats().handler_threads_peak, rt_[1]->stats().handler_threads_peak);
  if (GetParam() > 2) {
    EXPECT_GT(peak, 2u);  // it grew
    EXPECT_LE(peak, static_cast<uint64_t>(GetParam()));
  } else {
    EXPECT_EQ(peak, 2u);  // it could not: waiting threads ran the queued handlers
  }
}

// 64: the default handler_threads_max (the pool grows); 2: no growth (helping only).
INSTANTIATE_TEST_SUITE_P(MaxThreads, HandlerStarvation, ::testing::Values(64, 2),
                         [](const auto& info) { return "max" + std::to_string(info.param); });

}  // namespace
}  // namespace ukai::rt::testing
