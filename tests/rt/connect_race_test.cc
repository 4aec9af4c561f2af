// A peer that sends on our new connection before we recorded it gets its answers: the
// reply's way back (RuntimeImpl::PeerById) waits for a connect in progress on another
// thread instead of answering "no way back" (which lost the reply, so the peer's request
// timed out: in-process shm groups hung 30 s in their set-up under load).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

using namespace std::chrono_literals;

TEST(RequestsDuringConnect, ARequestOverOurConnectionBeforeItIsRecordedIsAnswered) {
  ShmPair p = MakeShmPair({});
  ASSERT_TRUE(p.a && p.b && p.ep_b);
  auto ctx_a = p.a->CreateContext({.name = "a"});
  ASSERT_TRUE(ctx_a.ok()) << ctx_a.status().ToString();
  auto ep_a = (*ctx_a)->CreateEndpoint();
  ASSERT_TRUE(ep_a.ok()) << ep_a.status().ToString();
  ASSERT_TRUE((*ep_a)
                  ->RegisterHandler("ask", HandlerKind::kNonThreaded,
                                    [](Rsr& m) { (void)m.Reply(Buffer()); })
                  .ok());
  ASSERT_TRUE(p.ep_b->RegisterHandler("sink", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  const Startpoint sp_a = (*ep_a)->MakeStartpoint();
  const Startpoint sp_b = p.ep_b->MakeStartpoint();

  std::optional<ReplyFuture> asked;
  bool b_adopted = false;
  int hook_calls = 0;
  p.a->impl()->SetConnectHookForTesting([&](RuntimeId) {
    ++hook_calls;
    // b adopts a's new connection and asks over it at once, before a recorded it; a's
    // progress thread handles the request while this thread is still here.
    b_adopted = WaitFor([&] { return p.b->impl()->KnowsPeer(p.a->id()); });
    asked.emplace(p.b->Request(Buffer(), sp_a, HandlerId::Of("ask"), {.timeout = 10s}));
    std::this_thread::sleep_for(200ms);
  });
  ASSERT_TRUE(p.a->SendRsr(Buffer(), sp_b, HandlerId::Of("sink")).ok());
  EXPECT_EQ(hook_calls, 1);
  ASSERT_TRUE(b_adopted) << "b never adopted a's connection";
  ASSERT_TRUE(asked.has_value());
  const Reply& r = asked->Wait();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  p.a->impl()->SetConnectHookForTesting({});
}

}  // namespace
}  // namespace ukai::rt::testing
