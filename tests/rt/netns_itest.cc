// The runtime across two network namespaces of this machine joined by a veth pair (needs
// root, as CI runs; skipped with a message otherwise). Both namespaces share this host's
// name, so peers must be told apart by what they are (boot id + network namespace,
// tcp_dial.h), not by name:
//  * a peer that listens on loopback only (the default of a job on one host) is reported
//    unreachable from the other namespace, with a message naming tcp.listen;
//  * with tcp.listen set to the veth addresses: a request/reply, an RMA put and get, and the
//    failure of the peer (killed) are seen across the namespaces.
// The server is rt_test_peer in namespace A; the client runs in a child forked into
// namespace B. Both prove one job secret (--ukai-job-secret-file, mode 0600).
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "rt_test_util.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::testing {
namespace {

constexpr char kAddrA[] = "10.77.0.1";
constexpr char kAddrB[] = "10.77.0.2";

int Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// Two namespaces named after this process, joined by a veth pair; removed on destruction.
class NetnsPair {
 public:
  NetnsPair() {
    const std::string id = std::to_string(::getpid());
    a_ = "ukai-" + id + "-a";
    b_ = "ukai-" + id + "-b";
    const std::string va = "uk" + id + "a", vb = "uk" + id + "b";
    if (::geteuid() != 0) {
      why_ = "needs root to create network namespaces (CI runs as root)";
      return;
    }
    for (const std::string& c :
         {"ip netns add " + a_, "ip netns add " + b_,
          "ip link add " + va + " type veth peer name " + vb, "ip link set " + va + " netns " + a_,
          "ip link set " + vb + " netns " + b_,
          "ip -n " + a_ + " addr add " + kAddrA + "/24 dev " + va,
          "ip -n " + b_ + " addr add " + kAddrB + "/24 dev " + vb,
          "ip -n " + a_ + " link set " + va + " up", "ip -n " + b_ + " link set " + vb + " up",
          "ip -n " + a_ + " link set lo up", "ip -n " + b_ + " link set lo up"}) {
      if (Sh(c) != 0) {
        why_ = "cannot set up the namespaces ('" + c + "' failed: no iproute2 or no CAP_NET_ADMIN)";
        return;
      }
    }
    ok_ = true;
  }
  ~NetnsPair() {
    Sh("ip netns del " + a_);
    Sh("ip netns del " + b_);
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  const std::string& a() const { return a_; }
  const std::string& b() const { return b_; }

 private:
  std::string a_, b_, why_;
  bool ok_ = false;
};

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// The client, in namespace B (a forked child: exits with 0 when every check passed,
// printing what failed otherwise). `ready` is written once the server may be killed.
int Client(const std::string& secret_file, const Startpoint& loopback_only,
           const Startpoint& server, const std::string& key_hex, int ready) {
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "netns client: %s\n", what.c_str());
    return 1;
  };
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"tcp"};
  o.params["tcp.listen"] = std::string(kAddrB) + ":0";
  o.job_secret_file = secret_file;
  std::atomic<int> failures{0};
  o.on_peer_event = [&](const PeerEvent& e) {
    if (e.peer == server.runtime() && !e.orderly) ++failures;
  };
  auto rt = Runtime::Init(o);
  if (!rt.ok()) return fail(rt.status().ToString());
  // 1. Loopback only, in the other namespace: a clear error, not a connection to our own
  //    127.0.0.1 (the host names are the same).
  Status st = (*rt)->SendRsr(Buffer(), loopback_only, HandlerId::Of("inc"));
  if (st.ok() || st.message().find("tcp.listen") == std::string::npos ||
      st.message().find("loopback only") == std::string::npos) {
    return fail("loopback-only peer: " + st.ToString());
  }
  // 2. Request/reply.
  Buffer q;
  q.PutU64(41);
  ReplyFuture f = (*rt)->Request(std::move(q), server, HandlerId::Of("inc"),
                                 {.timeout = std::chrono::seconds(20)});
  const Reply& r = f.Wait();
  if (!r.ok() || *r.reader().GetU64() != 42) return fail("request: " + r.status().ToString());
  // 3. RMA put and get.
  auto ctx = (*rt)->CreateContext({.name = "client"});
  auto rma = ctx.ok() ? Rma::Create(**ctx) : Result<std::unique_ptr<Rma>>(ctx.status());
  Result<RemoteKey> key = RemoteKey::Parse(FromHex(key_hex));
  if (!rma.ok() || !key.ok())
    return fail("rma set-up: " + rma.status().ToString() + " " + key.status().ToString());
  std::vector<uint8_t> in(256), out(256, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(255 - i);
  if (Status p = (*rma)->PutSync(*key, 128, in); !p.ok()) return fail("put: " + p.ToString());
  if (Status g = (*rma)->GetSync(*key, 128, out); !g.ok()) return fail("get: " + g.ToString());
  if (out != in) return fail("get returned other bytes than were put");
  std::vector<uint8_t> head(8);
  if (!(*rma)->GetSync(*key, 0, head).ok() || head[1] != 7) return fail("server's bytes");
  // 4. The server dies: a request it holds fails, and the failure is reported.
  ReplyFuture held = (*rt)->Request(Buffer(), server, HandlerId::Of("hold"),
                                    {.timeout = std::chrono::seconds(30)});
  if (::write(ready, "k", 1) != 1) return fail("pipe");
  const Reply& h = held.Wait();
  if (h.status().code() != StatusCode::kUnavailable)
    return fail("held request: " + h.status().ToString());
  if (!WaitFor([&] { return failures.load() == 1; })) return fail("no peer event for the server");
  rma->reset();
  (void)(*rt)->Finalize();
  return 0;
}

TEST(Netns, RequestRmaAndFailureAcrossTwoNetworkNamespaces) {
  NetnsPair ns;
  if (!ns.ok()) GTEST_SKIP() << "network namespace test skipped: " << ns.why();
  // The job secret, in an owner-only file both sides read.
  char secret_file[] = "/tmp/ukai-netns-secret-XXXXXX";
  const int sfd = ::mkstemp(secret_file);
  ASSERT_GE(sfd, 0);
  const std::string hex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  ASSERT_EQ(::write(sfd, hex.data(), hex.size()), static_cast<ssize_t>(hex.size()));
  ::close(sfd);
  const std::string secret_opt = std::string("--ukai-job-secret-file=") + secret_file;
  PeerProcess loopback({secret_opt, "--ukai-modules=tcp", "--ukai-bootstrap=single"}, ns.a());
  ASSERT_TRUE(loopback.error().empty()) << loopback.error();
  PeerProcess server(
      {"--rma-bytes=4096", secret_opt, "--ukai-modules=tcp", "--ukai-bootstrap=single",
       std::string("--ukai-param=tcp.listen=") + kAddrA + ":0"},
      ns.a());
  ASSERT_TRUE(server.error().empty()) << server.error();
  const std::string key_hex = server.ReadLine();
  ASSERT_FALSE(key_hex.empty());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t client = ::fork();
  if (client == 0) {
    ::close(ready[0]);
    const int nsfd = ::open(("/run/netns/" + ns.b()).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0 || ::setns(nsfd, CLONE_NEWNET) != 0) ::_exit(126);
    ::_exit(Client(secret_file, loopback.startpoint(), server.startpoint(), key_hex, ready[1]));
  }
  ::close(ready[1]);
  char k = 0;
  pollfd p{ready[0], POLLIN, 0};
  if (::poll(&p, 1, 60000) > 0 && ::read(ready[0], &k, 1) == 1) server.Kill();
  ::close(ready[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  ::unlink(secret_file);
  ASSERT_TRUE(WIFEXITED(status)) << "client killed by a signal";
  EXPECT_EQ(k, 'k') << "the client did not get as far as the failure check";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the client's message above";
}

}  // namespace
}  // namespace ukai::rt::testing
