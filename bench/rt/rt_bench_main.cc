// ukai_rt_bench: the runtime benchmark driver (`make bench` runs it).
//
// Measures on this machine, in one run, and prints one table:
//   - Open MPI 4 (MPI_Send/MPI_Recv ping-pong, windowed MPI_Isend/MPI_Irecv streaming) over
//     shared memory (btl self,vader) and TCP loopback (btl self,tcp), under mpirun; over
//     vader also at MPI_THREAD_MULTIPLE (the ukai mpi module's level), once from one reused
//     buffer as usual and once packing each message into a fresh buffer (as a ukai sender
//     packs a new Buffer per RSR: the like-for-like baseline of large messages);
//   - UCX (ucx_perftest tag_lat and ucp_am_bw) with UCX_TLS=sm,self and tcp,self;
//   - the shm module's raw ring between two processes (the transport's ceiling);
//   - ukai RSR ping-pong and streaming per module (see ukai_pingpong.h).
// Every series has a class (shm-like or tcp-like); ratios compare with Open MPI and UCX of
// the same class. Latency ratios are ours/theirs (lower is better), bandwidth ratios
// ours/theirs (higher is better).
//
// Options: --quick (shorter runs, one run), --runs=N (runs per series, default 3: medians
//          and ranges), --seconds=S (budget per size and test, default 0.25),
//          --only=name,name (series names), --sizes=8,64,... (bytes), --ukai-...=V (passed
//          to every ukai runtime, e.g. --ukai-param=shm.cma_bytes=65536).
// Environment: UKAI_BENCH_SEND_WORK=N / UKAI_BENCH_SINK_WORK=N add N busy-loop iterations
//          per streamed message to the ukai series' sender / receiver (which side bounds
//          the rate); unset, nothing is added.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "baselines.h"
#include "figures.h"
#include "report.h"
#include "shm_ring_bench.h"
#include "ukai_pingpong.h"

namespace ukai::bench {
namespace {

struct Options {
  double seconds = 0.25;
  int runs = 3;  // each series measured this many times: medians and ranges
  bool quick = false;
  std::vector<std::string> only;
  std::vector<size_t> sizes = DefaultSizes();
};

bool Wanted(const Options& o, const std::string& name) {
  if (o.only.empty()) return true;
  for (const auto& n : o.only) {
    if (name.rfind(n, 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int Main(int argc, char** argv) {
  int send_work = 0, sink_work = 0;  // checked here so a bad value stops the run at once
  if (Status s = ReadBenchWork(&send_work, &sink_work); !s.ok()) {
    std::fprintf(stderr, "ukai_rt_bench: %s\n", s.ToString().c_str());
    return 2;
  }
  Options o;
  std::string worker, out_path;
  std::vector<std::string> runtime_args;  // --ukai-* options for our runtimes
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--ukai-", 0) == 0) {
      runtime_args.push_back(a);
    } else if (a.rfind("--worker=", 0) == 0) {
      worker = a.substr(9);
    } else if (a.rfind("--out=", 0) == 0) {
      out_path = a.substr(6);
    } else if (a == "--quick") {
      o.quick = true;
      o.seconds = 0.1;
      o.runs = 1;
    } else if (a.rfind("--runs=", 0) == 0) {
      o.runs = std::atoi(a.c_str() + 7);
    } else if (a.rfind("--seconds=", 0) == 0) {
      o.seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--only=", 0) == 0) {
      o.only = Split(a.substr(7));
    } else if (a.rfind("--sizes=", 0) == 0) {
      o.sizes.clear();
      for (const auto& s : Split(a.substr(8)))
        o.sizes.push_back(std::strtoull(s.c_str(), nullptr, 10));
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: ukai_rt_bench [--quick] [--runs=N] [--seconds=S] [--only=a,b] [--sizes=8,64]\n");
      return 0;
    } else {
      std::fprintf(stderr, "ukai_rt_bench: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.seconds <= 0 || o.sizes.empty() || o.runs < 1 || o.runs > 100) {
    std::fprintf(stderr,
                 "ukai_rt_bench: --seconds must be > 0, --runs in 1..100, --sizes non-empty\n");
    return 2;
  }
  for (size_t s : o.sizes) {
    if (s < 8 || s > (size_t{64} << 20)) {
      std::fprintf(stderr, "ukai_rt_bench: size %zu outside [8, 64 MiB]\n", s);
      return 2;
    }
  }
  if (!worker.empty()) return RunWorker(worker, out_path, o.sizes, o.seconds, runtime_args);
  struct Job {
    std::string name;
    Class cls;
    bool baseline;
    std::function<Figures()> run;
  };
  std::vector<Job> jobs = {
      {"ompi shm (vader)", Class::kShm, true,
       [&] { return RunOpenMpi("self,vader", o.sizes, o.seconds); }},
      // Raw MPI at the thread level the ukai mpi module needs (MPI_THREAD_MULTIPLE).
      {"ompi shm (vader, thread multiple)", Class::kShm, true,
       [&] { return RunOpenMpi("self,vader", o.sizes, o.seconds, /*thread_multiple=*/true); }},
      // The same, packing each message into a fresh buffer: the like-for-like baseline of
      // a ukai sender, which packs a new Buffer per RSR (large messages: out of the cache).
      {"ompi shm (vader, thread multiple, fresh buffers)", Class::kShm, true,
       [&] {
         return RunOpenMpi("self,vader", o.sizes, o.seconds, /*thread_multiple=*/true,
                           /*fresh_buffers=*/true);
       }},
      {"ompi tcp (loopback)", Class::kTcp, true,
       [&] { return RunOpenMpi("self,tcp", o.sizes, o.seconds); }},
      {"ucx sm", Class::kShm, true, [&] { return RunUcx("sm,self", o.sizes, o.quick); }},
      {"ucx tcp", Class::kTcp, true, [&] { return RunUcx("tcp,self", o.sizes, o.quick); }},
      {"shm raw ring", Class::kShm, false, [&] { return RunShmRing(o.sizes, o.seconds); }},
  };
  for (const PingPongSeries& p : UkaiSeries()) {
    jobs.push_back({p.name, p.tcp_like ? Class::kTcp : Class::kShm, false,
                    [&o, p, &runtime_args] { return p.run(o.sizes, o.seconds, runtime_args); }});
  }
  std::vector<Series> all;
  std::vector<const Job*> wanted;
  for (const Job& j : jobs) {
    if (!Wanted(o, j.name)) continue;
    wanted.push_back(&j);
    all.push_back({j.name, j.cls, j.baseline, {}});
  }
  const double t0 = NowSeconds();
  // Round robin over the series, so that a busy minute on the machine hits every series
  // in one run rather than all runs of one series.
  for (int r = 0; r < o.runs; ++r) {
    for (size_t i = 0; i < wanted.size(); ++i) {
      std::fprintf(stderr, "ukai_rt_bench: %s (run %d of %d) ...\n", wanted[i]->name.c_str(), r + 1,
                   o.runs);
      all[i].runs.push_back(wanted[i]->run());
    }
  }
  std::printf(
      "ukai_rt_bench: ping-pong one-way latency (median of round trips / 2) and\n"
      "streaming (median over windows of 64 messages + ack; UCX: ucx_perftest's overall\n"
      "figure; below %zu B in millions of messages per second), 2 processes on 2 cores,\n"
      "%.2f s per point; each figure: median of %d runs (range)\n",
      kRateBelowBytes, o.seconds, o.runs);
  PrintTable(all, o.sizes);
  PrintTargets(all);
  std::printf("\ntotal %.1f s\n", NowSeconds() - t0);
  return 0;
}

}  // namespace
}  // namespace ukai::bench

int main(int argc, char** argv) { return ukai::bench::Main(argc, argv); }
