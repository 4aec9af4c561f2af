// tcp limits (tcp_limits.h): an accepted connection that never completes its hello is
// closed after tcp.handshake_timeout_ms, a half-sent frame fails its connection after
// tcp.frame_timeout_ms, and tcp.max_connections caps the accepted connections; the
// parameters are range-checked.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"
#include "tcp_test_util.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::testing {
namespace {

// True when the runtime closed `fd` within `ms` (EOF or reset).
bool ClosedWithin(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) return false;
  char c;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

std::unique_ptr<Runtime> Start(const std::map<std::string, std::string>& params) {
  RuntimeOptions o = ModuleOptions("tcp", nullptr);
  for (const auto& [k, v] : params) o.params[k] = v;
  auto rt = Runtime::Init(o);
  EXPECT_TRUE(rt.ok()) << rt.status().ToString();
  return rt.ok() ? std::move(*rt) : nullptr;
}

uint64_t TcpCounter(Runtime& rt, const std::string& name) {
  return rt.impl()->ModuleCounters("tcp")[name];
}

std::vector<uint8_t> Hello(RuntimeId target) {
  return tcp::Frame(wire::FrameKind::kHello, 77, target, tcp::EncodeHello({0, NewNonce()}));
}

TEST(TcpLimits, SilentAndHalfHelloConnectionsAreClosedAfterTheHandshakeDeadline) {
  auto rt = Start({{"tcp.handshake_timeout_ms", "200"}});
  ASSERT_TRUE(rt);
  const int silent = ConnectToTcp(*rt), half = ConnectToTcp(*rt);
  ASSERT_GE(silent, 0);
  ASSERT_GE(half, 0);
  const std::vector<uint8_t> hello = Hello(rt->id());
  ASSERT_EQ(::write(half, hello.data(), 20), 20);  // 20 of the 56 header bytes
  EXPECT_FALSE(ClosedWithin(silent, 100)) << "closed before the deadline";
  EXPECT_TRUE(ClosedWithin(silent, 5000));
  EXPECT_TRUE(ClosedWithin(half, 5000));
  EXPECT_EQ(TcpCounter(*rt, "handshake_timeouts"), 2u);
  EXPECT_EQ(rt->stats().frames_rejected, 2u);
  ::close(silent);
  ::close(half);
}

TEST(TcpLimits, AHalfSentFrameFailsTheConnectionAfterTheFrameDeadline) {
  auto rt = Start({{"tcp.frame_timeout_ms", "200"}});
  ASSERT_TRUE(rt);
  const int fd = DialByHand(*rt, 77, JoinToken(*rt), tcp::kJoinKey);
  ASSERT_GE(fd, 0);
  // An RSR of 100 payload bytes, of which 10 are sent.
  const std::vector<uint8_t> rsr = RsrFrame(77, rt->id(), "x", std::vector<uint8_t>(100, 1));
  ASSERT_EQ(::write(fd, rsr.data(), wire::kHeaderSize + 10), wire::kHeaderSize + 10);
  EXPECT_FALSE(ClosedWithin(fd, 100)) << "closed before the deadline";
  EXPECT_TRUE(ClosedWithin(fd, 5000));
  EXPECT_EQ(TcpCounter(*rt, "frame_timeouts"), 1u);
  ::close(fd);
}

TEST(TcpLimits, AnIdleConnectionWithCompleteFramesStaysOpen) {
  auto rt = Start({{"tcp.handshake_timeout_ms", "100"}, {"tcp.frame_timeout_ms", "100"}});
  ASSERT_TRUE(rt);
  const int fd = DialByHand(*rt, 77, JoinToken(*rt), tcp::kJoinKey);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(ClosedWithin(fd, 500));
  EXPECT_EQ(TcpCounter(*rt, "frame_timeouts") + TcpCounter(*rt, "handshake_timeouts"), 0u);
  ::close(fd);
}

TEST(TcpLimits, ConnectionsBeyondTheCapAreRefused) {
  auto rt = Start({{"tcp.max_connections", "2"}});
  ASSERT_TRUE(rt);
  const int a = ConnectToTcp(*rt), b = ConnectToTcp(*rt), c = ConnectToTcp(*rt);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_GE(c, 0);
  EXPECT_TRUE(ClosedWithin(c, 5000));
  EXPECT_FALSE(ClosedWithin(a, 100));
  EXPECT_FALSE(ClosedWithin(b, 100));
  EXPECT_EQ(TcpCounter(*rt, "connections_refused"), 1u);
  ::close(a);  // frees a place (once the runtime saw the close)
  ASSERT_TRUE(WaitFor([&] {
    const int d = ConnectToTcp(*rt);
    const bool kept = d >= 0 && !ClosedWithin(d, 100);
    if (d >= 0) ::close(d);
    return kept;
  }));
  ::close(b);
  ::close(c);
}

TEST(TcpLimits, ParametersAreRangeChecked) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"tcp.handshake_timeout_ms", "0"},
                                                        {"tcp.frame_timeout_ms", "x"},
                                                        {"tcp.max_connections", "-3"},
                                                        {"tcp.reconnect_ms", "-1"}}) {
    RuntimeOptions o = ModuleOptions("tcp", nullptr);
    o.params[key] = value;
    const Status st = Runtime::Init(o).status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_NE(st.message().find(key), std::string::npos) << st.ToString();
  }
}

}  // namespace
}  // namespace ukai::rt::testing
