#include "ukai_pingpong.h"

#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "baselines.h"
#include "rt/launch/launcher.h"
#include "ukai/ukai.hpp"

namespace ukai::bench {
namespace {

using rt::Buffer;
using rt::HandlerId;
using rt::HandlerKind;
using rt::Runtime;

constexpr rt::ContextId kCtx = 1;
constexpr rt::EndpointId kEp = 1;
constexpr int kWindow = 64;
const HandlerId kPing = HandlerId::Of("bench.ping");
const HandlerId kPong = HandlerId::Of("bench.pong");
const HandlerId kSink = HandlerId::Of("bench.sink");
const HandlerId kAck = HandlerId::Of("bench.ack");

// Open MPI's benchmark sends from one reused buffer; ours packs a fresh Buffer per RSR (the
// API's ownership model). Keep freed blocks in the heap (no mmap per large block, no trim)
// so the figures measure the runtime, not page faults of the allocator.
void KeepFreedMemory() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), &set);
  sched_setaffinity(0, sizeof set, &set);
}

// Both sides' handlers; `peer` is the other side's endpoint (set before traffic starts).
struct Side {
  Runtime* rt = nullptr;
  bool pool = true;  // data messages from Runtime::NewBuffer (else heap Buffers)
  // Data messages by Runtime::SendRsrBytes from the sender's array (no Buffer; the "-bytes"
  // series): the payload is the n bytes alone.
  bool bytes = false;
  rt::Startpoint peer;
  std::atomic<uint64_t> pongs{0}, acks{0};
  std::atomic<bool> stop{false};
  uint64_t sunk = 0;  // progress thread only
  // Extra busy-loop iterations per streamed message on the sending side (after each
  // SendRsr) and in the receiving side's sink handler: UKAI_BENCH_SEND_WORK and
  // UKAI_BENCH_SINK_WORK, 0 by default. Slowing one side and not the other shows which
  // one bounds the message rate (docs/performance.md).
  int send_work = 0, sink_work = 0;
};

// `iterations` rounds of an empty loop the compiler keeps (about one cycle each).
void BusyWork(int iterations) {
  for (int k = 0; k < iterations; ++k) asm volatile("" ::: "memory");
}

// Environment variable `name` as busy-loop iterations: unset 0, else an integer in
// [0, 1e9]; anything else is an error naming the variable and its value.
Status EnvIterations(const char* name, int* out) {
  *out = 0;
  const char* v = std::getenv(name);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || n < 0 || n > 1000000000L) {
    return Status::InvalidArgument(std::string(name) + "=" + v +
                                   ": not an iteration count (an integer from 0 to 1e9)");
  }
  *out = static_cast<int>(n);
  return Status::Ok();
}

// A buffer for a message of `n` payload bytes: registered memory (NewBuffer, the documented
// way to send large messages) or, for the "heap" series, a plain Buffer grown by the pack.
Buffer NewMessage(Side* s, size_t n) { return s->pool ? s->rt->NewBuffer(n + 5) : Buffer(); }

Status Install(Side* s) {
  rt::ContextOptions co;
  co.id = kCtx;
  co.init = [s](rt::Context& c) -> Status {
    auto ep = c.CreateEndpoint({kEp});
    if (!ep.ok()) return ep.status();
    rt::Endpoint* e = *ep;
    auto echo = [s](rt::Rsr& rsr) {
      if (s->bytes) {
        [[maybe_unused]] Status st = s->rt->SendRsrBytes(rsr.payload(), s->peer, kPong);
        return;
      }
      auto bytes = rsr.reader().GetBytes();
      Buffer b = NewMessage(s, bytes.ok() ? bytes->size() : 0);
      if (bytes.ok()) b.PutBytes(*bytes);
      [[maybe_unused]] Status st = s->rt->SendRsr(std::move(b), s->peer, kPong);
    };
    auto sink = [s](rt::Rsr&) {
      BusyWork(s->sink_work);
      if (++s->sunk % kWindow == 0) {
        [[maybe_unused]] Status st = s->rt->SendRsr(Buffer(), s->peer, kAck);
      }
    };
    for (auto [name, fn] : {std::pair<const char*, rt::Handler>{"bench.ping", echo},
                            {"bench.pong", [s](rt::Rsr&) { ++s->pongs; }},
                            {"bench.sink", sink},
                            {"bench.ack", [s](rt::Rsr&) { ++s->acks; }},
                            {"bench.stop", [s](rt::Rsr&) { s->stop = true; }}}) {
      auto h = e->RegisterHandler(name, HandlerKind::kNonThreaded, fn);
      if (!h.ok()) return h.status();
    }
    return Status::Ok();
  };
  return s->rt->CreateContext(co).status();
}

// The measuring side (rank 0). `spin` runs one progress pass of this side.
Figures Measure(Side* s, const std::vector<size_t>& sizes, double seconds) {
  Figures f;
  size_t max = 0;
  for (size_t n : sizes) max = std::max(max, n);
  std::vector<uint8_t> data(max, 7);
  auto round_trip = [&](size_t n) {
    const uint64_t want = s->pongs.load(std::memory_order_relaxed) + 1;
    if (s->bytes) {
      if (!s->rt->SendRsrBytes({data.data(), n}, s->peer, kPing).ok()) return false;
      while (s->pongs.load(std::memory_order_acquire) < want) s->rt->Progress();
      return true;
    }
    Buffer b = NewMessage(s, n);
    b.PutBytes(std::span<const uint8_t>(data.data(), n));
    if (!s->rt->SendRsr(std::move(b), s->peer, kPing).ok()) return false;
    while (s->pongs.load(std::memory_order_acquire) < want) s->rt->Progress();
    return true;
  };
  for (size_t n : sizes) {
    for (int i = 0; i < 100; ++i) {
      if (!round_trip(n)) {
        f.note = "send failed";
        return f;
      }
    }
    std::vector<double> samples;
    const double end = NowSeconds() + seconds;
    while (NowSeconds() < end || samples.size() < 20) {
      const double t0 = NowSeconds();
      round_trip(n);
      samples.push_back(NowSeconds() - t0);
    }
    f.latency_us[n] = Median(samples) / 2 * 1e6;
  }
  for (size_t n : sizes) {
    std::vector<double> rates;  // per window: the median resists preemption by other jobs
    const double t0 = NowSeconds();
    while (NowSeconds() - t0 < seconds || rates.size() < 5) {
      const double w0 = NowSeconds();
      const uint64_t want = s->acks.load() + 1;
      for (int i = 0; i < kWindow; ++i) {
        if (s->bytes) {
          [[maybe_unused]] Status st = s->rt->SendRsrBytes({data.data(), n}, s->peer, kSink);
        } else {
          Buffer b = NewMessage(s, n);
          b.PutBytes(std::span<const uint8_t>(data.data(), n));
          [[maybe_unused]] Status st = s->rt->SendRsr(std::move(b), s->peer, kSink);
        }
        BusyWork(s->send_work);
        if ((i & 7) == 7) s->rt->Progress();  // flushes sends a full ring had to queue
      }
      while (s->acks.load(std::memory_order_acquire) < want) s->rt->Progress();
      rates.push_back(static_cast<double>(n) * kWindow / (NowSeconds() - w0) / 1e9);
    }
    f.bandwidth_gbs[n] = Median(rates);
  }
  return f;
}

std::string Write(const Figures& f) {
  std::ostringstream out;
  for (auto [n, v] : f.latency_us) out << "lat " << n << " " << v << " 0\n";
  for (auto [n, v] : f.bandwidth_gbs) out << "bw " << n << " " << v << " 0\n";
  if (!f.note.empty()) out << "note " << f.note << "\n";
  return out.str();
}

Figures Read(const std::string& path) {
  Figures f;
  std::ifstream in(path);
  std::string kind;
  while (in >> kind) {
    if (kind == "note") {
      std::getline(in, f.note);
      continue;
    }
    size_t n = 0;
    double v = 0, c = 0;
    if (!(in >> n >> v >> c)) break;
    (kind == "lat" ? f.latency_us : f.bandwidth_gbs)[n] = v;
  }
  return f;
}

std::string Join(const std::vector<size_t>& sizes) {
  std::string s;
  for (size_t n : sizes) {
    if (!s.empty()) s += ',';
    s += std::to_string(n);
  }
  return s;
}

std::string TempPath(const std::string& tag) {
  return "/tmp/ukai_rt_bench_" + std::to_string(getpid()) + "_" + tag + ".txt";
}

// Applies --ukai-* options to `o`.
Status ApplyArgs(const std::vector<std::string>& args, rt::RuntimeOptions* o) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  std::string arg0 = "ukai_rt_bench";
  argv.push_back(arg0.data());
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(argv.size()) - 1;
  UKAI_RETURN_IF_ERROR(rt::ParseRuntimeArgs(argc, argv.data(), o));
  if (argc != 1)
    return Status::InvalidArgument("unexpected runtime argument " + std::string(argv[1]));
  return Status::Ok();
}

std::string JoinArgs(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

Figures RunLaunched(const std::string& module, const std::vector<size_t>& sizes, double seconds,
                    const std::vector<std::string>& runtime_args) {
  const std::string out = TempPath(module);
  rt::LaunchOptions o;
  o.processes = 2;
  o.timeout_s = 120;
  o.command = {SelfDirectory() + "/ukai_rt_bench", "--worker=" + module, "--out=" + out,
               "--sizes=" + Join(sizes), "--seconds=" + std::to_string(seconds)};
  o.command.insert(o.command.end(), runtime_args.begin(), runtime_args.end());
  Result<int> code = rt::Launch(o);
  Figures f = Read(out);
  std::remove(out.c_str());
  if (!code.ok() || *code != 0) {
    f.note = "launch failed: " +
             (code.ok() ? "exit code " + std::to_string(*code) : code.status().ToString());
  }
  return f;
}

// `worker`: "mpi", or "mpi-bytes" (SendRsrBytes from the sender's array).
Figures RunUnderMpirun(const std::string& worker, const std::vector<size_t>& sizes, double seconds,
                       const std::vector<std::string>& runtime_args) {
  const std::string out = TempPath(worker);
  // The same Open MPI settings as the "ompi shm (vader)" baseline.
  const std::string cmd = MpirunPrefix(OpenMpiSettings("self,vader")) + " " + SelfDirectory() +
                          "/ukai_rt_bench --worker=" + worker + " --out=" + out +
                          " --sizes=" + Join(sizes) + " --seconds=" + std::to_string(seconds) +
                          JoinArgs(runtime_args);
  Result<std::string> r = RunCapture(cmd);
  Figures f = Read(out);
  std::remove(out.c_str());
  if (!r.ok()) f.note = r.status().message();
  return f;
}

Figures RunInproc(const std::vector<size_t>& sizes, double seconds,
                  const std::vector<std::string>& runtime_args) {
  Figures f;
  KeepFreedMemory();
  auto fabric = rt::NewInprocFabric();
  Side a, b;
  std::unique_ptr<Runtime> ra, rb;
  for (auto [side, holder] : {std::pair{&a, &ra}, std::pair{&b, &rb}}) {
    rt::RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {"inproc"};
    o.progress_thread = false;
    o.inproc_fabric = fabric;
    if (Status s = ApplyArgs(runtime_args, &o); !s.ok()) {
      f.note = s.ToString();
      return f;
    }
    auto r = Runtime::Init(o);
    if (!r.ok()) {
      f.note = r.status().ToString();
      return f;
    }
    *holder = std::move(*r);
    side->rt = holder->get();
    if (Status s = ReadBenchWork(&side->send_work, &side->sink_work); !s.ok()) {
      f.note = s.ToString();
      return f;
    }
    if (Status s = Install(side); !s.ok()) {
      f.note = s.ToString();
      return f;
    }
  }
  a.peer = rb->FindContext(kCtx)->FindEndpoint(kEp)->MakeStartpoint();
  b.peer = ra->FindContext(kCtx)->FindEndpoint(kEp)->MakeStartpoint();
  cpu_set_t saved;
  sched_getaffinity(0, sizeof saved, &saved);
  std::atomic<bool> stop{false};
  std::thread responder([&] {
    PinTo(1);
    while (!stop.load(std::memory_order_relaxed)) rb->Progress();
  });
  PinTo(0);
  f = Measure(&a, sizes, seconds);
  stop = true;
  responder.join();
  sched_setaffinity(0, sizeof saved, &saved);
  [[maybe_unused]] Status s1 = ra->Finalize(), s2 = rb->Finalize();
  return f;
}

}  // namespace

Status ReadBenchWork(int* send_work, int* sink_work) {
  UKAI_RETURN_IF_ERROR(EnvIterations("UKAI_BENCH_SEND_WORK", send_work));
  return EnvIterations("UKAI_BENCH_SINK_WORK", sink_work);
}

int RunWorker(const std::string& worker, const std::string& out_path,
              const std::vector<size_t>& sizes, double seconds,
              const std::vector<std::string>& runtime_args) {
  KeepFreedMemory();
  auto ends_with = [&](const std::string& suffix) {
    return worker.size() > suffix.size() &&
           worker.compare(worker.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool heap = ends_with("-heap");
  const bool bytes = ends_with("-bytes");
  // "-default": the default settings (progress thread on, not pinned); the same loops.
  const bool defaults = ends_with("-default");
  const std::string module = worker.substr(0, worker.find('-'));
  rt::RuntimeOptions o;
  o.bootstrap = "auto";  // launcher or mpi, from the environment
  o.modules = {module};
  o.progress_thread = defaults;
  if (Status s = ApplyArgs(runtime_args, &o); !s.ok()) {
    std::fprintf(stderr, "ukai_rt_bench worker: %s\n", s.ToString().c_str());
    return 2;
  }
  auto r = Runtime::Init(o);
  if (!r.ok()) {
    std::fprintf(stderr, "ukai_rt_bench worker: %s\n", r.status().ToString().c_str());
    return 1;
  }
  Runtime& rt = **r;
  if (!defaults) PinTo(rt.rank());
  Side side;
  side.rt = &rt;
  side.pool = !heap;
  side.bytes = bytes;
  if (Status s = ReadBenchWork(&side.send_work, &side.sink_work); !s.ok()) {
    std::fprintf(stderr, "ukai_rt_bench worker: %s\n", s.ToString().c_str());
    return 2;
  }
  if (Status s = Install(&side); !s.ok()) return 1;
  auto sp = rt.WorldStartpoint(1 - rt.rank(), kCtx, kEp);
  if (!sp.ok() || rt.size() != 2) return 1;
  side.peer = *sp;
  if (!rt.Barrier().ok()) return 1;
  auto chosen = rt.SelectModule(side.peer);
  if (!chosen.ok() || *chosen != module) {
    std::fprintf(stderr, "ukai_rt_bench worker: module %s chosen instead of %s\n",
                 chosen.ok() ? chosen->c_str() : "none", module.c_str());
    return 1;
  }
  if (rt.rank() == 0) {
    Figures f = Measure(&side, sizes, seconds);
    std::ofstream(out_path) << Write(f);
    // Tell the responder to stop serving.
    [[maybe_unused]] Status s = rt.SendRsr(Buffer(), side.peer, HandlerId::Of("bench.stop"));
  }
  // Rank 1 serves until rank 0 enters the final barrier; rank 0 goes straight there. The
  // barrier is out of band, so rank 1 progresses while polling for rank 0's stop RSR.
  if (rt.rank() == 1) {
    while (!side.stop.load(std::memory_order_relaxed)) rt.Progress();
  }
  if (!rt.Barrier().ok()) return 1;
  return rt.Finalize().ok() ? 0 : 1;
}

std::vector<PingPongSeries> UkaiSeries() {
  std::vector<PingPongSeries> out = {
      {"ukai inproc", false, RunInproc},
      {"ukai shm", false, [](auto& s, double t, auto& a) { return RunLaunched("shm", s, t, a); }},
      {"ukai shm heap", false,
       [](auto& s, double t, auto& a) { return RunLaunched("shm-heap", s, t, a); }},
      // Runtime::SendRsrBytes: the payload copied from the caller's array, no Buffer.
      {"ukai shm bytes", false,
       [](auto& s, double t, auto& a) { return RunLaunched("shm-bytes", s, t, a); }},
      {"ukai tcp", true, [](auto& s, double t, auto& a) { return RunLaunched("tcp", s, t, a); }},
      // Default settings (progress thread on, spin_us 200, not pinned) beside the tuned runs.
      {"ukai shm default", false,
       [](auto& s, double t, auto& a) { return RunLaunched("shm-default", s, t, a); }},
      {"ukai tcp default", true,
       [](auto& s, double t, auto& a) { return RunLaunched("tcp-default", s, t, a); }},
  };
#if UKAI_HAVE_MPI
  out.push_back({"ukai mpi", false,
                 [](auto& s, double t, auto& a) { return RunUnderMpirun("mpi", s, t, a); }});
  // SendRsrBytes from the sender's array: payloads of mpi.zero_copy_bytes and more go
  // from it without a copy (the call returns once MPI read them), as raw MPI's do.
  out.push_back({"ukai mpi bytes", false,
                 [](auto& s, double t, auto& a) { return RunUnderMpirun("mpi-bytes", s, t, a); }});
#endif
  return out;
}

}  // namespace ukai::bench
