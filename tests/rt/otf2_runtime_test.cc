// OTF2 recording through a Runtime (--ukai-otf2; src/rt/core/tracing.cc): one process alone
// ("single" bootstrap: it merges its own archive in Finalize) with three contexts talking over
// inproc. Every kind of traffic is exercised — RSRs from main() and from handlers, requests
// answered at once, a request that times out and is answered late, an RSR refused for an
// unknown handler, a barrier, RMA put/get/atomics (software path: its internal RSRs must not
// show as messages) and a multicast — then the archive is read back: a location per context,
// every message sent is received exactly once, each location in time order, RMA operations
// with their completions. Also: off by default, the option and environment spellings, and an
// Init that fails before anything runs when the directory already holds an archive.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "otf2_read.h"
#include "rma_test_util.h"
#include "rt/trace/archive.h"
#include "rt/trace/recorder.h"
#include "rt_test_util.h"
#include "scratch_path.h"
#include "ukai/rt/multicast.hpp"
#include "ukai/rt/rma.hpp"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

using testing::Otf2Trace;

class Otf2RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::ScratchPath(
        "otf2rt_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  RuntimeOptions Options() const {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"inproc"};
    o.spin_us = 50;
    o.otf2 = dir_;
    return o;
  }
  std::string dir_;
};

// The point-to-point events of `kind` that carry `handler` (communicator 0: RSRs and
// requests; answers travel on trace::kAnswerComm with their request's id as tag).
size_t Tagged(const Otf2Trace& t, const std::string& kind, std::string_view handler) {
  size_t n = 0;
  for (const auto& [id, l] : t.locations)
    for (const auto& e : l.events)
      n += e.kind == kind && e.comm == trace::kWorldComm && e.tag == HandlerId::Of(handler).value;
  return n;
}
size_t Answers(const Otf2Trace& t, const std::string& kind) {
  size_t n = 0;
  for (const auto& [id, l] : t.locations)
    for (const auto& e : l.events) n += e.kind == kind && e.comm == trace::kAnswerComm;
  return n;
}

// The traffic of EveryKindOfTrafficIsRecordedAndMatched, in phases. Contexts: a (1: "fwd"
// forwards to b, "ask" answers, "defer" keeps the answer for later), b (2: "sink" counts,
// threaded), c (3: nothing but a multicast member).
class Traffic {
 public:
  explicit Traffic(Runtime& r) : r_(r) {}

  void MakeContexts() {
    auto b = r_.CreateContext({.name = "b", .id = 2, .init = [&](Context& c) {
                                 auto ep = c.CreateEndpoint({.id = 1});
                                 if (!ep.ok()) return ep.status();
                                 return (*ep)
                                     ->RegisterHandler("sink", HandlerKind::kThreaded,
                                                       [&](Rsr&) { ++sunk_; })
                                     .status();
                               }});
    ASSERT_TRUE(b.ok());
    b_ = *b;
    to_b_ = b_->FindEndpoint(1)->MakeStartpoint();
    auto a =
        r_.CreateContext({.name = "a", .id = 1, .init = [&](Context& c) { return ServeA(c); }});
    ASSERT_TRUE(a.ok());
    a_ = *a;
    to_a_ = a_->FindEndpoint(1)->MakeStartpoint();
    auto c = r_.CreateContext({.name = "c", .id = 3});
    ASSERT_TRUE(c.ok());
    c_ = *c;
  }

  // RSRs from main() forwarded by a to b; requests waited on; a request with a callback
  // that sends an RSR to b.
  void RsrsAndRequests() {
    for (int i = 0; i < 10; ++i) {
      Buffer buf;
      buf.PutBytes(std::vector<uint8_t>(32, static_cast<uint8_t>(i)));
      ASSERT_TRUE(r_.SendRsr(std::move(buf), to_a_, HandlerId::Of("fwd")).ok());
    }
    ASSERT_TRUE(testing::WaitFor([&] { return sunk_.load() == 10; }));
    for (uint64_t i = 0; i < 5; ++i) {
      Buffer q;
      q.PutU64(i);
      Reply rep = r_.Request(std::move(q), to_a_, HandlerId::Of("ask")).Wait();
      ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    }
    std::atomic<bool> called{false};
    Buffer q;
    q.PutU64(41);
    ASSERT_TRUE(r_.Request(std::move(q), to_a_, HandlerId::Of("ask"), [&](Reply& rep) {
                    Buffer b;
                    b.PutU8(1);
                    EXPECT_TRUE(rep.ok() &&
                                r_.SendRsr(std::move(b), to_b_, HandlerId::Of("sink")).ok());
                    called = true;
                  }).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return called.load() && sunk_.load() == 11; }));
  }

  // A request that times out and is answered late; an RSR refused; a barrier.
  void LateAnswerRefusalBarrier() {
    Reply late = r_.Request(Buffer(), to_a_, HandlerId::Of("defer"),
                            {.timeout = std::chrono::milliseconds(30)})
                     .Wait();
    EXPECT_EQ(late.status().code(), StatusCode::kTimeout);
    {
      std::lock_guard<std::mutex> lock(held_mu_);
      ASSERT_EQ(held_.size(), 1u);
      Buffer answer;
      answer.PutU32(7);
      ASSERT_TRUE(held_[0].Send(std::move(answer)).ok());
    }
    ASSERT_TRUE(r_.SendRsr(Buffer(), to_a_, HandlerId::Of("nosuch")).ok());
    ASSERT_TRUE(testing::WaitFor([&] { return r_.stats().rsr_refused == 1; }));
    ASSERT_TRUE(r_.Barrier().ok());
  }

  // RMA from main() to b's memory (the software path over inproc) and back: 4 puts, 1 get,
  // 2 atomics.
  void RmaOperations() {
    auto rma_a = Rma::Create(*a_);
    auto rma_b = Rma::Create(*b_);
    ASSERT_TRUE(rma_a.ok() && rma_b.ok());
    testing::Pages mem(65536);
    auto key = (*rma_b)->Register(mem.span());
    ASSERT_TRUE(key.ok());
    const std::vector<uint8_t> data = testing::Pattern(10000, 1);
    ASSERT_TRUE((*rma_a)->PutSync(*key, 0, data).ok());
    std::vector<uint8_t> back(5000);
    ASSERT_TRUE((*rma_a)->GetSync(*key, 0, back).ok());
    EXPECT_TRUE(std::equal(back.begin(), back.end(), data.begin()));
    ASSERT_TRUE((*rma_a)->FetchOp(*key, 16384, AtomicOpcode::kAdd, 5).ok());
    ASSERT_TRUE((*rma_a)->CompareSwap(*key, 16384, 5, 9).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*rma_a)->Put(*key, 20000 + i * 100, data).ok());
    ASSERT_TRUE((*rma_a)->Flush().ok());
  }

  // A multicast from a to b and c.
  void Multicast() {
    std::atomic<int> delivered{0};
    auto mc_a = Multicaster::Attach(*a_, {});
    auto mc_b = Multicaster::Attach(*b_, [&](const MulticastDelivery&) { ++delivered; });
    auto mc_c = Multicaster::Attach(*c_, [&](const MulticastDelivery&) { ++delivered; });
    ASSERT_TRUE(mc_a.ok() && mc_b.ok() && mc_c.ok());
    const std::vector<Startpoint> group = {(*mc_b)->startpoint(), (*mc_c)->startpoint()};
    auto sent = (*mc_a)->Multicast(group, std::vector<uint8_t>(1000, 3), {});
    ASSERT_TRUE(sent.ok() && sent->all_acked());
    EXPECT_EQ(delivered.load(), 2);
  }

 private:
  Status ServeA(Context& c) {
    auto ep = c.CreateEndpoint({.id = 1});
    if (!ep.ok()) return ep.status();
    // Forwards by SendRsrBytes (recorded as SendRsr's RSRs are: CheckMessages).
    auto fwd = (*ep)->RegisterHandler("fwd", HandlerKind::kNonThreaded, [&](Rsr& m) {
      Buffer out;
      out.PutBytes(m.payload());
      m.runtime().SendRsrBytes(out.payload(), to_b_, HandlerId::Of("sink"));
    });
    auto ask = (*ep)->RegisterHandler("ask", HandlerKind::kThreaded, [](Rsr& m) {
      Buffer reply;
      reply.PutU64(*m.reader().GetU64() + 1);
      m.Reply(std::move(reply));
    });
    auto defer = (*ep)->RegisterHandler("defer", HandlerKind::kNonThreaded, [&](Rsr& m) {
      std::lock_guard<std::mutex> lock(held_mu_);
      held_.push_back(m.TakeReplier());
    });
    return fwd.ok() && ask.ok() && defer.ok() ? Status::Ok() : Status::Internal("register");
  }

  Runtime& r_;
  Context *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  Startpoint to_a_, to_b_;
  std::atomic<int> sunk_{0};
  std::mutex held_mu_;
  std::vector<Replier> held_;
};

// Where the messages of Traffic were recorded (location slots: b 1, a 2, c 3, progress 4).
void CheckMessages(Otf2Trace& t) {
  const uint64_t loc_a = trace::LocationId(0, 2), loc_b = trace::LocationId(0, 1);
  size_t fwd_at_a = 0, sink_from_a = 0, sink_at_b = 0;
  for (const auto& e : t.locations[loc_a].events) {
    fwd_at_a += e.kind == "MpiIrecv" && e.tag == HandlerId::Of("fwd").value && e.bytes == 37;
    sink_from_a += e.kind == "MpiSend" && e.tag == HandlerId::Of("sink").value && e.bytes == 42;
  }
  for (const auto& e : t.locations[loc_b].events)
    sink_at_b += e.kind == "MpiIrecv" && e.tag == HandlerId::Of("sink").value;
  // PutBytes of 32 bytes: 37 payload bytes (type tag, length); a's forward of those: 42.
  EXPECT_EQ(fwd_at_a, 10u);
  EXPECT_EQ(sink_from_a, 10u);
  EXPECT_EQ(sink_at_b, 11u);
  // The progress location: the callback request's answer, then the callback's RSR; the late
  // answer; the RSR for "nosuch" dropped at a (this runtime), its refusal sent from here and
  // received here.
  std::vector<std::string> progress;
  for (const auto& e : t.locations[trace::LocationId(0, 4)].events) {
    if (e.kind == "MpiIrecvRequest") continue;
    progress.push_back(e.kind + " " +
                       (e.comm == trace::kAnswerComm ? "answer" : std::to_string(e.tag)));
    if (e.kind == "MpiIrecv" && (e.request & trace::kAnswerRequestBit) != 0) {
      // A posted answer's receive: the tag is its request's id.
      EXPECT_EQ(e.tag, trace::AnswerTag(e.request & ~trace::kAnswerRequestBit));
    }
  }
  const auto tag = [](std::string_view h) { return std::to_string(HandlerId::Of(h).value); };
  EXPECT_EQ(progress, (std::vector<std::string>{"MpiIrecv answer", "MpiSend " + tag("sink"),
                                                "MpiIrecv answer", "MpiIrecv " + tag("nosuch"),
                                                "MpiSend answer", "MpiIrecv answer"}));
  EXPECT_EQ(Tagged(t, "MpiSend", "ask"), 6u);     // 6 requests (their answers: below)
  EXPECT_EQ(Tagged(t, "MpiSend", "defer"), 1u);   // the request (its late answer: below)
  EXPECT_EQ(Tagged(t, "MpiSend", "nosuch"), 1u);  // the RSR (its refusal: below)
  // Answers: 6 of "ask", the late one of "defer", the refusal, the multicast's and the RMA
  // layer's none (RSRs and RMA records); each received once.
  EXPECT_EQ(Answers(t, "MpiSend"), 8u);
  EXPECT_EQ(Answers(t, "MpiIrecv"), 8u);
  EXPECT_EQ(Tagged(t, "MpiSend", "ukai.rma.request"), 0u);
  EXPECT_EQ(Tagged(t, "MpiSend", "ukai.rma.reply"), 0u);
  EXPECT_GE(Tagged(t, "MpiSend", "ukai.mc.data"), 2u);
  EXPECT_GE(Tagged(t, "MpiSend", "ukai.mc.ack"), 1u);
  size_t cancelled_on_main = 0, barrier_on_main = 0;
  for (const auto& e : t.locations[0].events) {
    cancelled_on_main += e.kind == "MpiRequestCancelled";  // the timed-out request
    barrier_on_main += e.kind == "MpiCollectiveEnd";
  }
  EXPECT_EQ(cancelled_on_main, 1u);
  EXPECT_EQ(barrier_on_main, 1u);
}

// The RMA records of Traffic: each operation completes once, on its location.
void CheckRma(const Otf2Trace& t) {
  EXPECT_EQ(t.Count("RmaPut"), 4u);
  EXPECT_EQ(t.Count("RmaGet"), 1u);
  EXPECT_EQ(t.Count("RmaAtomic"), 2u);
  EXPECT_EQ(t.Count("RmaOpCompleteNonBlocking") + t.Count("RmaOpCompleteBlocking"), 7u);
  for (const auto& [id, l] : t.locations) {
    std::map<uint64_t, int> open;
    for (const auto& e : l.events) {
      if (e.kind == "RmaPut" || e.kind == "RmaGet" || e.kind == "RmaAtomic") ++open[e.request];
      if (e.kind.starts_with("RmaOpComplete")) --open[e.request];
    }
    for (const auto& [match, n] : open) EXPECT_EQ(n, 0) << "matching id " << match;
  }
}

TEST_F(Otf2RuntimeTest, EveryKindOfTrafficIsRecordedAndMatched) {
  auto made = Runtime::Init(Options());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  {
    Traffic traffic(**made);
    for (auto phase :
         {&Traffic::MakeContexts, &Traffic::RsrsAndRequests, &Traffic::LateAnswerRefusalBarrier,
          &Traffic::RmaOperations, &Traffic::Multicast}) {
      (traffic.*phase)();
      ASSERT_FALSE(HasFatalFailure());
    }
    ASSERT_TRUE((*made)->Finalize().ok());  // rank 0 of 1 merges its archive
  }
  Otf2Trace t = testing::ReadOtf2(trace::AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(testing::CheckOrder(t), "");
  std::vector<std::string> names;
  for (const auto& [id, l] : t.locations) names.push_back(l.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"rank 0 main", "rank 0 context 2 'b'", "rank 0 context 1 'a'",
                                      "rank 0 context 3 'c'", "rank 0 progress"}));
  // Every message sent was received exactly once.
  EXPECT_EQ(testing::Messages(t, true), testing::Messages(t, false));
  EXPECT_EQ(t.unknown.size(), 0u);
  CheckMessages(t);
  CheckRma(t);
}

TEST_F(Otf2RuntimeTest, OffByDefaultAndSpelledLikeTheOtherOptions) {
  EXPECT_TRUE(RuntimeOptions{}.otf2.empty());
  RuntimeOptions o = Options();
  o.otf2.clear();
  auto r = Runtime::Init(o);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->Finalize().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_));  // nothing written

  char a0[] = "p", a1[] = "--ukai-otf2=/x/y", a2[] = "--ukai-otf2", a3[] = "/z";
  char* argv[] = {a0, a1, nullptr};
  int argc = 2;
  RuntimeOptions parsed;
  ASSERT_TRUE(ParseRuntimeArgs(argc, argv, &parsed).ok());
  EXPECT_EQ(parsed.otf2, "/x/y");
  char* argv2[] = {a0, a2, a3, nullptr};
  argc = 3;
  ASSERT_TRUE(ParseRuntimeArgs(argc, argv2, &parsed).ok());
  EXPECT_EQ(parsed.otf2, "/z");
  char empty[] = "--ukai-otf2=";
  char* argv3[] = {a0, empty, nullptr};
  argc = 2;
  Status bad = ParseRuntimeArgs(argc, argv3, &parsed);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--ukai-otf2"), std::string::npos);
  setenv("UKAI_OTF2", "/from/env", 1);
  RuntimeOptions env;
  ASSERT_TRUE(ApplyRuntimeEnv(&env).ok());
  unsetenv("UKAI_OTF2");
  EXPECT_EQ(env.otf2, "/from/env");
}

TEST_F(Otf2RuntimeTest, InitFailsAtOnceWhenTheDirectoryHoldsAnArchive) {
  std::filesystem::create_directories(dir_);
  std::ofstream(trace::AnchorPath(dir_)) << "an earlier run";
  auto r = Runtime::Init(Options());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("already holds an OTF2 archive"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("--ukai-otf2"), std::string::npos);
}

}  // namespace
}  // namespace ukai::rt
