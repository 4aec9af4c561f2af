// Dynamic join: a running process publishes one startpoint as a string; a new process,
// given only that string on its command line, joins: it connects through a module from the
// startpoint's descriptor table, sends its own startpoint, and is answered.
//
//   rt_example_dynamic_join                  # serves, and starts a joiner itself
//   rt_example_dynamic_join --serve FILE     # serves; writes the startpoint to FILE
//   rt_example_dynamic_join --join STRING    # joins the server named by STRING
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

bool WaitUntil(const std::atomic<bool>& flag, int seconds) {
  for (int i = 0; i < seconds * 1000 && !flag.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return flag.load();
}

int Join(rt::Runtime& runtime, const std::string& text) {
  auto server = rt::Startpoint::FromString(text);
  if (!server.ok())
    return std::fprintf(stderr, "join: %s\n", server.status().ToString().c_str()), 1;
  std::atomic<bool> welcomed{false};
  auto ctx = runtime.CreateContext({.name = "joiner"});
  rt::Endpoint* ep = *(*ctx)->CreateEndpoint();
  ep->RegisterHandler("welcome", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
    std::printf("joiner: %s\n", m.reader().GetString()->c_str());
    welcomed = true;
  });
  rt::Buffer b;
  b.PutString("pid " + std::to_string(::getpid()));
  b.PutStartpoint(ep->MakeStartpoint());
  ukai::Status st = runtime.SendRsr(std::move(b), *server, rt::HandlerId::Of("join"));
  if (!st.ok()) return std::fprintf(stderr, "join: %s\n", st.ToString().c_str()), 1;
  std::printf("joiner: joined via %s\n", runtime.SelectModule(*server)->c_str());
  return WaitUntil(welcomed, 30) ? 0 : 1;
}

int Serve(rt::Runtime& runtime, const std::string& file, const char* self) {
  std::atomic<bool> joined{false};
  auto ctx = runtime.CreateContext({.name = "server"});
  rt::Endpoint* ep = *(*ctx)->CreateEndpoint();
  ep->RegisterHandler("join", rt::HandlerKind::kThreaded, [&](rt::Rsr& m) {
    std::string who = *m.reader().GetString();
    rt::Startpoint back = *m.reader().GetStartpoint();
    std::printf("server: %s joined\n", who.c_str());
    rt::Buffer b;
    b.PutString("welcome, " + who);
    joined = m.runtime().SendRsr(std::move(b), back, rt::HandlerId::Of("welcome")).ok();
  });
  const std::string sp = ep->MakeStartpoint().ToString();
  if (!file.empty()) {
    std::ofstream(file) << sp << "\n";
    return WaitUntil(joined, 120) ? 0 : 1;
  }
  pid_t child = ::fork();  // no runtime threads are touched by the child: it execs at once
  if (child == 0) {
    ::execl(self, self, "--join", sp.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WaitUntil(joined, 5) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  rt::RuntimeOptions base;
  base.bootstrap = "single";
  base.modules = {"tcp"};
  // A handler that throws (here: `join` dereferencing the unpack of a malformed RSR) is
  // caught by the runtime, which reports it here and goes on; so is an RSR of ours that the
  // peer refused (no such handler).
  base.on_error = [](const rt::ErrorEvent& e) {
    std::fprintf(
        stderr, "%s from runtime %016llx: %s\n",
        e.kind == rt::ErrorEvent::Kind::kHandlerFailed ? "handler failed on an RSR" : "RSR refused",
        static_cast<unsigned long long>(e.peer), e.reason.ToString().c_str());
  };
  auto runtime = rt::Runtime::Init(argc, argv, base);
  if (!runtime.ok()) return std::fprintf(stderr, "%s\n", runtime.status().ToString().c_str()), 1;
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::string arg = argc > 2 ? argv[2] : "";
  int rc = 0;
  if (mode == "--join") {
    rc = Join(**runtime, arg);
  } else if (mode == "--serve" || mode.empty()) {
    rc = Serve(**runtime, arg, "/proc/self/exe");
  } else {
    std::fprintf(stderr, "usage: %s [--serve FILE | --join STARTPOINT]\n", argv[0]);
    rc = 2;
  }
  (*runtime)->Finalize();
  return rc;
}
