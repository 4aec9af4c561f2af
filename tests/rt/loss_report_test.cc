// Finalize's loss report over inproc, tcp and shm (two runtimes of this process): frames a
// departed peer never took are classified (every channel is FIFO: they are the newest sent).
// Answers of the runtime's layers (a refusal, an RMA ack) are not reported as lost RSRs
// (RuntimeStats::answers_lost counts them); a user RSR's loss is always reported, with the
// answers mentioned apart. Over tcp, "taken" is the peer's TCP acknowledgement, so the kernel's
// socket buffers take small frames for a peer that never reads: there 32 MiB of RMA get
// replies (answers) are sent to A first, so that the frames under test stay unacknowledged.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "rma_test_util.h"
#include "rt_test_util.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::testing {
namespace {

// A: no progress thread and no flush wait, so it never takes what B sends it and leaves with
// it unread. B: the default options (progress thread), serving A.
class LossReport : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto fabric = NewInprocFabric();
    RuntimeOptions ao = ModuleOptions(GetParam(), fabric);
    ao.progress_thread = false;
    ao.flush_timeout_ms = 0;
    auto a = Runtime::Init(ao);
    RuntimeOptions bo = ModuleOptions(GetParam(), fabric);
    bo.send_queue_bytes = 0;  // B's sends to A never wait for A (which never reads)
    auto b = Runtime::Init(bo);
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(*a);
    b_ = std::move(*b);
    for (auto [rt, sp, rma] :
         {std::tuple{a_.get(), &a_sp_, &a_rma_}, std::tuple{b_.get(), &b_sp_, &b_rma_}}) {
      auto ctx = rt->CreateContext({});
      ASSERT_TRUE(ctx.ok());
      Endpoint* ep = *(*ctx)->CreateEndpoint();
      ASSERT_TRUE(ep->RegisterHandler("n", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
      *sp = ep->MakeStartpoint();
      auto r = Rma::Create(**ctx);
      ASSERT_TRUE(r.ok());
      *rma = std::move(*r);
    }
  }
  // B refuses an RSR of A to a handler it does not have: the refusal waits at A.
  void RefusalToA() {
    const uint64_t dropped = b_->stats().rsr_dropped;
    ASSERT_TRUE(a_->SendRsr(Buffer(), b_sp_, HandlerId::Of("nope")).ok());
    ASSERT_TRUE(WaitFor([&] { return b_->stats().rsr_dropped == dropped + 1; }));
  }
  bool tcp() const { return std::string(GetParam()) == "tcp"; }
  // Over tcp: answers (RMA get replies) that fill the socket buffers towards A; the number of
  // such answers that are lost is not known (the kernel took some), so the tests check "at
  // least" there.
  void FillOverTcp() {
    if (!tcp()) return;
    fill_mem_ = std::make_unique<Pages>(size_t{32} << 20);  // page-aligned: 4 KiB packets
    fill_out_.resize(fill_mem_->size);
    RemoteKey key = *b_rma_->Register(fill_mem_->span());
    ASSERT_TRUE(a_rma_->Get(key, 0, fill_out_).ok());
    fill_packets_ = fill_mem_->size / 4096;
    ASSERT_TRUE(WaitFor([&] { return b_->stats().rsr_sent == fill_packets_; }))
        << b_->stats().rsr_sent << " of " << fill_packets_;
  }
  void ExpectAnswersLost(uint64_t n) {
    if (tcp()) {
      EXPECT_GE(b_->stats().answers_lost, n);
    } else {
      EXPECT_EQ(b_->stats().answers_lost, n);
    }
  }
  // A leaves without reading anything B sent it.
  void ALeaves() {
    a_rma_.reset();
    [[maybe_unused]] Status st = a_->Finalize();  // may report its own frames: not checked
  }

  std::unique_ptr<Runtime> a_, b_;
  Startpoint a_sp_, b_sp_;
  std::unique_ptr<Rma> a_rma_, b_rma_;
  std::unique_ptr<Pages> fill_mem_;
  std::vector<uint8_t> fill_out_;
  uint64_t fill_packets_ = 0;
};

TEST_P(LossReport, AnswersToADepartedPeerAreNotLostRsrs) {
  FillOverTcp();
  RefusalToA();
  // An RMA put of A: B writes and sends the ack (an RSR to ukai.rma.reply), which waits at A.
  std::vector<uint8_t> mem(64), data(8, 7);
  RemoteKey key = *b_rma_->Register(mem);
  ASSERT_TRUE(a_rma_->Put(key, 0, data).ok());
  // B's RSRs: the fill's replies, then the ack.
  ASSERT_TRUE(WaitFor([&] { return b_->stats().rsr_sent == fill_packets_ + 1; }));
  EXPECT_EQ(mem[0], 7);
  ALeaves();
  b_rma_.reset();
  const Status st = b_->Finalize();
  EXPECT_TRUE(st.ok()) << st.ToString();
  ExpectAnswersLost(2);
}

TEST_P(LossReport, AUserRsrLossIsReportedWithTheAnswersApart) {
  FillOverTcp();
  ASSERT_TRUE(b_->SendRsr(Buffer(), a_sp_, HandlerId::Of("n")).ok());  // older
  RefusalToA();                                                        // newer
  ALeaves();
  b_rma_.reset();
  const Status st = b_->Finalize();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("Finalize: 1 frames ("), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("1 frames lost when it failed or left"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find(tcp() ? "runtime answers" : "also 1 runtime answers"),
            std::string::npos)
      << st.ToString();
  ExpectAnswersLost(1);
}

TEST_P(LossReport, UserRsrsNewerThanTheAnswersAreAllReported) {
  FillOverTcp();
  RefusalToA();  // older
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(b_->SendRsr(Buffer(), a_sp_, HandlerId::Of("n")).ok());  // newer
  }
  ALeaves();
  b_rma_.reset();
  const Status st = b_->Finalize();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("Finalize: 3 frames ("), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(tcp() ? "runtime answers" : "also 1 runtime answers"),
            std::string::npos)
      << st.ToString();
  ExpectAnswersLost(1);
}

INSTANTIATE_TEST_SUITE_P(Modules, LossReport, ::testing::Values("inproc", "tcp", "shm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace ukai::rt::testing
