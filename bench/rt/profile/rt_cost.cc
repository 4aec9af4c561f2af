// ukai_rt_cost: the cost of one small RSR on the send path and on the receive path, without
// a second core: two runtimes of this process (progress threads off) joined by one module
// (shm by default); one thread sends `--count` RSRs of `--bytes` payload bytes from A to a
// non-threaded counting handler of B in windows of `--window` (a Progress() of A after every
// 8th send, as ukai_rt_bench's streaming loop does), then drives B's Progress() until the
// window arrived. Prints the wall time per RSR of each side; run it under
// `valgrind --tool=callgrind --toggle-collect=...` for instruction counts per RSR (see
// docs/performance.md, "Issue 22").
//
//   ukai_rt_cost [--module=shm|tcp] [--count=N] [--bytes=N] [--window=N] [--heap | --send-bytes]
//                [--barrier[=N]] [--ukai-...]
// --heap sends plain heap Buffers (else Runtime::NewBuffer, as the bench's default series);
// --send-bytes sends by Runtime::SendRsrBytes from an array (ukai_rt_bench's "ukai shm bytes").
// --barrier[=N] measures a Group barrier instead: a group of N runtimes' contexts (default 2;
// over shm: in shared slots, docs/collectives.md), `--count` rounds in one thread of IBarrier
// on every member in rank order, then Wait on each (BarrierRound); prints the wall time per
// round. Under callgrind with --toggle-collect='*BarrierRound*', instructions / count = one
// barrier of each member (the last to post completes at once, the others in their Wait).
// --coll=OP:BYTES:ALGORITHM[:CHUNK] (with --barrier=N for the group size) measures that
// collective instead (OP: allreduce of doubles, broadcast from rank 0, alltoall with BYTES
// per pair; CollOptions::chunk_bytes = CHUNK): each round posts it on every member, then
// Tests the members in turn until all completed. One thread does every member's work (over
// shm in one process, single-copy reads are memcpy), so the CPU time per round is the work
// of one call summed over the members, without the waits of a busy host.
#include <time.h>

#include <algorithm>
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

struct Options {
  std::string module = "shm";
  long count = 200000;
  size_t bytes = 8;
  int window = 64;
  bool heap = false;
  bool send_bytes = false;  // Runtime::SendRsrBytes instead of a Buffer per RSR
  int members = 0;          // > 0: Group barriers of this many members instead of RSRs
  std::string coll;         // --coll=OP:BYTES:ALGORITHM[:CHUNK] instead of barriers
  std::vector<std::string> runtime_args;
};

// The two measured loops live in functions of their own so that callgrind can toggle on them.
__attribute__((noinline)) void SendWindow(rt::Runtime& a, const rt::Startpoint& to, int n,
                                          const std::vector<uint8_t>& data, const Options& o) {
  const rt::HandlerId sink = rt::HandlerId::Of("cost.sink");
  const bool heap = o.heap;
  for (int i = 0; i < n; ++i) {
    if (o.send_bytes) {
      if (!a.SendRsrBytes(data, to, sink).ok()) std::abort();
      if ((i & 7) == 7) a.Progress();
      continue;
    }
    rt::Buffer b = heap ? rt::Buffer() : a.NewBuffer(data.size() + 5);
    b.PutBytes(data);
    if (!a.SendRsr(std::move(b), to, sink).ok()) std::abort();
    if ((i & 7) == 7) a.Progress();
  }
}

// One barrier of each member, all driven by this thread: IBarrier of every member in rank
// order (the last one finds every slot filled), then Wait of each.
__attribute__((noinline)) bool BarrierRound(const std::vector<std::unique_ptr<rt::Group>>& g,
                                            std::vector<rt::CollRequest>& q) {
  for (size_t r = 0; r < g.size(); ++r) q[r] = g[r]->IBarrier();
  bool ok = true;
  for (size_t r = 0; r < g.size(); ++r) ok = q[r].Wait().ok() && ok;
  return ok;
}

// One collective of each member (--coll), all driven by this thread.
struct CollSpec {
  std::string op;
  size_t bytes = 8;
  rt::CollOptions options;
  std::vector<std::vector<double>> in, out;
};
__attribute__((noinline)) bool CollRound(const std::vector<std::unique_ptr<rt::Group>>& g,
                                         std::vector<rt::CollRequest>& q, CollSpec& c) {
  for (size_t r = 0; r < g.size(); ++r) {
    if (c.op == "allreduce") {
      q[r] = g[r]->IAllreduce(c.in[r], c.out[r], rt::ReduceOp::kSum, c.options);
    } else if (c.op == "broadcast") {
      q[r] = g[r]->IBroadcast(c.out[r], 0, c.options);
    } else {
      q[r] = g[r]->IAlltoall(c.in[r], c.out[r], c.options);
    }
  }
  for (size_t done = 0; done < g.size();) {
    done = 0;
    for (size_t r = 0; r < g.size(); ++r) done += q[r].Test() ? 1 : 0;
  }
  bool ok = true;
  for (size_t r = 0; r < g.size(); ++r) ok = q[r].status().ok() && ok;
  return ok;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

__attribute__((noinline)) void ReceiveWindow(rt::Runtime& b, const uint64_t* got, uint64_t want) {
  while (*got < want) b.Progress();
}

// The --coll mode over the groups MeasureBarrier made.
int MeasureColl(const std::vector<std::unique_ptr<rt::Group>>& groups,
                std::vector<rt::CollRequest>& q, const Options& o) {
  CollSpec c;
  const size_t a = o.coll.find(':'), b = o.coll.find(':', a + 1), d = o.coll.find(':', b + 1);
  c.op = o.coll.substr(0, a);
  c.bytes = std::strtoull(o.coll.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
  auto alg = rt::ParseAlgorithm(o.coll.substr(b + 1, d == std::string::npos ? d : d - b - 1));
  if (!alg.ok() || (c.op != "allreduce" && c.op != "broadcast" && c.op != "alltoall")) {
    return std::fprintf(stderr, "ukai_rt_cost: bad --coll=%s\n", o.coll.c_str()), 2;
  }
  c.options.algorithm = *alg;
  if (d != std::string::npos)
    c.options.chunk_bytes = std::strtoull(o.coll.c_str() + d + 1, nullptr, 10);
  const size_t n = groups.size();
  const size_t count = std::max<size_t>(1, c.bytes / 8) * (c.op == "alltoall" ? n : 1);
  for (size_t r = 0; r < n; ++r) {
    c.in.emplace_back(count, r + 1.0);
    c.out.emplace_back(count, 0.0);
  }
  for (int i = 0; i < 10; ++i) {  // warm up
    if (!CollRound(groups, q, c)) return 1;
  }
  const auto t0 = Clock::now();
  const double c0 = ThreadCpuSeconds();
  for (long i = 0; i < o.count; ++i) {
    if (!CollRound(groups, q, c)) return 1;
  }
  const double cpu = ThreadCpuSeconds() - c0;
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("module %s, %ld rounds of %s over %zu members: %.1f us/round wall, %.1f us CPU\n",
              o.module.c_str(), o.count, o.coll.c_str(), n, s / o.count * 1e6, cpu / o.count * 1e6);
  return 0;
}

// The --barrier mode: `o.members` runtimes (A, B and more made like them), the group of
// their contexts (created in one thread per member, as every member waits for the others),
// then `count` BarrierRounds in this thread.
int MeasureBarrier(std::vector<std::unique_ptr<rt::Runtime>>& rts, const Options& o) {
  constexpr rt::ContextId kCtx = 3;
  const size_t n = rts.size();
  std::vector<rt::Context*> ctxs(n);
  std::vector<rt::Startpoint> members;
  for (size_t r = 0; r < n; ++r) {
    auto c = rts[r]->CreateContext({.name = "coll", .id = kCtx});
    if (!c.ok()) return std::fprintf(stderr, "%s\n", c.status().ToString().c_str()), 1;
    ctxs[r] = *c;
    members.emplace_back(rts[r]->shared_descriptors(), kCtx, 1);
  }
  std::vector<std::unique_ptr<rt::Group>> groups(n);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto g = rt::Group::FromStartpoints(*ctxs[r], members);
      if (g.ok()) groups[r] = std::move(*g);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : groups) {
    if (g == nullptr) return std::fprintf(stderr, "ukai_rt_cost: group creation failed\n"), 1;
  }
  std::vector<rt::CollRequest> q(n);
  if (!o.coll.empty()) return MeasureColl(groups, q, o);
  for (int i = 0; i < 100; ++i) {  // warm up
    if (!BarrierRound(groups, q)) return 1;
  }
  const auto t0 = Clock::now();
  for (long i = 0; i < o.count; ++i) {
    if (!BarrierRound(groups, q)) return 1;
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("module %s, %ld barrier rounds of %zu members (shared slots: %s): %.1f ns/round\n",
              o.module.c_str(), o.count, n, groups[0]->shared_slots() ? "yes" : "no",
              s / o.count * 1e9);
  q.clear();
  groups.clear();
  for (auto& r : rts) [[maybe_unused]] ukai::Status st = r->Finalize();
  return 0;
}

// Reads the arguments into *o; 0, or the exit code (2) after a message.
int ParseOptions(int argc, char** argv, Options* po) {
  Options& o = *po;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s.rfind("--module=", 0) == 0) {
      o.module = s.substr(9);
    } else if (s.rfind("--count=", 0) == 0) {
      o.count = std::atol(s.c_str() + 8);
    } else if (s.rfind("--bytes=", 0) == 0) {
      o.bytes = std::strtoull(s.c_str() + 8, nullptr, 10);
    } else if (s.rfind("--window=", 0) == 0) {
      o.window = std::atoi(s.c_str() + 9);
    } else if (s == "--heap") {
      o.heap = true;
    } else if (s == "--send-bytes") {
      o.send_bytes = true;
    } else if (s == "--barrier") {
      o.members = 2;
    } else if (s.rfind("--barrier=", 0) == 0) {
      o.members = std::atoi(s.c_str() + 10);
      if (o.members == 0) o.members = -1;  // not a number: refused below, not the RSR mode
    } else if (s.rfind("--coll=", 0) == 0) {
      o.coll = s.substr(7);
    } else if (s.rfind("--ukai-", 0) == 0) {
      o.runtime_args.push_back(s);
    } else {
      std::fprintf(stderr, "ukai_rt_cost: unknown argument '%s'\n", s.c_str());
      return 2;
    }
  }
  if (o.count < 1 || o.window < 1 || o.bytes > (size_t{1} << 26) || o.members < 0 ||
      o.members == 1 || o.members > 16) {
    std::fprintf(stderr,
                 "ukai_rt_cost: --count and --window >= 1, --bytes <= 64 MiB, --barrier=2..16\n");
    return 2;
  }
  return 0;
}

// Starts the runtimes of *rts (progress threads off, o.module only, --ukai-... applied); 0, or
// the exit code after a message.
int StartRuntimes(char* argv0, const Options& o, std::vector<std::unique_ptr<rt::Runtime>>* rts) {
  for (auto& slot : *rts) {
    rt::RuntimeOptions opt;
    opt.bootstrap = "single";
    opt.modules = {o.module};
    opt.progress_thread = false;
    opt.params["tcp.listen"] = "127.0.0.1:0";
    std::vector<std::string> extra = o.runtime_args;  // ParseRuntimeArgs takes char**
    std::vector<char*> args = {argv0};
    for (auto& s : extra) args.push_back(s.data());
    int n = static_cast<int>(args.size());
    args.push_back(nullptr);
    if (ukai::Status st = rt::ParseRuntimeArgs(n, args.data(), &opt); !st.ok()) {
      std::fprintf(stderr, "ukai_rt_cost: %s\n", st.ToString().c_str());
      return 2;
    }
    auto r = rt::Runtime::Init(opt);
    if (!r.ok()) {
      std::fprintf(stderr, "ukai_rt_cost: %s\n", r.status().ToString().c_str());
      return 1;
    }
    slot = std::move(*r);
  }
  return 0;
}

int Main(int argc, char** argv) {
  Options o;
  if (int code = ParseOptions(argc, argv, &o); code != 0) return code;
  std::vector<std::unique_ptr<rt::Runtime>> rts(std::max(2, o.members));
  if (int code = StartRuntimes(argv[0], o, &rts); code != 0) return code;
  if (o.members > 0) return MeasureBarrier(rts, o);
  rt::Runtime* ra = rts[0].get();
  rt::Runtime* rb = rts[1].get();
  uint64_t got = 0;
  rt::Endpoint* ep = nullptr;
  auto cb =
      rb->CreateContext({.name = "b", .init = [&](rt::Context& c) -> ukai::Status {
                           ep = *c.CreateEndpoint();
                           return ep
                               ->RegisterHandler("cost.sink", rt::HandlerKind::kNonThreaded,
                                                 [&](rt::Rsr& m) { got += m.payload().size(); })
                               .status();
                         }});
  if (!cb.ok()) return 1;
  const rt::Startpoint to = ep->MakeStartpoint();
  std::vector<uint8_t> data(o.bytes, 7);
  // Payload bytes of one RSR (PutBytes adds a tag and a length).
  const uint64_t per = o.send_bytes ? o.bytes : o.bytes + 5;
  // Warm up (connection set-up), then measure.
  SendWindow(*ra, to, o.window, data, o);
  ReceiveWindow(*rb, &got, per * o.window);
  got = 0;
  double send_s = 0, recv_s = 0;
  for (long done = 0; done < o.count; done += o.window) {
    const int n = static_cast<int>(std::min<long>(o.window, o.count - done));
    const auto t0 = Clock::now();
    SendWindow(*ra, to, n, data, o);
    const auto t1 = Clock::now();
    ReceiveWindow(*rb, &got, got + per * n);
    const auto t2 = Clock::now();
    send_s += std::chrono::duration<double>(t1 - t0).count();
    recv_s += std::chrono::duration<double>(t2 - t1).count();
  }
  std::printf("module %s, %ld RSRs of %zu bytes (%s): send %.1f ns/RSR, receive %.1f ns/RSR\n",
              o.module.c_str(), o.count, o.bytes,
              o.send_bytes ? "SendRsrBytes"
              : o.heap     ? "heap Buffer"
                           : "NewBuffer",
              send_s / o.count * 1e9, recv_s / o.count * 1e9);
  [[maybe_unused]] ukai::Status s1 = ra->Finalize(), s2 = rb->Finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
