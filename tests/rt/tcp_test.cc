// tcp-specific behaviour: garbage on the wire is rejected and counted without disturbing
// other connections.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rt_test_util.h"
#include "tcp_test_util.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::testing {
namespace {

class TcpBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rt = Runtime::Init(ModuleOptions("tcp", nullptr));
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rt_ = std::move(*rt);
  }
  std::unique_ptr<Runtime> rt_;
};

TEST_F(TcpBadInput, GarbageIsRejectedAndCounted) {
  int fd = ConnectToTcp(*rt_);
  ASSERT_GE(fd, 0);
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n.........................................";
  ASSERT_GT(::write(fd, junk, sizeof junk), 0);
  ASSERT_TRUE(WaitFor([&] { return rt_->stats().frames_rejected == 1; }));
  char c;
  EXPECT_EQ(::read(fd, &c, 1), 0);  // the runtime closed the connection
  ::close(fd);
}

TEST_F(TcpBadInput, FirstFrameMustBeAHelloForThisRuntime) {
  int fd = ConnectToTcp(*rt_);
  ASSERT_GE(fd, 0);
  wire::FrameHeader h;  // an RSR without a hello first
  h.source = 5;
  h.target = rt_->id();
  uint8_t frame[wire::kHeaderSize];
  wire::EncodeHeader(h, frame);
  ASSERT_EQ(::write(fd, frame, sizeof frame), static_cast<ssize_t>(sizeof frame));
  ASSERT_TRUE(WaitFor([&] { return rt_->stats().frames_rejected == 1; }));
  ::close(fd);
}

TEST_F(TcpBadInput, OversizedLengthAndTruncatedFrameDoNotHurtOthers) {
  std::atomic<int> got{0};
  auto ctx = rt_->CreateContext({.name = "c"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  // An authenticated peer (it proves the join token), then a header claiming a 4 GiB
  // payload.
  int fd = DialByHand(*rt_, 99, JoinToken(*rt_), tcp::kJoinKey);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> big = RsrFrame(99, rt_->id(), "x");
  wire::PutLe32(big.data() + 12, 0xffffffffu);
  ASSERT_TRUE(SendAll(fd, big));
  ASSERT_TRUE(WaitFor([&] { return rt_->stats().frames_rejected == 1; }));
  // A second one sends half a frame and disappears.
  int fd2 = DialByHand(*rt_, 100, JoinToken(*rt_), tcp::kJoinKey);
  ASSERT_GE(fd2, 0);
  const std::vector<uint8_t> rsr = RsrFrame(100, rt_->id(), "x", std::vector<uint8_t>(100, 1));
  ASSERT_EQ(::write(fd2, rsr.data(), wire::kHeaderSize + 10), wire::kHeaderSize + 10);
  ::close(fd2);
  ::close(fd);
  // A well-behaved peer still gets through.
  auto other = Runtime::Init(ModuleOptions("tcp", nullptr));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("x")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 1; }));
}

// A startpoint to a made-up runtime whose tcp descriptor names 127.0.0.1:`port` (its host
// identity differs from ours, so the advertised address is used).
Startpoint TcpStartpoint(uint16_t port) {
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = 0x1234567890abcdefULL;
  table->entries.push_back(
      {"tcp", tcp::EncodeTarget({port, "127.0.0.1", "another-host|net:[1]", tcp::Bind::kAny})});
  return Startpoint(table, 1, 1);
}

TEST(TcpConnect, BadTimeoutParameterIsRejected) {
  RuntimeOptions o = ModuleOptions("tcp", nullptr);
  o.params["tcp.connect_timeout_ms"] = "soon";
  auto rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("tcp.connect_timeout_ms"), std::string::npos);
}

TEST(TcpConnect, RefusedConnectionIsAClearError) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // bound, not listening: connects are refused
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  auto rt = Runtime::Init(ModuleOptions("tcp", nullptr));
  ASSERT_TRUE(rt.ok());
  Status st = (*rt)->SendRsr(Buffer(), TcpStartpoint(ntohs(addr.sin_port)), HandlerId::Of("x"));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find("tcp connect 127.0.0.1:"), std::string::npos) << st.ToString();
  ::close(fd);
}

// A peer that never answers the connect (its accept queue is full, so SYNs are dropped):
// the send fails after tcp.connect_timeout_ms, and sends to another peer from another
// thread go through meanwhile (connection set-up holds no runtime-wide lock).
TEST(TcpConnect, SilentPeerTimesOutWithoutStallingOthers) {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(lfd, 0), 0);
  socklen_t len = sizeof addr;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::vector<int> fillers;  // fill the accept queue (never accepted)
  for (int i = 0; i < 4; ++i) {
    int f = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    [[maybe_unused]] int rc = ::connect(f, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers.push_back(f);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RuntimeOptions o = ModuleOptions("tcp", nullptr);
  o.params["tcp.connect_timeout_ms"] = "800";
  auto rt = Runtime::Init(o);
  auto good = Runtime::Init(ModuleOptions("tcp", nullptr));
  ASSERT_TRUE(rt.ok() && good.ok());
  std::atomic<int> got{0};
  auto ctx = (*good)->CreateContext({.name = "c"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  const auto t0 = std::chrono::steady_clock::now();
  Status silent;
  std::thread stuck([&] {
    silent = (*rt)->SendRsr(Buffer(), TcpStartpoint(ntohs(addr.sin_port)), HandlerId::Of("x"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE((*rt)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("x")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 1; }));
  const bool other_done_early =
      std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(700);
  stuck.join();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(other_done_early);
  EXPECT_EQ(silent.code(), StatusCode::kUnavailable);
  // Either the timeout (SYNs dropped) or, on kernels that answer a full queue, an error.
  EXPECT_LT(took, std::chrono::seconds(5));
  for (int f : fillers) ::close(f);
  ::close(lfd);
}

// Both runtimes connect to each other at once (SPMD programs do: every rank picks a module
// for every other right after start-up). One side may then switch to the other's
// connection (fewer ACK-only segments); whatever each side does, each sender's RSRs must
// arrive complete and in order, in both directions, also while the switch happens.
TEST(TcpConnect, SimultaneousOpenKeepsOrderBothWays) {
  constexpr uint32_t kCount = 2000;
  for (int round = 0; round < 4; ++round) {
    std::unique_ptr<Runtime> rt[2];
    Endpoint* ep[2] = {};
    std::atomic<uint32_t> next[2] = {0, 0};
    std::atomic<bool> in_order{true};
    for (int i = 0; i < 2; ++i) {
      auto r = Runtime::Init(ModuleOptions("tcp", nullptr));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      rt[i] = std::move(*r);
      auto ctx = rt[i]->CreateContext({.name = "c"});
      ep[i] = *(*ctx)->CreateEndpoint();
      ASSERT_TRUE(ep[i]
                      ->RegisterHandler("seq", HandlerKind::kNonThreaded,
                                        [&, i](Rsr& m) {
                                          auto v = m.reader().GetU32();
                                          if (!v.ok() || *v != next[i].load()) in_order = false;
                                          ++next[i];
                                        })
                      .ok());
    }
    const Startpoint to[2] = {ep[1]->MakeStartpoint(), ep[0]->MakeStartpoint()};
    std::thread connect1([&] { ASSERT_TRUE(rt[1]->SelectModule(to[1]).ok()); });
    ASSERT_TRUE(rt[0]->SelectModule(to[0]).ok());
    connect1.join();
    // Round 0-1: both send at once; rounds 2-3: one side first, the other after a pause
    // (its switch, if any, happens while the first side's stream is in flight).
    auto stream = [&](int i) {
      if (round >= 2 && i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      for (uint32_t k = 0; k < kCount; ++k) {
        Buffer b;
        b.PutU32(k);
        ASSERT_TRUE(rt[i]->SendRsr(std::move(b), to[i], HandlerId::Of("seq")).ok());
      }
    };
    std::thread s1(stream, 1);
    stream(0);
    s1.join();
    ASSERT_TRUE(WaitFor([&] { return next[0].load() == kCount && next[1].load() == kCount; }))
        << "round " << round << ": " << next[0].load() << ", " << next[1].load();
    EXPECT_TRUE(in_order.load()) << "round " << round;
  }
}

// After a simultaneous open one side may send over the other's connection; its Finalize
// must still say goodbye after its last frame: the peer sees every RSR before the event.
TEST(TcpConnect, GoodbyeAfterTheLastFrameOnASharedConnection) {
  constexpr int kCount = 300;
  for (int round = 0; round < 6; ++round) {
    std::atomic<int> got{0}, got_at_event{-1};
    RuntimeOptions oa = ModuleOptions("tcp", nullptr);
    oa.on_peer_event = [&](const PeerEvent& e) {
      if (e.orderly) got_at_event = got.load();
    };
    auto a = Runtime::Init(oa);
    auto b = Runtime::Init(ModuleOptions("tcp", nullptr));
    ASSERT_TRUE(a.ok() && b.ok());
    Endpoint* ep[2] = {};
    Runtime* rts[2] = {a->get(), b->get()};
    for (int i = 0; i < 2; ++i) {
      auto ctx = rts[i]->CreateContext({.name = "c"});
      ep[i] = *(*ctx)->CreateEndpoint();
      ASSERT_TRUE(
          ep[i]->RegisterHandler("n", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
    }
    const Startpoint to_a = ep[0]->MakeStartpoint(), to_b = ep[1]->MakeStartpoint();
    std::thread connect_b([&] { ASSERT_TRUE((*b)->SelectModule(to_a).ok()); });
    ASSERT_TRUE((*a)->SelectModule(to_b).ok());
    connect_b.join();
    // Give b's progress thread time to read a's hello (b then sends over a's connection
    // when its id is the higher one, which happens in about half of the rounds).
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<uint8_t> chunk(64 << 10, 1);  // enough to fill the socket: frames queue
    for (int k = 0; k < kCount; ++k) {
      Buffer buf;
      buf.PutBytes(chunk);
      ASSERT_TRUE((*b)->SendRsr(std::move(buf), to_a, HandlerId::Of("n")).ok());
    }
    ASSERT_TRUE((*b)->Finalize().ok());
    ASSERT_TRUE(WaitFor([&] { return got_at_event.load() >= 0; })) << "round " << round;
    EXPECT_EQ(got_at_event.load(), kCount) << "round " << round;
  }
}

}  // namespace
}  // namespace ukai::rt::testing
