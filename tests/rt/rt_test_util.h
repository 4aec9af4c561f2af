// Helpers for runtime tests: waiting with a deadline and runtime options per module.
#ifndef UKAI_TESTS_RT_RT_TEST_UTIL_H_
#define UKAI_TESTS_RT_RT_TEST_UTIL_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "rt/core/virtual_time.h"
#include "sim_test_util.h"
#include "ukai/ukai.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt::testing {

// Polls `pred` until it holds or `timeout` passes; returns its last value.
inline bool WaitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return pred();
    internal::ThreadWaitsOutsideRuntime();  // the sim module's machine may advance
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A raw client socket connected to `rt`'s tcp listener on 127.0.0.1, or -1.
inline int ConnectToTcp(const Runtime& rt) {
  const Descriptor* d = rt.descriptors().Find("tcp");
  if (d == nullptr) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  // The tcp descriptor (src/rt/modules/tcp/tcp_dial.h): u8 version, u16 port, ...
  if (d->bytes.size() < 3) return -1;
  addr.sin_port = htons(wire::GetLe16(d->bytes.data() + 1));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Options for a test runtime that talks through `module` (fabric shared for inproc).
inline RuntimeOptions ModuleOptions(const std::string& module,
                                    const std::shared_ptr<InprocFabric>& fabric) {
  RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {module};
  o.spin_us = 50;
  o.handler_threads = 4;
  o.params["tcp.listen"] = "127.0.0.1:0";
  if (module == "inproc") o.inproc_fabric = fabric;
  if (module == "sim") o.sim_fabric = SimFabricFor(fabric);
  return o;
}

// Starts a runtime with `options` (appended to `rts`, which owns it) and creates one context
// named `name` in it: the test fixtures' common set-up.
inline Result<Context*> StartWithContext(const RuntimeOptions& options, const std::string& name,
                                         std::vector<std::unique_ptr<Runtime>>* rts) {
  auto rt = Runtime::Init(options);
  if (!rt.ok()) return rt.status();
  rts->push_back(std::move(*rt));
  return rts->back()->CreateContext({.name = name});
}

// Two runtimes of this process joined by shm only (module parameters `params`); b has one
// context with endpoint ep_b.
struct ShmPair {
  std::unique_ptr<Runtime> a, b;
  Endpoint* ep_b = nullptr;
};
inline ShmPair MakeShmPair(const std::map<std::string, std::string>& params) {
  ShmPair p;
  for (auto* slot : {&p.a, &p.b}) {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"shm"};
    o.spin_us = 50;
    o.params = params;
    auto rt = Runtime::Init(o);
    if (!rt.ok()) {
      ADD_FAILURE() << rt.status().ToString();
      return p;
    }
    *slot = std::move(*rt);
  }
  auto ctx = p.b->CreateContext({.name = "b"});
  auto ep = ctx.ok() ? (*ctx)->CreateEndpoint() : Result<Endpoint*>(ctx.status());
  if (!ep.ok()) {
    ADD_FAILURE() << ep.status().ToString();
    return p;
  }
  p.ep_b = *ep;
  return p;
}

// A peer process (tests/rt/tools/test_peer_main.cc) started by the test itself. It prints
// its startpoint on stdout; its endpoint has handlers "echo" (u64 v + startpoint reply ->
// RSR "echo_reply" with v + 1 to reply), "sink" (counted; its u64 must be the count so far:
// send order), "report" (prints "sink N bad M": RSRs sunk, of them out of order) and "quit".
// Killed (SIGKILL) on destruction. With `netns`, it runs in the network namespace
// /run/netns/NETNS (netns_itest.cc).
class PeerProcess {
 public:
  explicit PeerProcess(std::vector<std::string> args, const std::string& netns = "") {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!netns.empty()) {
        const int ns = ::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
        if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) ::_exit(126);
      }
      ::dup2(out[1], 1);
      ::close(out[0]);
      std::vector<char*> argv;
      static char peer_path[] = UKAI_TEST_PEER;
      argv.push_back(peer_path);
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(peer_path, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    char ch;
    while (::read(out[0], &ch, 1) == 1 && ch != '\n') line.push_back(ch);
    out_fd_ = out[0];
    Result<Startpoint> sp = Startpoint::FromString(line);
    if (sp.ok()) startpoint_ = *sp;
    error_ = sp.ok() ? "" : sp.status().ToString() + " (peer printed '" + line + "')";
  }
  ~PeerProcess() {
    Kill();
    if (out_fd_ >= 0) ::close(out_fd_);
  }
  void Kill() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  // Waits for a normal exit; returns the exit status or -1.
  int Wait() {
    int st = 0;
    if (pid_ <= 0 || ::waitpid(pid_, &st, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  // The next line the peer prints on stdout ("" after `timeout` or at EOF).
  std::string ReadLine(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char ch;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      if (::read(out_fd_, &ch, 1) != 1) break;
      if (ch == '\n') return line;
      line.push_back(ch);
    }
    return line;
  }
  // Sends `sig` (SIGSTOP, SIGCONT ...) to the peer.
  void Signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  const Startpoint& startpoint() const { return startpoint_; }
  const std::string& error() const { return error_; }
  pid_t pid() const { return pid_; }  // -1 once killed or waited for

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  Startpoint startpoint_;
  std::string error_;
};

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_RT_TEST_UTIL_H_
