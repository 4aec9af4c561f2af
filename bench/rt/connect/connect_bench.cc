// ukai_rt_connect_bench: what setting up a connection to a new peer costs, per module. For
// each of --pairs fresh pairs of runtimes in this process (default settings, tcp on
// 127.0.0.1), the client measures
//  * connect: SelectModule(startpoint) of the server, i.e. the module's Connect (for tcp
//    the TCP connect and, with authentication, the whole handshake);
//  * first RSR: from before that call until the server's handler for the first RSR ran.
// Runtime start and finalize are not timed. Prints the median and the 10th and 90th
// percentiles in microseconds. Uses only the public API, so the same file builds against
// an older library for a before/after comparison (docs/performance.md).
//
//   ukai_rt_connect_bench [--modules=tcp,shm] [--pairs=N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Sample {
  double connect_us = 0;
  double first_rsr_us = 0;
};

bool OnePair(const std::string& module, Sample* out) {
  std::unique_ptr<rt::Runtime> server, client;
  for (auto* slot : {&server, &client}) {
    rt::RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {module};
    o.params["tcp.listen"] = "127.0.0.1:0";
    auto r = rt::Runtime::Init(o);
    if (!r.ok()) {
      std::fprintf(stderr, "connect_bench: %s\n", r.status().ToString().c_str());
      return false;
    }
    *slot = std::move(*r);
  }
  std::atomic<bool> got{false};
  auto ctx = server->CreateContext({.name = "server"});
  if (!ctx.ok()) return false;
  auto ep = (*ctx)->CreateEndpoint();
  if (!ep.ok() ||
      !(*ep)
           ->RegisterHandler("n", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { got = true; })
           .ok()) {
    return false;
  }
  const rt::Startpoint sp = (*ep)->MakeStartpoint();
  const auto t0 = Clock::now();
  auto chosen = client->SelectModule(sp);
  const auto t1 = Clock::now();
  if (!chosen.ok() || *chosen != module) {
    std::fprintf(stderr, "connect_bench: %s\n",
                 chosen.ok() ? ("chose " + *chosen).c_str() : chosen.status().ToString().c_str());
    return false;
  }
  if (!client->SendRsr(rt::Buffer(), sp, rt::HandlerId::Of("n")).ok()) return false;
  while (!got.load(std::memory_order_acquire)) {
    if (Clock::now() - t0 > std::chrono::seconds(10)) return false;
    std::this_thread::yield();  // two cores: leave them to the progress threads
  }
  const auto t2 = Clock::now();
  out->connect_us = Us(t1 - t0);
  out->first_rsr_us = Us(t2 - t0);
  (void)client->Finalize();
  (void)server->Finalize();
  return true;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> modules = {"tcp", "shm"};
  int pairs = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--modules=", 0) == 0) {
      modules.clear();
      std::string list = a.substr(10);
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) modules.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (a.rfind("--pairs=", 0) == 0) {
      pairs = std::atoi(a.c_str() + 8);
    } else {
      std::fprintf(stderr, "usage: ukai_rt_connect_bench [--modules=tcp,shm] [--pairs=N]\n");
      return 2;
    }
  }
  if (pairs < 1 || modules.empty()) {
    std::fprintf(stderr, "connect_bench: --pairs must be >= 1, --modules non-empty\n");
    return 2;
  }
  std::printf(
      "connection set-up, %d fresh pairs of runtimes per module, default settings; "
      "microseconds: median [p10-p90]\n",
      pairs);
  std::printf("module | connect (SelectModule)     | connect + first RSR handled\n");
  for (const std::string& m : modules) {
    std::vector<double> connect, first;
    for (int i = 0; i < pairs; ++i) {
      Sample s;
      if (!OnePair(m, &s)) return 1;
      connect.push_back(s.connect_us);
      first.push_back(s.first_rsr_us);
    }
    std::printf("%-6s | %8.1f [%8.1f-%8.1f] | %8.1f [%8.1f-%8.1f]\n", m.c_str(),
                Percentile(connect, 0.5), Percentile(connect, 0.1), Percentile(connect, 0.9),
                Percentile(first, 0.5), Percentile(first, 0.1), Percentile(first, 0.9));
  }
  return 0;
}
