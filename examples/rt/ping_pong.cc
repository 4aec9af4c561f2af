// Ping-pong: two runtimes (in this process, talking through the module chosen by
// --ukai-modules, e.g. tcp or inproc) bounce an RSR back and forth and report the average
// round-trip time. Non-threaded handlers reply straight from the progress thread.
//
//   rt_example_ping_pong --ukai-modules=tcp [ROUNDS] [BYTES]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  rt::RuntimeOptions base;
  base.bootstrap = "single";
  base.params["tcp.listen"] = "127.0.0.1:0";
  // Share an inproc fabric only when inproc is asked for: otherwise the two runtimes look
  // like separate processes to each other and use the requested module.
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).find("--ukai-modules=") == 0 &&
        std::string(argv[i]).find("inproc") != std::string::npos) {
      base.inproc_fabric = rt::NewInprocFabric();
    }
  }
  auto a = rt::Runtime::Init(argc, argv, base);
  if (!a.ok()) return std::fprintf(stderr, "%s\n", a.status().ToString().c_str()), 1;
  // The second runtime loads the same modules as the first.
  rt::RuntimeOptions same = base;
  for (const std::string& m : (*a)->modules()) same.modules.push_back(m);
  auto b = rt::Runtime::Init(same);
  if (!b.ok()) return std::fprintf(stderr, "%s\n", b.status().ToString().c_str()), 1;

  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10000;
  const size_t bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8;
  std::atomic<int> count{0};
  rt::Startpoint sp_a, sp_b;
  const rt::HandlerId kPing = rt::HandlerId::Of("ping"), kPong = rt::HandlerId::Of("pong");
  std::vector<uint8_t> payload(bytes, 0xab);

  auto ca = (*a)->CreateContext({.name = "a"});
  auto cb = (*b)->CreateContext({.name = "b"});
  if (!ca.ok() || !cb.ok()) return 1;
  rt::Endpoint* ea = *(*ca)->CreateEndpoint();
  rt::Endpoint* eb = *(*cb)->CreateEndpoint();
  sp_a = ea->MakeStartpoint();
  sp_b = eb->MakeStartpoint();
  eb->RegisterHandler("ping", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
    rt::Buffer r(bytes + 8);
    r.PutBytes(*m.reader().GetBytes());  // echo, read in place
    m.runtime().SendRsr(std::move(r), sp_a, kPong);
  });
  ea->RegisterHandler("pong", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
    if (count.fetch_add(1) + 1 < rounds) {
      rt::Buffer r(bytes + 8);
      r.PutBytes(*m.reader().GetBytes());
      m.runtime().SendRsr(std::move(r), sp_b, kPing);
    }
  });
  std::printf("module: %s\n", (*a)->SelectModule(sp_b)->c_str());
  auto t0 = std::chrono::steady_clock::now();
  rt::Buffer first(bytes + 8);
  first.PutBytes(payload);
  if (!(*a)->SendRsr(std::move(first), sp_b, kPing).ok()) return 1;
  while (count.load() < rounds) std::this_thread::yield();
  double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%d round trips of %zu bytes: %.2f us per round trip (%.2f us one way)\n", rounds,
              bytes, us / rounds, us / rounds / 2);
  (*b)->Finalize();
  (*a)->Finalize();
  return 0;
}
