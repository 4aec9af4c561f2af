// ukai_rt_connect_bench: what setting up a connection to a new peer costs, per module, and
// what the connection costs afterwards. For each of --pairs fresh pairs of runtimes in this
// process (default settings, progress threads on, tcp on 127.0.0.1), the client measures
//  * connect: SelectModule(startpoint) of the server, i.e. the module's Connect (for tcp
//    the TCP connect and, with authentication, the whole handshake);
//  * first RSR: from before that call until the server's handler for the first RSR ran.
// Then, on one more pair per module, after set-up:
//  * latency: --round-trips 8-byte RSR ping-pongs (non-threaded handlers on both sides);
//    one-way = median round trip / 2;
//  * message rate: --messages 8-byte RSRs sent back to back (SendRsr blocks when the
//    receiver's queue is full); messages / time until the server's handler saw the last.
// Runtime start and finalize are not timed. Prints the median and the 10th and 90th
// percentiles in microseconds, and one line "RESULT module connect_us first_rsr_us
// latency_us rate_msgs" per module for scripts (bench/rt/auth_cost.sh). Uses only the
// public API, so the same file builds against an older library for a before/after
// comparison (docs/performance.md, "Authenticated connections").
//
//   ukai_rt_connect_bench [--modules=tcp,shm] [--pairs=N] [--round-trips=N] [--messages=N]
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

bool StartPair(const std::string& module, std::unique_ptr<rt::Runtime>* server,
               std::unique_ptr<rt::Runtime>* client) {
  for (auto* slot : {server, client}) {
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
  return true;
}

bool OnePair(const std::string& module, Sample* out) {
  std::unique_ptr<rt::Runtime> server, client;
  if (!StartPair(module, &server, &client)) return false;
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

struct AfterSetUp {
  double latency_us = 0;  // one-way, median round trip / 2
  double rate_msgs = 0;   // 8-byte RSRs per second
};

// Ping-pong and message rate between a connected pair (8-byte payloads).
bool MeasureAfterSetUp(const std::string& module, int round_trips, int messages, AfterSetUp* out) {
  std::unique_ptr<rt::Runtime> server, client;
  if (!StartPair(module, &server, &client)) return false;
  std::atomic<uint64_t> pongs{0}, counted{0};
  auto sctx = server->CreateContext({.name = "server"});
  auto cctx = client->CreateContext({.name = "client"});
  if (!sctx.ok() || !cctx.ok()) return false;
  auto sep = (*sctx)->CreateEndpoint();
  auto cep = (*cctx)->CreateEndpoint();
  if (!sep.ok() || !cep.ok()) return false;
  const rt::Startpoint to_server = (*sep)->MakeStartpoint();
  const rt::Startpoint to_client = (*cep)->MakeStartpoint();
  rt::Runtime* srv = server.get();
  bool ok = (*sep)
                ->RegisterHandler("ping", rt::HandlerKind::kNonThreaded,
                                  [&, srv](rt::Rsr& r) {
                                    rt::Buffer b;
                                    b.PutBytes(r.payload());
                                    (void)srv->SendRsr(std::move(b), to_client,
                                                       rt::HandlerId::Of("pong"));
                                  })
                .ok() &&
            (*sep)
                ->RegisterHandler("count", rt::HandlerKind::kNonThreaded,
                                  [&](rt::Rsr&) { counted.fetch_add(1); })
                .ok() &&
            (*cep)
                ->RegisterHandler("pong", rt::HandlerKind::kNonThreaded,
                                  [&](rt::Rsr&) { pongs.fetch_add(1); })
                .ok();
  if (!ok) return false;
  const auto give_up = Clock::now() + std::chrono::seconds(120);
  auto wait_until = [&](const std::atomic<uint64_t>& v, uint64_t n) {
    while (v.load(std::memory_order_acquire) < n) {
      if (Clock::now() > give_up) return false;
      std::this_thread::yield();  // two cores: leave them to the progress threads
    }
    return true;
  };
  std::vector<double> rtt;
  rtt.reserve(static_cast<size_t>(round_trips));
  const uint64_t payload = 0x0123456789abcdefULL;
  for (int i = -100; i < round_trips; ++i) {  // 100 warm-up round trips (and the connect)
    rt::Buffer b;
    b.PutU64(payload);
    const auto t0 = Clock::now();
    if (!client->SendRsr(std::move(b), to_server, rt::HandlerId::Of("ping")).ok()) return false;
    if (!wait_until(pongs, static_cast<uint64_t>(i + 101))) return false;
    if (i >= 0) rtt.push_back(Us(Clock::now() - t0));
  }
  const auto t0 = Clock::now();
  for (int i = 0; i < messages; ++i) {
    rt::Buffer b;
    b.PutU64(payload);
    if (!client->SendRsr(std::move(b), to_server, rt::HandlerId::Of("count")).ok()) return false;
  }
  if (!wait_until(counted, static_cast<uint64_t>(messages))) return false;
  const double seconds = Us(Clock::now() - t0) / 1e6;
  std::sort(rtt.begin(), rtt.end());
  out->latency_us = rtt[rtt.size() / 2] / 2;
  out->rate_msgs = messages / seconds;
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
  int round_trips = 20000;
  int messages = 200000;
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
    } else if (a.rfind("--round-trips=", 0) == 0) {
      round_trips = std::atoi(a.c_str() + 14);
    } else if (a.rfind("--messages=", 0) == 0) {
      messages = std::atoi(a.c_str() + 11);
    } else {
      std::fprintf(stderr,
                   "usage: ukai_rt_connect_bench [--modules=tcp,shm] [--pairs=N] "
                   "[--round-trips=N] [--messages=N]\n");
      return 2;
    }
  }
  if (pairs < 1 || round_trips < 1 || messages < 1 || modules.empty()) {
    std::fprintf(stderr,
                 "connect_bench: --pairs, --round-trips and --messages must be >= 1, "
                 "--modules non-empty\n");
    return 2;
  }
  std::printf(
      "connection set-up, %d fresh pairs of runtimes per module, default settings; "
      "microseconds: median [p10-p90]\n",
      pairs);
  std::printf(
      "module | connect (SelectModule)     | connect + first RSR handled | 8 B latency "
      "(us, one-way) | 8 B rate (msgs/s)\n");
  for (const std::string& m : modules) {
    std::vector<double> connect, first;
    for (int i = 0; i < pairs; ++i) {
      Sample s;
      if (!OnePair(m, &s)) return 1;
      connect.push_back(s.connect_us);
      first.push_back(s.first_rsr_us);
    }
    AfterSetUp after;
    if (!MeasureAfterSetUp(m, round_trips, messages, &after)) {
      std::fprintf(stderr, "connect_bench: %s: the ping-pong or the message stream failed\n",
                   m.c_str());
      return 1;
    }
    std::printf("%-6s | %8.1f [%8.1f-%8.1f] | %8.1f [%8.1f-%8.1f]  | %8.2f | %10.0f\n", m.c_str(),
                Percentile(connect, 0.5), Percentile(connect, 0.1), Percentile(connect, 0.9),
                Percentile(first, 0.5), Percentile(first, 0.1), Percentile(first, 0.9),
                after.latency_us, after.rate_msgs);
    std::printf("RESULT %s %.1f %.1f %.3f %.0f\n", m.c_str(), Percentile(connect, 0.5),
                Percentile(first, 0.5), after.latency_us, after.rate_msgs);
  }
  return 0;
}
