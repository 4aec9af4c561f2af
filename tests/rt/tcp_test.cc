// tcp-specific behaviour: garbage on the wire is rejected and counted without disturbing
// other connections.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>

#include "rt_test_util.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::testing {
namespace {

int ConnectTo(const Runtime& rt) {
  const Descriptor* d = rt.descriptors().Find("tcp");
  if (d == nullptr) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(wire::GetLe16(d->bytes.data()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  return fd;
}

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
  int fd = ConnectTo(*rt_);
  ASSERT_GE(fd, 0);
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n.........................................";
  ASSERT_GT(::write(fd, junk, sizeof junk), 0);
  ASSERT_TRUE(WaitFor([&] { return rt_->stats().frames_rejected == 1; }));
  char c;
  EXPECT_EQ(::read(fd, &c, 1), 0);  // the runtime closed the connection
  ::close(fd);
}

TEST_F(TcpBadInput, FirstFrameMustBeAHelloForThisRuntime) {
  int fd = ConnectTo(*rt_);
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
  // A hello, then a header claiming a 4 GiB payload.
  int fd = ConnectTo(*rt_);
  ASSERT_GE(fd, 0);
  uint8_t frames[2 * wire::kHeaderSize];
  wire::FrameHeader hello;
  hello.kind = wire::FrameKind::kHello;
  hello.source = 99;
  hello.target = rt_->id();
  wire::EncodeHeader(hello, {frames, wire::kHeaderSize});
  wire::FrameHeader big = hello;
  big.kind = wire::FrameKind::kRsr;
  wire::EncodeHeader(big, {frames + wire::kHeaderSize, wire::kHeaderSize});
  wire::PutLe32(frames + wire::kHeaderSize + 12, 0xffffffffu);
  ASSERT_EQ(::write(fd, frames, sizeof frames), static_cast<ssize_t>(sizeof frames));
  ASSERT_TRUE(WaitFor([&] { return rt_->stats().frames_rejected == 1; }));
  // A second connection sends half a frame and disappears.
  int fd2 = ConnectTo(*rt_);
  hello.source = 100;
  wire::EncodeHeader(hello, {frames, wire::kHeaderSize});
  ASSERT_EQ(::write(fd2, frames, wire::kHeaderSize + 10), wire::kHeaderSize + 10);
  ::close(fd2);
  ::close(fd);
  // A well-behaved peer still gets through.
  auto other = Runtime::Init(ModuleOptions("tcp", nullptr));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("x")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 1; }));
}

}  // namespace
}  // namespace ukai::rt::testing
