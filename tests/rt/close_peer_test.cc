// Runtime::ClosePeer over inproc, tcp and shm (two runtimes of this process): it hands over
// what SendRsr accepted before closing, reports what a stalled or dead peer did not take
// (never OK after a loss), and later sends to the closed peer fail clearly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr size_t kPayload = 1000;
constexpr int kFrames = 40;

// A sender and a receiver without a progress thread: frames wait until receiver->Progress().
struct Pair {
  std::unique_ptr<Runtime> sender, receiver;
  Startpoint sp;
  std::atomic<int> got{0};
};

class ClosePeer : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string module = GetParam();
    auto fabric = NewInprocFabric();
    RuntimeOptions so = ModuleOptions(module, fabric);
    so.send_queue_bytes = 0;  // no limit: the frames wait at the receiver, not in SendRsr
    RuntimeOptions ro = ModuleOptions(module, fabric);
    ro.progress_thread = false;
    auto s = Runtime::Init(so);
    auto r = Runtime::Init(ro);
    ASSERT_TRUE(s.ok() && r.ok());
    p_.sender = std::move(*s);
    p_.receiver = std::move(*r);
    auto ctx = p_.receiver->CreateContext({.name = "r"});
    ASSERT_TRUE(ctx.ok());
    Endpoint* ep = *(*ctx)->CreateEndpoint();
    ASSERT_TRUE(
        ep->RegisterHandler("n", HandlerKind::kNonThreaded, [this](Rsr&) { ++p_.got; }).ok());
    p_.sp = ep->MakeStartpoint();
    ASSERT_EQ(*p_.sender->SelectModule(p_.sp), module);
  }

  // kFrames of kPayload bytes; `fill_socket`: over tcp, so many more that the kernel's socket
  // buffers (which acknowledge for a stopped process) cannot take them all.
  void SendFrames(bool fill_socket = false) {
    const bool tcp = std::string(GetParam()) == "tcp";
    const int frames = fill_socket && tcp ? 128 : kFrames;
    const size_t payload = fill_socket && tcp ? size_t{256} << 10 : kPayload;
    for (int i = 0; i < frames; ++i) {
      Buffer b;
      b.PutBytes(std::vector<uint8_t>(payload, 1));
      ASSERT_TRUE(p_.sender->SendRsr(std::move(b), p_.sp, HandlerId::Of("n")).ok());
    }
  }

  // Later sends and a second ClosePeer fail clearly (no reconnection).
  void ExpectClosed() {
    const Status again = p_.sender->SendRsr(Buffer(), p_.sp, HandlerId::Of("n"));
    EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition) << again.ToString();
    EXPECT_NE(again.message().find("ClosePeer"), std::string::npos) << again.ToString();
    Buffer b;
    EXPECT_EQ(p_.sender->TrySendRsr(b, p_.sp, HandlerId::Of("n")).code(),
              StatusCode::kFailedPrecondition);
    EXPECT_EQ(p_.sender->ClosePeer(p_.sp, std::chrono::milliseconds(10)).code(),
              StatusCode::kFailedPrecondition);
  }

  Pair p_;
};

TEST_P(ClosePeer, HandsOverEverythingAcceptedThenCloses) {
  SendFrames();
  std::atomic<bool> stop{false};
  std::thread receiver([&] {  // starts taking frames only after ClosePeer began
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    while (!stop.load()) p_.receiver->Progress();
  });
  const Status st = p_.sender->ClosePeer(p_.sp, std::chrono::seconds(20));
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(WaitFor([&] { return p_.got.load() == kFrames; }));
  stop = true;
  receiver.join();
  EXPECT_EQ(p_.got.load(), kFrames);
  ExpectClosed();
  EXPECT_TRUE(p_.sender->Finalize().ok());
}

TEST_P(ClosePeer, StalledPeerGivesTheLossReport) {
  SendFrames(/*fill_socket=*/true);
  const auto start = std::chrono::steady_clock::now();
  const Status st = p_.sender->ClosePeer(p_.sp, std::chrono::milliseconds(200));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  if (std::string(GetParam()) != "tcp") {  // tcp: the socket buffers took some
    EXPECT_NE(st.message().find(std::to_string(kFrames) + " frames"), std::string::npos)
        << st.ToString();
  }
  EXPECT_NE(st.message().find(" frames ("), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("not taken"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("ClosePeer timeout"), std::string::npos) << st.ToString();
  ExpectClosed();
  // Finalize does not report the closed peer's loss a second time.
  EXPECT_TRUE(p_.sender->Finalize().ok());
}

TEST_P(ClosePeer, DeadPeerGivesTheLossReportWithoutWaitingForTheTimeout) {
  SendFrames();
  // The receiver leaves (Finalize: goodbye) without having taken anything.
  EXPECT_TRUE(p_.receiver->Finalize().ok());
  const auto start = std::chrono::steady_clock::now();
  const Status st = p_.sender->ClosePeer(p_.sp, std::chrono::seconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("frames"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("lost when it failed or left"), std::string::npos) << st.ToString();
  EXPECT_EQ(p_.got.load(), 0);
}

TEST_P(ClosePeer, ErrorsWithoutAConnection) {
  // The receiver never connected to the sender (nor adopted its connection: no progress).
  const Startpoint to_sender(p_.sender->shared_descriptors(), 1, 1);
  EXPECT_EQ(p_.receiver->ClosePeer(to_sender, std::chrono::seconds(1)).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(p_.sender->ClosePeer(Startpoint(), std::chrono::seconds(1)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(p_.sender->ClosePeer(p_.sp, std::chrono::milliseconds(-1)).code(),
            StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Modules, ClosePeer, ::testing::Values("inproc", "tcp", "shm"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace ukai::rt::testing
