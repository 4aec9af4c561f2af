// A reset connection of an authenticated peer (src/rt/modules/tcp/tcp_session.h): the
// dialer re-dials within tcp.reconnect_ms and resumes the session; every RSR accepted is
// delivered exactly once and in order, both ways, and no peer event is raised. When the
// peer cannot be reached again in time, the session fails and the loss is reported.
//
// A proxy between the two runtimes (the dialer's startpoint of the listener names the
// proxy's port) forwards bytes both ways and resets both connections (SO_LINGER 0) when
// told to; an orderly close (FIN) it passes on as one.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"
#include "tcp_test_util.h"

namespace ukai::rt::testing {
namespace {

// Accepts on an ephemeral port and forwards each accepted connection to 127.0.0.1:target.
class ResetProxy {
 public:
  explicit ResetProxy(uint16_t target) : target_(target) {
    lfd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(lfd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(lfd_, 8);
    socklen_t len = sizeof addr;
    ::getsockname(lfd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ResetProxy() {
    stop_ = true;
    thread_.join();
    CloseAll();
    if (lfd_ >= 0) ::close(lfd_);
  }
  uint16_t port() const { return port_; }
  // Resets the current pair once `bytes` more bytes went from the dialer to the listener.
  void ResetAfter(uint64_t bytes) { reset_at_ = forwarded_.load() + bytes; }
  // Stops accepting (new connections are refused).
  void StopListening() { stop_listening_ = true; }
  int accepted() const { return accepted_.load(); }
  int resets() const { return resets_.load(); }

 private:
  void CloseAll() {
    for (int fd : {a_, b_}) {
      if (fd < 0) continue;
      linger l{1, 0};  // RST, not FIN
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      ::close(fd);
    }
    a_ = b_ = -1;
    eof_[0] = eof_[1] = false;
  }
  void Run() {
    uint8_t buf[16384];
    while (!stop_) {
      if (stop_listening_ && lfd_ >= 0) {
        ::close(lfd_);
        lfd_ = -1;
      }
      pollfd p[3] = {
          {lfd_, POLLIN, 0}, {eof_[0] ? -1 : a_, POLLIN, 0}, {eof_[1] ? -1 : b_, POLLIN, 0}};
      if (::poll(p, 3, 10) <= 0) continue;
      if (lfd_ >= 0 && (p[0].revents & POLLIN)) {
        const int a = ::accept(lfd_, nullptr, nullptr);
        CloseAll();
        const int b = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(target_);
        ::connect(b, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        a_ = a;
        b_ = b;
        ++accepted_;
        continue;
      }
      for (int i = 1; i <= 2; ++i) {
        if (p[i].revents == 0 || a_ < 0) continue;
        const int from = i == 1 ? a_ : b_, to = i == 1 ? b_ : a_;
        const ssize_t n = ::recv(from, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 && !eof_[i - 1]) {
          // An orderly close passes on as one (FIN, not RST: a reset would make the other
          // side's kernel drop what it has not read yet, a goodbye among it).
          eof_[i - 1] = true;
          ::shutdown(to, SHUT_WR);
          if (eof_[0] && eof_[1]) CloseAll();
          continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) {
          CloseAll();
          break;
        }
        for (ssize_t off = 0; off < n;) {
          const ssize_t w = ::send(to, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
          if (w <= 0) break;
          off += w;
        }
        if (i == 1) forwarded_ += static_cast<uint64_t>(n);
        if (i == 1 && reset_at_ != 0 && forwarded_.load() >= reset_at_) {
          reset_at_ = 0;
          ++resets_;
          CloseAll();
          break;
        }
      }
    }
  }

  const uint16_t target_;
  int lfd_ = -1, a_ = -1, b_ = -1;
  bool eof_[2] = {false, false};  // the dialer's / the listener's side sent FIN
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false}, stop_listening_{false};
  std::atomic<uint64_t> forwarded_{0}, reset_at_{0};
  std::atomic<int> accepted_{0}, resets_{0};
  std::thread thread_;
};

// `sp` with its tcp descriptor's port replaced by `port`.
Startpoint ViaPort(const Startpoint& sp, uint16_t port) {
  auto table = std::make_shared<DescriptorTable>(sp.descriptors());
  for (Descriptor& d : table->entries) {
    if (d.module != "tcp") continue;
    Result<tcp::Target> t = tcp::DecodeTarget(d.bytes);
    EXPECT_TRUE(t.ok());
    t->port = port;
    d.bytes = tcp::EncodeTarget(*t);
  }
  return Startpoint(table, sp.context(), sp.endpoint());
}

uint16_t TcpPort(const Runtime& rt) {
  Result<tcp::Target> t = tcp::DecodeTarget(rt.descriptors().Find("tcp")->bytes);
  return t.ok() ? t->port : 0;
}

struct Side {
  std::unique_ptr<Runtime> rt;
  Endpoint* ep = nullptr;
  std::mutex mu;
  std::vector<uint32_t> got;  // sequence numbers in arrival order
  std::atomic<int> events{0};
  std::string last_event;
};

void Start(Side* s, const std::map<std::string, std::string>& params) {
  RuntimeOptions o = ModuleOptions("tcp", nullptr);
  o.job_secret = TestSecret(7);
  for (const auto& [k, v] : params) o.params[k] = v;
  o.on_peer_event = [s](const PeerEvent& e) {
    s->last_event = e.reason.ToString();
    ++s->events;
  };
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  s->rt = std::move(*rt);
  auto ctx = s->rt->CreateContext({.name = "c"});
  s->ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(s->ep
                  ->RegisterHandler("seq", HandlerKind::kNonThreaded,
                                    [s](Rsr& m) {
                                      std::lock_guard<std::mutex> lock(s->mu);
                                      s->got.push_back(*m.reader().GetU32());
                                    })
                  .ok());
}

void SendSeq(Runtime& rt, const Startpoint& to, uint32_t from, uint32_t n, size_t pad) {
  for (uint32_t k = from; k < from + n; ++k) {
    Buffer b;
    b.PutU32(k);
    b.PutBytes(std::vector<uint8_t>(pad, 0x5a));
    ASSERT_TRUE(rt.SendRsr(std::move(b), to, HandlerId::Of("seq")).ok()) << k;
  }
}

// 0..n-1, each once, in order.
void ExpectExactly(Side& s, uint32_t n) {
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(s.mu);
    return s.got.size() >= n;
  })) << s.got.size()
      << " of " << n;
  std::lock_guard<std::mutex> lock(s.mu);
  ASSERT_EQ(s.got.size(), n);
  for (uint32_t k = 0; k < n; ++k) ASSERT_EQ(s.got[k], k) << "at " << k;
}

TEST(TcpReconnect, AResetLosesAndRepeatsNothing) {
  Side a, b;
  Start(&a, {});
  Start(&b, {});
  ResetProxy proxy(TcpPort(*b.rt));
  const Startpoint to_b = ViaPort(b.ep->MakeStartpoint(), proxy.port());
  const Startpoint to_a = a.ep->MakeStartpoint();
  // a dials b through the proxy first; b's sends to a then use that session too.
  ASSERT_TRUE(a.rt->SelectModule(to_b).ok());
  ASSERT_TRUE(b.rt->SelectModule(to_a).ok());
  constexpr uint32_t kPerRound = 3000;
  // Three rounds; the connection is reset in the middle of each: frames written to the old
  // socket but not received, and frames in flight both ways, go again exactly once.
  for (uint32_t round = 0; round < 3; ++round) {
    proxy.ResetAfter(64 << 10);
    std::thread back([&] { SendSeq(*b.rt, to_a, round * kPerRound, kPerRound, 100); });
    SendSeq(*a.rt, to_b, round * kPerRound, kPerRound, 100);
    back.join();
    ExpectExactly(b, (round + 1) * kPerRound);
    ExpectExactly(a, (round + 1) * kPerRound);
  }
  EXPECT_EQ(proxy.resets(), 3);
  EXPECT_GE(proxy.accepted(), 4);
  // The last reset may come after the last frame: its resume follows on its own.
  EXPECT_TRUE(WaitFor([&] {
    return a.rt->impl()->ModuleCounters("tcp")["reconnects"] >= 3 &&
           b.rt->impl()->ModuleCounters("tcp")["reconnects"] >= 3;
  }));
  EXPECT_EQ(a.events.load(), 0) << a.last_event;
  EXPECT_EQ(b.events.load(), 0) << b.last_event;
  const Status fa = a.rt->Finalize();
  EXPECT_TRUE(fa.ok()) << fa.ToString();
  const Status fb = b.rt->Finalize();
  EXPECT_TRUE(fb.ok()) << fb.ToString();
}

TEST(TcpReconnect, APeerNotBackInTimeFailsAndTheLossIsReported) {
  Side a, b;
  Start(&a, {{"tcp.reconnect_ms", "300"}});
  Start(&b, {{"tcp.reconnect_ms", "300"}});
  auto proxy = std::make_unique<ResetProxy>(TcpPort(*b.rt));
  const Startpoint to_b = ViaPort(b.ep->MakeStartpoint(), proxy->port());
  ASSERT_TRUE(a.rt->SelectModule(to_b).ok());
  SendSeq(*a.rt, to_b, 0, 10, 0);
  ExpectExactly(b, 10);
  proxy->StopListening();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  proxy->ResetAfter(1);
  SendSeq(*a.rt, to_b, 10, 5, 0);  // the first of them triggers the reset
  ASSERT_TRUE(WaitFor([&] { return a.events.load() == 1 && b.events.load() == 1; }));
  EXPECT_NE(a.last_event.find("tcp.reconnect_ms"), std::string::npos) << a.last_event;
  EXPECT_NE(b.last_event.find("tcp.reconnect_ms"), std::string::npos) << b.last_event;
  // What b did not take is reported at a (with what b took but had not acknowledged yet:
  // at most the 5 sent after the reset); nothing is delivered twice.
  const Status st = a.rt->Finalize();
  std::lock_guard<std::mutex> lock(b.mu);
  ASSERT_LE(b.got.size(), 15u);
  for (uint32_t k = 0; k < b.got.size(); ++k) EXPECT_EQ(b.got[k], k);
  const size_t lost = 15 - b.got.size();
  if (lost > 0) {
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    const size_t at = st.message().find("Finalize: ");
    ASSERT_NE(at, std::string::npos) << st.ToString();
    const size_t reported = std::stoul(st.message().substr(at + 10));
    EXPECT_GE(reported, lost) << st.ToString();
    EXPECT_LE(reported, 5u) << st.ToString();
  }
}

}  // namespace
}  // namespace ukai::rt::testing
