// `ukai launch --keep-going` (LaunchOptions::keep_going): rank 2 of 3 is killed with
// SIGKILL after the start-up; ranks 0 and 1 get the peer event for it, go on talking to
// each other, meet in a barrier of the two living ranks and exit 0 (each writes a marker
// file); the launcher returns 137 (the dead rank's code) once all ended. The same job
// without keep_going ends at once (tested in launch_itest.cc).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include "gtest/gtest.h"
#include "rt/launch/launcher.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

constexpr ContextId kCtx = 1;
constexpr EndpointId kEp = 1;

std::string MarkerDir() {
  const char* d = std::getenv("UKAI_KEEP_GOING_ITEST_DIR");
  return d == nullptr ? "" : d;
}

TEST(KeepGoingWorker, RankTwoDies) {
  if (MarkerDir().empty()) GTEST_SKIP() << "run by KeepGoingTest";
  std::mutex mu;
  std::vector<PeerEvent> events;
  std::atomic<int> hellos{0};
  RuntimeOptions base;
  base.on_peer_event = [&](const PeerEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  };
  int argc = 1;
  char arg0[] = "worker";
  char* argv[] = {arg0, nullptr};
  auto made = Runtime::Init(argc, argv, base);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Runtime& r = **made;
  ASSERT_TRUE(r.CreateContext({.id = kCtx,
                               .init = [&](Context& c) -> Status {
                                 auto ep = c.CreateEndpoint({kEp});
                                 if (!ep.ok()) return ep.status();
                                 return (*ep)
                                     ->RegisterHandler("hello", HandlerKind::kNonThreaded,
                                                       [&](Rsr&) { ++hellos; })
                                     .status();
                               }})
                  .ok());
  ASSERT_TRUE(r.Barrier().ok());
  auto send_to = [&](int peer) {
    auto sp = r.WorldStartpoint(peer, kCtx, kEp);
    ASSERT_TRUE(sp.ok());
    ASSERT_TRUE(r.SendRsr(Buffer(), *sp, HandlerId::Of("hello")).ok());
  };
  for (int peer = 0; peer < r.size(); ++peer) {
    if (peer != r.rank()) send_to(peer);
  }
  ASSERT_TRUE(testing::WaitFor([&] { return hellos.load() == r.size() - 1; }));
  ASSERT_TRUE(r.Barrier().ok());  // everyone is connected to everyone
  if (r.rank() == 2) ::raise(SIGKILL);
  const RuntimeId dead = r.WorldStartpoint(2, kCtx, kEp)->runtime();
  ASSERT_TRUE(testing::WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    for (const PeerEvent& e : events) {
      if (e.peer == dead && !e.orderly) return true;
    }
    return false;
  }));
  send_to(1 - r.rank());  // the survivors go on
  ASSERT_TRUE(testing::WaitFor([&] { return hellos.load() == r.size(); }));
  ASSERT_TRUE(r.Barrier().ok());  // of the two living ranks
  EXPECT_TRUE(r.Finalize().ok());
  std::ofstream(MarkerDir() + "/rank" + std::to_string(r.rank()) + ".ok") << "ok\n";
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(KeepGoingTest, SurvivorsGetThePeerEventAndGoOn) {
  for (const char* module : {"shm", "tcp"}) {
    const std::string dir = "/tmp/ukai_keep_going_" + std::to_string(::getpid()) + module;
    ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
    ::setenv("UKAI_KEEP_GOING_ITEST_DIR", dir.c_str(), 1);
    LaunchOptions o;
    o.processes = 3;
    o.modules = {module};
    o.keep_going = true;
    o.timeout_s = 60;
    o.command = {SelfExe(), "--gtest_filter=KeepGoingWorker.RankTwoDies"};
    const auto t0 = std::chrono::steady_clock::now();
    Result<int> code = Launch(o);
    ::unsetenv("UKAI_KEEP_GOING_ITEST_DIR");
    ASSERT_TRUE(code.ok()) << code.status().ToString();
    EXPECT_EQ(*code, 128 + SIGKILL) << module;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(40));
    for (int rank : {0, 1}) {
      EXPECT_TRUE(std::ifstream(dir + "/rank" + std::to_string(rank) + ".ok").good())
          << module << ": rank " << rank << " did not finish";
    }
    EXPECT_FALSE(std::ifstream(dir + "/rank2.ok").good());
    EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
  }
}

}  // namespace
}  // namespace ukai::rt
