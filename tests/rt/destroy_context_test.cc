// DestroyContext against running handlers: after it returned no handler of the context
// runs any more (non-threaded ones on the dispatch route cache are not counted per
// context; DestroyContext waits for the progress pass instead), and a non-threaded handler
// may destroy another context without deadlocking on its own progress pass.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

struct Two {
  std::unique_ptr<Runtime> a, b;
};

Two MakeTwo(bool progress_thread) {
  auto fabric = NewInprocFabric();
  Two t;
  for (auto* slot : {&t.a, &t.b}) {
    RuntimeOptions o = ModuleOptions("inproc", fabric);
    o.progress_thread = progress_thread;
    auto r = Runtime::Init(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) *slot = std::move(*r);
  }
  return t;
}

TEST(DestroyContextTest, NoHandlerRunsAfterItReturned) {
  for (int round = 0; round < 20; ++round) {
    Two t = MakeTwo(/*progress_thread=*/true);
    std::atomic<bool> destroyed{false}, late{false};
    std::atomic<int> got{0};
    Endpoint* ep = nullptr;
    auto ctx = t.b->CreateContext({.name = "c", .init = [&](Context& c) {
                                     ep = *c.CreateEndpoint();
                                     return ep
                                         ->RegisterHandler(
                                             "n", HandlerKind::kNonThreaded,
                                             [&](Rsr&) {
                                               ++got;
                                               // Long enough to be caught
                                               // running by DestroyContext.
                                               const auto until = std::chrono::steady_clock::now() +
                                                                  std::chrono::microseconds(20);
                                               while (std::chrono::steady_clock::now() < until) {
                                               }
                                               if (destroyed.load()) late = true;
                                             })
                                         .status();
                                   }});
    ASSERT_TRUE(ctx.ok());
    const Startpoint sp = ep->MakeStartpoint();
    std::atomic<bool> stop{false};
    std::thread sender([&] {
      while (!stop.load()) {
        if (!t.a->SendRsr(Buffer(), sp, HandlerId::Of("n")).ok()) break;
      }
    });
    ASSERT_TRUE(WaitFor([&] { return got.load() > 100; }));
    ASSERT_TRUE(t.b->DestroyContext(*ctx).ok());
    destroyed = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    stop = true;
    sender.join();
    EXPECT_FALSE(late.load()) << "round " << round;
  }
}

TEST(DestroyContextTest, NonThreadedHandlerDestroysAnotherContext) {
  for (bool progress_thread : {true, false}) {
    Two t = MakeTwo(progress_thread);
    std::atomic<bool> exited{false};
    std::atomic<int> result{-1};
    auto victim = t.b->CreateContext({.name = "victim", .exit = [&](Context&) { exited = true; }});
    ASSERT_TRUE(victim.ok());
    Context* v = *victim;
    Endpoint* ep = nullptr;
    auto killer = t.b->CreateContext(
        {.name = "killer", .init = [&](Context& c) {
           ep = *c.CreateEndpoint();
           return ep
               ->RegisterHandler("kill", HandlerKind::kNonThreaded,
                                 [&](Rsr& m) { result = m.runtime().DestroyContext(v).ok(); })
               .status();
         }});
    ASSERT_TRUE(killer.ok());
    ASSERT_TRUE(t.a->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("kill")).ok());
    ASSERT_TRUE(WaitFor([&] {
      if (!progress_thread) t.b->Progress();
      return result.load() != -1;
    })) << "progress_thread "
        << progress_thread;
    EXPECT_EQ(result.load(), 1);
    EXPECT_TRUE(exited.load());
  }
}

// The peer-event callback runs inside a progress pass too: it may destroy a context.
TEST(DestroyContextTest, PeerEventCallbackDestroysAContext) {
  auto fabric = NewInprocFabric();
  std::atomic<int> result{-1};
  Context* victim = nullptr;
  Runtime* self = nullptr;
  RuntimeOptions oa = ModuleOptions("inproc", fabric);
  oa.on_peer_event = [&](const PeerEvent&) { result = self->DestroyContext(victim).ok(); };
  auto a = Runtime::Init(oa);
  auto b = Runtime::Init(ModuleOptions("inproc", fabric));
  ASSERT_TRUE(a.ok() && b.ok());
  self = a->get();
  victim = *(*a)->CreateContext({.name = "victim"});
  auto ctx = (*b)->CreateContext({.name = "c"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("n", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  ASSERT_TRUE((*a)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("n")).ok());
  ASSERT_TRUE((*b)->Finalize().ok());  // a is told that b left
  ASSERT_TRUE(WaitFor([&] { return result.load() != -1; }));
  EXPECT_EQ(result.load(), 1);
}

}  // namespace
}  // namespace ukai::rt::testing
