// ukai_rt_request_bench: request/reply round trips per second (Runtime::Request) beside the
// one-way RSR rate and a hand-made RSR ping-pong, per module, 8-byte payloads.
//
// Set-up: two runtimes in this process with the DEFAULT settings (progress threads on,
// spin_us default, no pinning) talking through the module under test (inproc: a shared
// fabric; tcp: 127.0.0.1). Non-threaded handlers. Series:
//  * one-way RSR: the sender sends RSRs to a counting handler, at most 4096 unreceived at
//    a time; messages received per second.
//  * RSR ping-pong: SendRsr "ping", the handler answers with SendRsr "pong"; the sender
//    waits for it (the pending-request table written by hand); round trips per second.
//  * request/reply, 1 outstanding: Request(...).Wait() in a loop; round trips per second.
//  * request/reply, 64 outstanding: the callback form keeping 64 requests in flight.
// Each figure is the median of --runs runs (default 3) of --seconds each (default 0.5),
// printed with the range of the runs.
//
//   ukai_rt_request_bench [--modules=inproc,shm,tcp] [--seconds=S] [--runs=N] [--ukai-...]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Pair {
  std::unique_ptr<rt::Runtime> a, b;
  rt::Startpoint to_b, to_a;
  std::atomic<uint64_t> sunk{0}, pongs{0};
};

// Two runtimes joined by `module`; b serves "sink", "ping", "rpc"; a serves "pong".
ukai::Status MakePair(const std::string& module, const rt::RuntimeOptions& base, Pair* p) {
  auto fabric = rt::NewInprocFabric();
  for (auto* slot : {&p->a, &p->b}) {
    rt::RuntimeOptions o = base;
    o.bootstrap = "single";
    o.modules = {module};
    o.params["tcp.listen"] = "127.0.0.1:0";
    if (module == "inproc") o.inproc_fabric = fabric;
    auto r = rt::Runtime::Init(o);
    if (!r.ok()) return r.status();
    *slot = std::move(*r);
  }
  auto cb = p->b->CreateContext({.name = "b"});
  auto ca = p->a->CreateContext({.name = "a"});
  if (!cb.ok() || !ca.ok()) return ukai::Status::Internal("context");
  rt::Endpoint* eb = *(*cb)->CreateEndpoint();
  rt::Endpoint* ea = *(*ca)->CreateEndpoint();
  p->to_b = eb->MakeStartpoint();
  p->to_a = ea->MakeStartpoint();
  const rt::HandlerKind nt = rt::HandlerKind::kNonThreaded;
  UKAI_RETURN_IF_ERROR(eb->RegisterHandler("sink", nt, [p](rt::Rsr&) { ++p->sunk; }).status());
  UKAI_RETURN_IF_ERROR(eb->RegisterHandler("ping", nt, [p](rt::Rsr& m) {
                           rt::Buffer b;
                           b.PutU64(*m.reader().GetU64());
                           m.runtime().SendRsr(std::move(b), p->to_a, rt::HandlerId::Of("pong"));
                         }).status());
  UKAI_RETURN_IF_ERROR(eb->RegisterHandler("rpc", nt, [](rt::Rsr& m) {
                           rt::Buffer b;
                           b.PutU64(*m.reader().GetU64());
                           m.Reply(std::move(b));
                         }).status());
  return ea->RegisterHandler("pong", nt, [p](rt::Rsr&) { ++p->pongs; }).status();
}

rt::Buffer Eight(uint64_t v) {
  rt::Buffer b;
  b.PutU64(v);
  return b;
}

double OneWay(Pair& p, double seconds) {
  const rt::HandlerId sink = rt::HandlerId::Of("sink");
  const uint64_t base = p.sunk.load();
  uint64_t sent = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    for (int i = 0; i < 256; ++i, ++sent) {
      if (!p.a->SendRsr(Eight(sent), p.to_b, sink).ok()) return 0;
    }
    while (sent - (p.sunk.load() - base) > 4096) std::this_thread::yield();
  }
  while (p.sunk.load() - base < sent) std::this_thread::yield();
  return static_cast<double>(sent) / Seconds(t0);
}

double PingPong(Pair& p, double seconds) {
  const rt::HandlerId ping = rt::HandlerId::Of("ping");
  uint64_t n = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    const uint64_t want = p.pongs.load() + 1;
    if (!p.a->SendRsr(Eight(n), p.to_b, ping).ok()) return 0;
    while (p.pongs.load() < want) std::this_thread::yield();
    ++n;
  }
  return static_cast<double>(n) / Seconds(t0);
}

double RequestSerial(Pair& p, double seconds) {
  const rt::HandlerId rpc = rt::HandlerId::Of("rpc");
  uint64_t n = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    if (!p.a->Request(Eight(n), p.to_b, rpc).Wait().ok()) return 0;
    ++n;
  }
  return static_cast<double>(n) / Seconds(t0);
}

double RequestWindow(Pair& p, double seconds) {
  const rt::HandlerId rpc = rt::HandlerId::Of("rpc");
  constexpr uint64_t kWindow = 64;
  std::atomic<uint64_t> done{0}, failed{0};
  uint64_t issued = 0;
  const auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    while (issued - done.load() < kWindow) {
      ukai::Status st = p.a->Request(Eight(issued), p.to_b, rpc, [&](rt::Reply& r) {
        if (!r.ok()) ++failed;
        ++done;
      });
      if (!st.ok()) return 0;
      ++issued;
    }
    std::this_thread::yield();
  }
  while (done.load() < issued) std::this_thread::yield();
  return failed.load() == 0 ? static_cast<double>(issued) / Seconds(t0) : 0;
}

std::string Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f [%.0f-%.0f]", v[v.size() / 2], v.front(), v.back());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string ukai_args;  // for the header
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).substr(0, 7) != "--ukai-") continue;
    if (!ukai_args.empty()) ukai_args += ' ';
    ukai_args += argv[i];
  }
  rt::RuntimeOptions base;
  auto parsed = rt::ParseRuntimeArgs(argc, argv, &base);  // --ukai-* for both runtimes
  if (!parsed.ok()) return std::fprintf(stderr, "%s\n", parsed.ToString().c_str()), 2;
  std::vector<std::string> modules = {"inproc", "shm", "tcp"};
  double seconds = 0.5;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--modules=", 0) == 0) {
      modules.clear();
      std::string list = a.substr(10);
      for (size_t s = 0; s <= list.size();) {
        size_t c = std::min(list.find(',', s), list.size());
        if (c > s) modules.push_back(list.substr(s, c - s));
        s = c + 1;
      }
    } else if (a.rfind("--seconds=", 0) == 0) {
      seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--runs=", 0) == 0) {
      runs = std::max(1, std::atoi(a.c_str() + 7));
    } else {
      std::fprintf(stderr, "usage: %s [--modules=a,b] [--seconds=S] [--runs=N] [--ukai-...]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf(
      "request/reply vs one-way RSRs, 8-byte payloads, runtime settings: %s, "
      "two runtimes in one process; median [min-max] of %d runs of %.2f s\n",
      ukai_args.empty() ? "defaults" : ukai_args.c_str(), runs, seconds);
  std::printf("%-7s | %-26s | %-26s | %-26s | %-26s\n", "module", "one-way RSR msgs/s",
              "RSR ping-pong round trips/s", "request/reply rt/s (1 out)",
              "request/reply rt/s (64 out)");
  using Fn = double (*)(Pair&, double);
  const Fn series[] = {OneWay, PingPong, RequestSerial, RequestWindow};
  for (const std::string& m : modules) {
    Pair p;
    ukai::Status st = MakePair(m, base, &p);
    if (!st.ok()) {
      std::printf("%-7s | %s\n", m.c_str(), st.ToString().c_str());
      continue;
    }
    std::string cells[4];
    for (int s = 0; s < 4; ++s) {
      std::vector<double> v;
      for (int r = 0; r < runs; ++r) v.push_back(series[s](p, seconds));
      cells[s] = Median(v);
    }
    std::printf("%-7s | %-26s | %-26s | %-26s | %-26s\n", m.c_str(), cells[0].c_str(),
                cells[1].c_str(), cells[2].c_str(), cells[3].c_str());
    p.a->Finalize();
    p.b->Finalize();
  }
  return 0;
}
