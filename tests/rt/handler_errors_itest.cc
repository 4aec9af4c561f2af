// The reproduction of issue 8's crash, end to end: the dynamic_join example serves (tcp),
// an RSR with an empty payload goes to its `join` handler (which dereferences its unpacks),
// and the server must survive it: it reports the failed handler, then a real joiner is
// welcomed and the server exits 0. Before the fix the server aborted (exit 134).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

pid_t Spawn(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) {
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

TEST(DynamicJoinExample, EmptyPayloadToJoinDoesNotKillTheServer) {
  const std::string file = "/tmp/ukai_handler_errors_itest_" + std::to_string(::getpid());
  ::unlink(file.c_str());
  const pid_t server = Spawn({UKAI_EXAMPLE_DYNAMIC_JOIN, "--serve", file});
  ASSERT_GT(server, 0);
  std::string text;
  ASSERT_TRUE(testing::WaitFor([&] {
    std::ifstream in(file);
    return static_cast<bool>(std::getline(in, text)) && !text.empty();
  }));
  Result<Startpoint> sp = Startpoint::FromString(text);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();

  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"tcp"};
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  ASSERT_TRUE((*rt)->SendRsr(Buffer(), *sp, HandlerId::Of("join")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int st = 0;
  ASSERT_EQ(::waitpid(server, &st, WNOHANG), 0) << "the server died, status " << st;

  const pid_t joiner = Spawn({UKAI_EXAMPLE_DYNAMIC_JOIN, "--join", text});
  EXPECT_EQ(WaitExit(joiner, 60), 0);
  EXPECT_EQ(WaitExit(server, 60), 0);
  EXPECT_TRUE((*rt)->Finalize().ok());
  ::unlink(file.c_str());
}

}  // namespace
}  // namespace ukai::rt
