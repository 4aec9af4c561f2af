// Crash-safe handlers and handler names: a handler that throws or reads a failed unpack is
// caught at the dispatch boundary, counted and reported (ErrorEvent), and the runtime goes
// on; an RSR to a context, endpoint or handler the target lacks is refused back to the
// sender; invalid handler names are errors. Run over every module of the conformance list.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "conformance_modules.h"
#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

class HandlerErrors : public ::testing::TestWithParam<ConformanceModule> {
 protected:
  void SetUp() override {
    fabric_ = NewInprocFabric();
    for (int i = 0; i < 2; ++i) {
      RuntimeOptions o = ModuleOptions(GetParam().name, fabric_);
      o.on_error = [this, i](const ErrorEvent& e) {
        std::lock_guard<std::mutex> lock(mu_);
        errors_[i].push_back(e);
      };
      auto rt = Runtime::Init(o);
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rts_[i] = std::move(*rt);
      auto ctx = rts_[i]->CreateContext({.name = "c" + std::to_string(i)});
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      ep_[i] = *(*ctx)->CreateEndpoint();
    }
  }
  void TearDown() override {
    for (auto& rt : rts_) {
      if (rt) {
        EXPECT_TRUE(rt->Finalize().ok());
      }
    }
  }
  std::vector<ErrorEvent> Errors(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_[i];
  }
  size_t ErrorCount(int i) {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_[i].size();
  }

  std::shared_ptr<InprocFabric> fabric_;
  std::unique_ptr<Runtime> rts_[2];
  Endpoint* ep_[2] = {nullptr, nullptr};
  std::mutex mu_;
  std::vector<ErrorEvent> errors_[2];
};

// The dynamic_join example's `join` handler dereferences its unpacks; an empty payload made
// it throw std::bad_variant_access out of the handler and abort the server. Now the
// failed access is caught, counted, reported with the unpack error, and the next RSR runs.
TEST_P(HandlerErrors, FailedUnpackInAHandlerIsCaughtCountedAndReported) {
  for (HandlerKind kind : {HandlerKind::kNonThreaded, HandlerKind::kThreaded}) {
    const std::string name = kind == HandlerKind::kThreaded ? "join_threaded" : "join";
    std::atomic<int> joined{0};
    ASSERT_TRUE(ep_[1]
                    ->RegisterHandler(name, kind,
                                      [&](Rsr& m) {
                                        std::string who = *m.reader().GetString();
                                        Startpoint back = *m.reader().GetStartpoint();
                                        if (!who.empty() && back.valid()) ++joined;
                                      })
                    .ok());
    const size_t before = ErrorCount(1);
    const Startpoint sp = ep_[1]->MakeStartpoint();
    ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), sp, HandlerId::Of(name)).ok());
    ASSERT_TRUE(WaitFor([&] { return ErrorCount(1) == before + 1; }));
    ErrorEvent e = Errors(1).back();
    EXPECT_EQ(e.kind, ErrorEvent::Kind::kHandlerFailed);
    EXPECT_EQ(e.peer, rts_[0]->id());
    EXPECT_EQ(e.handler, HandlerId::Of(name));
    EXPECT_EQ(e.handler_name, name);
    EXPECT_EQ(e.context, sp.context());
    EXPECT_EQ(e.endpoint, sp.endpoint());
    EXPECT_EQ(e.reason.code(), StatusCode::kOutOfRange) << e.reason.ToString();
    EXPECT_NE(e.reason.message().find("handler '" + name + "' used a failed Result"),
              std::string::npos)
        << e.reason.ToString();
    // The runtime goes on: a well-formed RSR runs.
    Buffer ok;
    ok.PutString("pid 1");
    ok.PutStartpoint(ep_[0]->MakeStartpoint());
    ASSERT_TRUE(rts_[0]->SendRsr(std::move(ok), sp, HandlerId::Of(name)).ok());
    ASSERT_TRUE(WaitFor([&] { return joined.load() == 1; }));
  }
  EXPECT_EQ(rts_[1]->stats().handler_errors, 2u);
  EXPECT_EQ(rts_[1]->stats().rsr_delivered, 4u);
}

TEST_P(HandlerErrors, ExceptionsOfEveryKindAreCaught) {
  std::atomic<int> calls{0};
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("std", HandlerKind::kThreaded,
                                    [&](Rsr&) {
                                      ++calls;
                                      throw std::runtime_error("disk full");
                                    })
                  .ok());
  ASSERT_TRUE(ep_[1]
                  ->RegisterHandler("other", HandlerKind::kNonThreaded,
                                    [&](Rsr&) {
                                      ++calls;
                                      throw 42;
                                    })
                  .ok());
  const Startpoint sp = ep_[1]->MakeStartpoint();
  ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), sp, HandlerId::Of("std")).ok());
  ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), sp, HandlerId::Of("other")).ok());
  ASSERT_TRUE(WaitFor([&] { return ErrorCount(1) == 2; }));
  std::vector<std::string> reasons;
  for (const ErrorEvent& e : Errors(1)) reasons.push_back(e.reason.ToString());
  std::sort(reasons.begin(), reasons.end());
  EXPECT_EQ(reasons[0], "internal error: handler 'other' threw a non-standard exception");
  EXPECT_EQ(reasons[1], "internal error: handler 'std' threw: disk full");
  EXPECT_EQ(rts_[1]->stats().handler_errors, 2u);
  EXPECT_EQ(calls.load(), 2);
}

// An RSR to a handler (or endpoint, or context) the target lacks is refused back to the
// sender: an ErrorEvent there naming the target's handlers, and a counter on both sides.
TEST_P(HandlerErrors, UnknownTargetsAreRefusedBackToTheSender) {
  std::atomic<int> got{0};
  ASSERT_TRUE(
      ep_[1]->RegisterHandler("join", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  ASSERT_TRUE(
      ep_[1]->RegisterHandler("quit", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  const Startpoint good = ep_[1]->MakeStartpoint();
  const Startpoint bad_ep(good.shared_descriptors(), good.context(), 999);
  const Startpoint bad_ctx(good.shared_descriptors(), 999, good.endpoint());
  ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), good, HandlerId::Of("jion")).ok());
  ASSERT_TRUE(WaitFor([&] { return ErrorCount(0) == 1; }));
  ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), bad_ep, HandlerId::Of("join")).ok());
  ASSERT_TRUE(WaitFor([&] { return ErrorCount(0) == 2; }));
  ASSERT_TRUE(rts_[0]->SendRsr(Buffer(), bad_ctx, HandlerId::Of("join")).ok());
  ASSERT_TRUE(WaitFor([&] { return ErrorCount(0) == 3; }));
  std::vector<ErrorEvent> e = Errors(0);
  for (const ErrorEvent& x : e) {
    EXPECT_EQ(x.kind, ErrorEvent::Kind::kRsrRefused);
    EXPECT_EQ(x.peer, rts_[1]->id());
    EXPECT_EQ(x.reason.code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(e[0].handler, HandlerId::Of("jion"));
  EXPECT_EQ(e[0].context, good.context());
  EXPECT_EQ(e[0].endpoint, good.endpoint());
  const std::string who = "runtime " + internal::Hex(rts_[1]->id());
  EXPECT_EQ(e[0].reason.message(),
            who + " has no handler " + std::to_string(HandlerId::Of("jion").value) +
                " on endpoint " + std::to_string(good.endpoint()) + " of context " +
                std::to_string(good.context()) + " (its handlers: join, quit)");
  EXPECT_EQ(e[1].reason.message(),
            who + " has no endpoint 999 in context " + std::to_string(good.context()));
  EXPECT_EQ(e[2].endpoint, good.endpoint());
  EXPECT_EQ(e[2].reason.message(), who + " has no context 999");
  EXPECT_EQ(rts_[0]->stats().rsr_refused, 3u);
  // The target counts a refused RSR after it queued the refusal, so the sender can hold
  // its third refusal before the target's count moves.
  EXPECT_TRUE(WaitFor([&] { return rts_[1]->stats().rsr_dropped == 3u; }))
      << "rsr_dropped stayed at " << rts_[1]->stats().rsr_dropped;
  EXPECT_EQ(got.load(), 0);
  EXPECT_TRUE(Errors(1).empty());
}

INSTANTIATE_TEST_SUITE_P(Modules, HandlerErrors, ::testing::ValuesIn(kConformanceModules),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HandlerNames, InvalidNamesAreErrorsAtRegistrationAndLookup) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"inproc"};
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Endpoint* ep = *(*(*rt)->CreateContext({.name = "c"}))->CreateEndpoint();
  auto noop = [](Rsr&) {};
  for (std::string bad : {std::string(""), std::string("join "), std::string("jo\tin"),
                          std::string("a\0b", 3), std::string(257, 'x')}) {
    Result<HandlerId> r = ep->RegisterHandler(bad, HandlerKind::kNonThreaded, noop);
    ASSERT_FALSE(r.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("RegisterHandler: handler name", 0), 0u)
        << r.status().ToString();
  }
  EXPECT_EQ(ep->RegisterHandler("join ", HandlerKind::kNonThreaded, noop).status().message(),
            "RegisterHandler: handler name 'join ': character 4 is not one of A-Z a-z 0-9 _ . : "
            "/ -");
  ASSERT_TRUE(ep->RegisterHandler("kv.get", HandlerKind::kNonThreaded, noop).ok());
  ASSERT_TRUE(ep->RegisterHandler("kv/put-2:x_y", HandlerKind::kNonThreaded, noop).ok());
  Result<HandlerId> found = ep->FindHandler("kv.get");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, HandlerId::Of("kv.get"));
  Result<HandlerId> typo = ep->FindHandler("kv.gte");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(typo.status().message(), "endpoint " + std::to_string(ep->id()) +
                                         " has no handler 'kv.gte' (its handlers: kv.get, "
                                         "kv/put-2:x_y)");
  EXPECT_EQ(ep->FindHandler("kv get").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*rt)->Finalize().ok());
}

}  // namespace
}  // namespace ukai::rt::testing
