// Authentication over tcp (src/rt/modules/tcp/tcp_hello.h, docs/runtime.md "Authentication
// and confinement"): impostors that claim a real peer's runtime id (wrong secret, no secret,
// a replayed handshake, a forged proof, a resume without the session key, an abrupt close
// mid-handshake) are refused before any frame of theirs is read as a request, and none of
// them changes the state of the peer they claimed to be: it keeps working in both
// directions, no handler ran for the impostor, no peer event was raised. A dialer never
// sends an RSR to a listener that cannot prove the key.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"
#include "tcp_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr uint8_t kJob = 0x11;

uint64_t Counter(Runtime& rt, const std::string& name) {
  return rt.impl()->ModuleCounters("tcp")[name];
}

// Server A and its real peer B, one job (one secret); B has talked to A already, so A has
// a session with B. Handler "count" at A counts B's RSRs; "echo" answers requests.
class TcpImpostor : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      RuntimeOptions o = ModuleOptions("tcp", nullptr);
      o.job_secret = TestSecret(kJob);
      o.on_peer_event = [this, i](const PeerEvent& e) {
        if (e.peer == ids_[1 - i].load()) ++peer_events_;  // about the real peer
      };
      auto rt = Runtime::Init(o);
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rt_[i] = std::move(*rt);
      ids_[i] = rt_[i]->id();
      auto ctx = rt_[i]->CreateContext({.name = "c", .id = 1});
      ASSERT_TRUE(ctx.ok());
      ep_[i] = *(*ctx)->CreateEndpoint({.id = 1});
      ASSERT_TRUE(ep_[i]
                      ->RegisterHandler("count", HandlerKind::kNonThreaded,
                                        [this, i](Rsr&) { ++count_[i]; })
                      .ok());
      ASSERT_TRUE(ep_[i]
                      ->RegisterHandler("echo", HandlerKind::kThreaded,
                                        [](Rsr& m) {
                                          Buffer b;
                                          b.PutU32(*m.reader().GetU32());
                                          (void)m.Reply(std::move(b));
                                        })
                      .ok());
    }
    ExpectBothWork(1);
  }

  // A request each way and an RSR each way go through; `round` of them so far each way.
  void ExpectBothWork(int round) {
    for (int from = 0; from < 2; ++from) {
      const int to = 1 - from;
      ASSERT_TRUE(
          rt_[from]->SendRsr(Buffer(), ep_[to]->MakeStartpoint(), HandlerId::Of("count")).ok());
      Buffer q;
      q.PutU32(42);
      ReplyFuture f =
          rt_[from]->Request(std::move(q), ep_[to]->MakeStartpoint(), HandlerId::Of("echo"),
                             {.timeout = std::chrono::seconds(10)});
      const Reply& r = f.Wait();
      ASSERT_TRUE(r.ok()) << "round " << round << ": " << r.status().ToString();
      EXPECT_EQ(*r.reader().GetU32(), 42u);
    }
    ASSERT_TRUE(WaitFor([&] { return count_[0].load() == round && count_[1].load() == round; }))
        << count_[0].load() << " " << count_[1].load();
  }

  // The impostor's claim: B's id, towards A.
  RuntimeId b_id() const { return rt_[1]->id(); }
  Runtime& a() { return *rt_[0]; }

  // After an impostor: A closed its connection, counted it, and B is unharmed.
  void ExpectRefusedAndHarmless(int fd, uint64_t rejected_before, int round) {
    if (fd >= 0) {
      uint8_t c;
      pollfd p{fd, POLLIN, 0};
      ASSERT_GT(::poll(&p, 1, 10000), 0) << "A kept the impostor's connection open";
      while (::recv(fd, &c, 1, MSG_DONTWAIT) > 0) {  // a challenge may precede the close
      }
      EXPECT_EQ(::recv(fd, &c, 1, 0), 0);
      ::close(fd);
    }
    ASSERT_TRUE(WaitFor([&] { return a().stats().frames_rejected > rejected_before; }));
    ExpectBothWork(round);
    EXPECT_EQ(peer_events_.load(), 0);
  }

  std::atomic<RuntimeId> ids_[2] = {0, 0};  // declared first: the callbacks outlive rt_
  std::unique_ptr<Runtime> rt_[2];
  Endpoint* ep_[2] = {};
  std::atomic<int> count_[2] = {0, 0};
  std::atomic<int> peer_events_{0};
};

// The dialer's hello and, after A's challenge, a proof made with `key`; then an RSR for
// "count" as B. Returns the socket.
int HelloProofRsr(Runtime& a, RuntimeId claimed, const SecretKey& key, uint8_t flags = 0) {
  const int fd = ConnectToTcp(a);
  if (fd < 0) return -1;
  tcp::Transcript t{claimed, a.id(), flags, NewNonce(), {}};
  SendFrame(fd, wire::FrameKind::kHello, claimed, a.id(), tcp::EncodeHello({flags, t.nonce_d}));
  std::optional<RawFrame> ch = ReadRawFrame(fd);
  if (ch) {
    Result<tcp::Challenge> c = tcp::DecodeChallenge(ch->payload);
    if (c.ok()) t.nonce_l = c->nonce;
  }
  SendFrame(fd, wire::FrameKind::kProof, claimed, a.id(),
            tcp::EncodeProof({0, tcp::DialerMac(key, t, 0)}));
  SendAll(fd, RsrFrame(claimed, a.id(), "count"));
  return fd;
}

TEST_F(TcpImpostor, WrongSecretIsRefused) {
  const uint64_t before = a().stats().frames_rejected;
  EXPECT_LT(DialByHand(a(), b_id(), TestSecret(0x22)), 0);
  const int fd = HelloProofRsr(a(), b_id(), TestSecret(0x22));
  ExpectRefusedAndHarmless(fd, before, 2);
  EXPECT_GE(Counter(a(), "auth_failures"), 2u);
  EXPECT_EQ(count_[0].load(), 2);  // only B's
}

TEST_F(TcpImpostor, NoSecretIsRefused) {
  // Straight to an RSR as B; a hello then an RSR instead of a proof; an all-zero proof.
  const uint64_t before = a().stats().frames_rejected;
  int fd = ConnectToTcp(a());
  ASSERT_TRUE(SendAll(fd, RsrFrame(b_id(), a().id(), "count")));
  ExpectRefusedAndHarmless(fd, before, 2);
  fd = ConnectToTcp(a());
  ASSERT_TRUE(
      SendFrame(fd, wire::FrameKind::kHello, b_id(), a().id(), tcp::EncodeHello({0, NewNonce()})));
  ASSERT_TRUE(SendAll(fd, RsrFrame(b_id(), a().id(), "count")));
  ExpectRefusedAndHarmless(fd, before + 1, 3);
  fd = HelloProofRsr(a(), b_id(), SecretKey{});
  ExpectRefusedAndHarmless(fd, before + 2, 4);
  EXPECT_EQ(count_[0].load(), 4);
}

TEST_F(TcpImpostor, ReplayedHandshakeIsRefused) {
  // A real handshake (as another runtime of the job, id 0x99) is recorded; its hello and
  // proof replayed on a new connection, claiming 0x99 and then B, fail A's fresh challenge.
  const int real = ConnectToTcp(a());
  tcp::Transcript t{0x99, a().id(), 0, NewNonce(), {}};
  const std::vector<uint8_t> hello =
      tcp::Frame(wire::FrameKind::kHello, 0x99, a().id(), tcp::EncodeHello({0, t.nonce_d}));
  ASSERT_TRUE(SendAll(real, hello));
  std::optional<RawFrame> ch = ReadRawFrame(real);
  ASSERT_TRUE(ch);
  t.nonce_l = tcp::DecodeChallenge(ch->payload)->nonce;
  const std::vector<uint8_t> proof =
      tcp::Frame(wire::FrameKind::kProof, 0x99, a().id(),
                 tcp::EncodeProof({0, tcp::DialerMac(TestSecret(kJob), t, 0)}));
  ASSERT_TRUE(SendAll(real, proof));
  std::optional<RawFrame> welcome = ReadRawFrame(real);
  ASSERT_TRUE(welcome);
  EXPECT_EQ(welcome->header.kind, wire::FrameKind::kWelcome);
  ::close(real);
  const uint64_t before = a().stats().frames_rejected;
  for (RuntimeId claimed : {RuntimeId{0x99}, b_id()}) {
    const int fd = ConnectToTcp(a());
    std::vector<uint8_t> h = hello, p = proof;
    wire::PutLe64(h.data() + 16, claimed);  // the header's source
    wire::PutLe64(p.data() + 16, claimed);
    ASSERT_TRUE(SendAll(fd, h));
    ASSERT_TRUE(ReadRawFrame(fd));  // A's challenge, with a nonce of its own
    ASSERT_TRUE(SendAll(fd, p));
    ASSERT_TRUE(SendAll(fd, RsrFrame(claimed, a().id(), "count")));
    ExpectRefusedAndHarmless(fd, before + (claimed == b_id() ? 1 : 0), claimed == b_id() ? 3 : 2);
  }
  EXPECT_EQ(count_[0].load(), 3);
}

TEST_F(TcpImpostor, CorrectIdWithAForgedProofOrResumeIsRefused) {
  const uint64_t before = a().stats().frames_rejected;
  // A proof that is random bytes.
  int fd = ConnectToTcp(a());
  ASSERT_TRUE(
      SendFrame(fd, wire::FrameKind::kHello, b_id(), a().id(), tcp::EncodeHello({0, NewNonce()})));
  ASSERT_TRUE(ReadRawFrame(fd));
  tcp::Proof forged;
  RandomBytes(forged.mac);
  ASSERT_TRUE(SendFrame(fd, wire::FrameKind::kProof, b_id(), a().id(), tcp::EncodeProof(forged)));
  ExpectRefusedAndHarmless(fd, before, 2);
  // A resume of B's session proving the job secret (not the session key), then one proving
  // the join token: neither takes B's session over.
  fd = HelloProofRsr(a(), b_id(), TestSecret(kJob), tcp::kResume);
  ExpectRefusedAndHarmless(fd, before + 1, 3);
  fd = HelloProofRsr(a(), b_id(), JoinToken(a()), tcp::kResume | tcp::kJoinKey);
  ExpectRefusedAndHarmless(fd, before + 2, 4);
  // A new session as B with the right key is refused too: B has one (no takeover).
  EXPECT_LT(DialByHand(a(), b_id(), TestSecret(kJob)), 0);
  ExpectBothWork(5);
  EXPECT_EQ(count_[0].load(), 5);
}

TEST_F(TcpImpostor, AbruptCloseMidHandshakeChangesNothing) {
  for (int stage = 0; stage < 3; ++stage) {
    const int fd = ConnectToTcp(a());
    if (stage >= 1) {
      ASSERT_TRUE(SendFrame(fd, wire::FrameKind::kHello, b_id(), a().id(),
                            tcp::EncodeHello({0, NewNonce()})));
    }
    if (stage >= 2) {
      ASSERT_TRUE(ReadRawFrame(fd));
      std::vector<uint8_t> half =
          tcp::Frame(wire::FrameKind::kProof, b_id(), a().id(), tcp::EncodeProof({}));
      ASSERT_TRUE(SendAll(fd, {half.begin(), half.begin() + 30}));
    }
    // A reset, not an orderly close.
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ExpectBothWork(2);
  EXPECT_EQ(peer_events_.load(), 0);
  EXPECT_EQ(Counter(a(), "connections_lost"), 0u);
}

// A listener that cannot prove the key: the dialer gives up before it sends any proof or
// RSR, and says why.
TEST(TcpAuth, DialerRefusesAListenerThatCannotProveTheKey) {
  const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(lfd, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  constexpr RuntimeId kFake = 0x1234567890abcdefULL;
  std::vector<uint8_t> after_challenge;
  std::thread fake([&] {
    const int fd = ::accept(lfd, nullptr, nullptr);
    std::optional<RawFrame> hello = ReadRawFrame(fd);
    if (!hello) return;
    tcp::Challenge c;
    RandomBytes(c.nonce);
    RandomBytes(c.mac);
    SendFrame(fd, wire::FrameKind::kChallenge, kFake, hello->header.source,
              tcp::EncodeChallenge(c));
    uint8_t buf[256];
    for (;;) {  // everything the dialer sends after our challenge, until it closes
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      after_challenge.insert(after_challenge.end(), buf, buf + n);
    }
    ::close(fd);
  });
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = kFake;
  table->entries.push_back({"tcp", tcp::EncodeTarget({ntohs(addr.sin_port), "127.0.0.1",
                                                      "another-host|net:[1]", tcp::Bind::kAny})});
  SecretKey token;
  RandomBytes(token);
  table->entries.push_back({std::string(kAuthDescriptor), EncodeAuthDescriptor(token)});
  auto rt = Runtime::Init(ModuleOptions("tcp", nullptr));
  ASSERT_TRUE(rt.ok());
  const Status st = (*rt)->SendRsr(Buffer(), Startpoint(table, 1, 1), HandlerId::Of("x"));
  fake.join();
  ::close(lfd);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("did not prove the job secret"), std::string::npos) << st.ToString();
  EXPECT_TRUE(after_challenge.empty()) << after_challenge.size() << " bytes after the challenge";
}

// Two runtimes of different jobs meet through a startpoint (its join token); a third runtime
// of yet another job that knows only the first one's id and address, not its startpoint's
// token, is refused.
TEST(TcpAuth, JoinTokenFromTheStartpointLetsAnotherJobIn) {
  RuntimeOptions o = ModuleOptions("tcp", nullptr);
  o.job_secret = TestSecret(1);
  auto server = Runtime::Init(o);
  o.job_secret = TestSecret(2);
  auto client = Runtime::Init(o);
  o.job_secret = TestSecret(3);
  auto outsider = Runtime::Init(o);
  ASSERT_TRUE(server.ok() && client.ok() && outsider.ok());
  std::atomic<int> got{0};
  auto ctx = (*server)->CreateContext({.name = "s"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  ASSERT_TRUE(ep->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; }).ok());
  ASSERT_TRUE((*client)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("x")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 1; }));
  // The outsider's copy of the startpoint lacks the token: it proves its own job's secret.
  auto stripped = std::make_shared<DescriptorTable>(ep->MakeStartpoint().descriptors());
  std::erase_if(stripped->entries, [](const Descriptor& d) { return d.module == kAuthDescriptor; });
  const Status st = (*outsider)->SendRsr(Buffer(), Startpoint(stripped, 1, 1), HandlerId::Of("x"));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("did not prove the job secret"), std::string::npos) << st.ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(got.load(), 1);
}

}  // namespace
}  // namespace ukai::rt::testing
