// `ukai launch` end to end: the launcher (rt::Launch) starts this test binary N times with
// a worker filter; each worker initialises a Runtime through the "launcher" bootstrap,
// checks rank/size and the module chosen per peer, exchanges RSRs with every other rank and
// meets the others in a barrier; the job secret reached it through a descriptor only. Also: a
// failing rank stops the job and its exit code is forwarded; an unknown program is an error.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "rt/launch/launcher.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

constexpr ContextId kCtx = 1;
constexpr EndpointId kEp = 1;

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Sets an environment variable for the scope (children inherit it through the launcher).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// The whole of /proc/self/<name> (NUL-separated for environ and cmdline).
std::string ProcSelf(const char* name) {
  std::ifstream in(std::string("/proc/self/") + name, std::ios::binary);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

// The job secret came down the descriptor UKAI_JOB_SECRET_FD names, which the runtime made
// close-on-exec; neither it nor its hex form is in the environment or the command line.
void CheckSecretHandedDownPrivately() {
  const char* fd_text = std::getenv("UKAI_JOB_SECRET_FD");
  ASSERT_NE(fd_text, nullptr);
  const int fd = std::atoi(fd_text);
  EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  std::string raw(32, '\0');
  ASSERT_EQ(pread(fd, raw.data(), raw.size(), 0), 32);
  std::string hex;
  for (unsigned char c : raw) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }
  for (const char* where : {"environ", "cmdline"}) {
    const std::string text = ProcSelf(where);
    EXPECT_FALSE(text.empty()) << where;
    EXPECT_EQ(text.find(hex), std::string::npos) << where;
    EXPECT_EQ(text.find(raw), std::string::npos) << where;
  }
}

bool IsWorker(const char* role) {
  const char* r = std::getenv("UKAI_LAUNCH_ITEST_ROLE");
  return r != nullptr && std::string(r) == role;
}

// Worker: every rank sends (rank, i) for i < kCount to every other rank with a
// non-threaded handler and checks the per-sender order of what it receives.
TEST(LaunchWorker, AllToAll) {
  if (!IsWorker("all_to_all")) GTEST_SKIP() << "run by LaunchTest";
  constexpr int kCount = 200;
  std::atomic<int> received{0};
  std::vector<int> next(64, 0);
  std::atomic<bool> in_order{true};
  RuntimeOptions base;
  base.bootstrap = "auto";
  int argc = 1;
  char arg0[] = "worker";
  char* argv[] = {arg0, nullptr};
  auto rt = Runtime::Init(argc, argv, base);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  CheckSecretHandedDownPrivately();
  const int size = r.size();
  ASSERT_EQ(size, std::atoi(std::getenv("UKAI_SIZE")));
  ASSERT_EQ(r.rank(), std::atoi(std::getenv("UKAI_RANK")));
  ContextOptions co;
  co.id = kCtx;
  co.init = [&](Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    return (*ep)
        ->RegisterHandler("count", HandlerKind::kNonThreaded,
                          [&](Rsr& rsr) {
                            auto from = rsr.reader().GetU32();
                            auto seq = rsr.reader().GetU32();
                            if (!from.ok() || !seq.ok() || *from >= next.size() ||
                                next[*from] != static_cast<int>(*seq)) {
                              in_order = false;
                            } else {
                              ++next[*from];
                            }
                            ++received;
                          })
        .status();
  };
  ASSERT_TRUE(r.CreateContext(co).ok());
  ASSERT_TRUE(r.Barrier().ok());  // every context exists before anyone sends
  const std::string want = std::getenv("UKAI_LAUNCH_ITEST_MODULE");
  for (int peer = 0; peer < size; ++peer) {
    if (peer == r.rank()) continue;
    auto sp = r.WorldStartpoint(peer, kCtx, kEp);
    ASSERT_TRUE(sp.ok()) << sp.status().ToString();
    auto module = r.SelectModule(*sp);
    ASSERT_TRUE(module.ok());
    EXPECT_EQ(*module, want);
    for (int i = 0; i < kCount; ++i) {
      Buffer b;
      b.PutU32(static_cast<uint32_t>(r.rank()));
      b.PutU32(static_cast<uint32_t>(i));
      ASSERT_TRUE(r.SendRsr(std::move(b), *sp, HandlerId::Of("count")).ok());
    }
  }
  ASSERT_TRUE(testing::WaitFor([&] { return received.load() == kCount * (size - 1); }))
      << "received " << received.load();
  EXPECT_TRUE(in_order.load());
  ASSERT_TRUE(r.Barrier().ok());  // nobody leaves while others still send
  EXPECT_TRUE(r.Finalize().ok());
}

TEST(LaunchWorker, FailOnRankOne) {
  if (!IsWorker("fail")) GTEST_SKIP() << "run by LaunchTest";
  if (std::atoi(std::getenv("UKAI_RANK")) == 1) _exit(7);
  sleep(60);  // the launcher must stop us
}

// Each child runs exactly one worker test (full name in the filter): a child that listed
// the other worker too would print "[  SKIPPED ]", which ctest's gtest integration reads
// in this test's output and then reports the parent as skipped.
const char* WorkerTest(const std::string& role) {
  return role == "fail" ? "LaunchWorker.FailOnRankOne" : "LaunchWorker.AllToAll";
}

int RunJob(int n, const std::vector<std::string>& modules, const char* role,
           const char* module_expected = "") {
  ScopedEnv r("UKAI_LAUNCH_ITEST_ROLE", role);
  ScopedEnv m("UKAI_LAUNCH_ITEST_MODULE", module_expected);
  LaunchOptions o;
  o.processes = n;
  o.modules = modules;
  o.timeout_s = 60;
  o.command = {SelfExe(), std::string("--gtest_filter=") + WorkerTest(role)};
  Result<int> code = Launch(o);
  EXPECT_TRUE(code.ok()) << code.status().ToString();
  return code.ok() ? *code : -1;
}

TEST(LaunchTest, ThreeProcessesOverShm) { EXPECT_EQ(RunJob(3, {"shm"}, "all_to_all", "shm"), 0); }

TEST(LaunchTest, ThreeProcessesOverTcp) { EXPECT_EQ(RunJob(3, {"tcp"}, "all_to_all", "tcp"), 0); }

TEST(LaunchTest, DefaultModulesPickShmOnOneHost) {
  EXPECT_EQ(RunJob(2, {}, "all_to_all", "shm"), 0);
}

TEST(LaunchTest, FailingRankStopsTheJobAndItsCodeIsForwarded) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(RunJob(3, {}, "fail"), 7);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(LaunchTest, BadOptionsAreErrors) {
  LaunchOptions o;
  o.processes = 2;
  o.command = {"/nonexistent/program"};
  EXPECT_EQ(Launch(o).status().code(), StatusCode::kNotFound);
  o.processes = 0;
  EXPECT_EQ(Launch(o).status().code(), StatusCode::kInvalidArgument);
  o.processes = 1;
  o.command.clear();
  EXPECT_EQ(Launch(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ukai::rt
