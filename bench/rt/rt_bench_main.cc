// ukai_rt_bench: the runtime benchmark driver (`make bench` runs it).
//
// Measures on this machine, in one run, and prints one table:
//   - Open MPI 4 (MPI_Send/MPI_Recv ping-pong, windowed MPI_Isend/MPI_Irecv streaming) over
//     shared memory (btl self,vader) and TCP loopback (btl self,tcp), under mpirun;
//   - UCX (ucx_perftest tag_lat and ucp_am_bw) with UCX_TLS=sm,self and tcp,self;
//   - the shm module's raw ring between two processes (the transport's ceiling);
//   - ukai RSR ping-pong and streaming per module (see ukai_pingpong.h).
// Every series has a class (shm-like or tcp-like); ratios compare with Open MPI and UCX of
// the same class. Latency ratios are ours/theirs (lower is better), bandwidth ratios
// ours/theirs (higher is better).
//
// Options: --quick (shorter runs), --seconds=S (budget per size and test, default 0.25),
//          --only=name,name (series names), --sizes=8,64,... (bytes), --ukai-...=V (passed
//          to every ukai runtime, e.g. --ukai-param=shm.cma_bytes=65536).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "baselines.h"
#include "figures.h"
#include "shm_ring_bench.h"
#include "ukai_pingpong.h"

namespace ukai::bench {
namespace {

enum class Class { kShm, kTcp };

struct Series {
  std::string name;
  Class cls;
  bool is_baseline;
  Figures fig;
};

struct Options {
  double seconds = 0.25;
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

const Series* Find(const std::vector<Series>& all, const std::string& prefix, Class cls) {
  for (const Series& s : all) {
    if (s.is_baseline && s.cls == cls && s.name.rfind(prefix, 0) == 0) return &s;
  }
  return nullptr;
}

std::string Ratio(const Series* base, const std::map<size_t, double> Figures::*field, size_t size,
                  double ours) {
  if (base == nullptr) return "-";
  auto it = (base->fig.*field).find(size);
  if (it == (base->fig.*field).end() || it->second <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", ours / it->second);
  return buf;
}

void PrintTable(const std::vector<Series>& all, const Options& o) {
  std::printf("\n%-22s %8s | %9s %8s %8s | %9s %8s %8s\n", "series", "bytes", "lat_us", "/OMPI",
              "/UCX", "bw_GB/s", "/OMPI", "/UCX");
  std::printf("%s\n", std::string(92, '-').c_str());
  for (const Series& s : all) {
    if (!s.fig.note.empty())
      std::printf("%-22s  (missing: %s)\n", s.name.c_str(), s.fig.note.c_str());
    const Series* ompi = Find(all, "ompi", s.cls);
    const Series* ucx = Find(all, "ucx", s.cls);
    for (size_t size : o.sizes) {
      auto lat = s.fig.latency_us.find(size);
      auto bw = s.fig.bandwidth_gbs.find(size);
      if (lat == s.fig.latency_us.end() && bw == s.fig.bandwidth_gbs.end()) continue;
      char lat_s[32] = "-", bw_s[32] = "-";
      std::string lo = "-", lu = "-", bo = "-", bu = "-";
      if (lat != s.fig.latency_us.end()) {
        std::snprintf(lat_s, sizeof lat_s, "%.3f", lat->second);
        if (!s.is_baseline || s.name.rfind("ucx", 0) == 0)
          lo = Ratio(ompi, &Figures::latency_us, size, lat->second);
        if (!s.is_baseline) lu = Ratio(ucx, &Figures::latency_us, size, lat->second);
      }
      if (bw != s.fig.bandwidth_gbs.end()) {
        std::snprintf(bw_s, sizeof bw_s, "%.3f", bw->second);
        if (!s.is_baseline || s.name.rfind("ucx", 0) == 0)
          bo = Ratio(ompi, &Figures::bandwidth_gbs, size, bw->second);
        if (!s.is_baseline) bu = Ratio(ucx, &Figures::bandwidth_gbs, size, bw->second);
      }
      std::printf("%-22s %8zu | %9s %8s %8s | %9s %8s %8s\n", s.name.c_str(), size, lat_s,
                  lo.c_str(), lu.c_str(), bw_s, bo.c_str(), bu.c_str());
    }
  }
}

// The targets, checked on the measured figures.
void PrintTargets(const std::vector<Series>& all) {
  std::printf("\ntargets (issue 3):\n");
  auto get = [&](const std::string& name, bool lat, size_t size) -> double {
    for (const Series& s : all) {
      if (s.name != name) continue;
      const auto& m = lat ? s.fig.latency_us : s.fig.bandwidth_gbs;
      auto it = m.find(size);
      return it == m.end() ? -1 : it->second;
    }
    return -1;
  };
  struct Target {
    const char* ours;
    const char* base;
    bool lat;
    size_t size;
    double limit;
  };
  const Target targets[] = {
      {"ukai shm", "ompi shm (vader)", true, 8, 1.0},
      {"ukai shm", "ompi shm (vader)", false, 1048576, 1.0},
      {"ukai tcp", "ompi tcp (loopback)", true, 8, 1.1},
      {"ukai tcp", "ompi tcp (loopback)", false, 1048576, 0.9},
  };
  for (const Target& t : targets) {
    const double a = get(t.ours, t.lat, t.size), b = get(t.base, t.lat, t.size);
    if (a < 0 || b <= 0) {
      std::printf("  %-9s %-9s %7zu B: not measured\n", t.ours, t.lat ? "latency" : "bandwidth",
                  t.size);
      continue;
    }
    const double r = a / b;
    const bool pass = t.lat ? r <= t.limit : r >= t.limit;
    std::printf("  %-9s %-9s %7zu B: %.3f vs %.3f = %.2fx (target %s %.2fx) %s\n", t.ours,
                t.lat ? "latency" : "bandwidth", t.size, a, b, r, t.lat ? "<=" : ">=", t.limit,
                pass ? "PASS" : "MISS");
  }
}

int Main(int argc, char** argv) {
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
    } else if (a.rfind("--seconds=", 0) == 0) {
      o.seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--only=", 0) == 0) {
      o.only = Split(a.substr(7));
    } else if (a.rfind("--sizes=", 0) == 0) {
      o.sizes.clear();
      for (const auto& s : Split(a.substr(8)))
        o.sizes.push_back(std::strtoull(s.c_str(), nullptr, 10));
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: ukai_rt_bench [--quick] [--seconds=S] [--only=a,b] [--sizes=8,64]\n");
      return 0;
    } else {
      std::fprintf(stderr, "ukai_rt_bench: unknown argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.seconds <= 0 || o.sizes.empty()) {
    std::fprintf(stderr, "ukai_rt_bench: --seconds must be > 0 and --sizes non-empty\n");
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
  const double t0 = NowSeconds();
  for (const Job& j : jobs) {
    if (!Wanted(o, j.name)) continue;
    std::fprintf(stderr, "ukai_rt_bench: %s ...\n", j.name.c_str());
    all.push_back({j.name, j.cls, j.baseline, j.run()});
  }
  std::printf(
      "ukai_rt_bench: ping-pong one-way latency (median of round trips / 2) and\n"
      "streaming bandwidth (median over windows of 64 messages + ack; UCX: ucx_perftest's\n"
      "overall figure), 2 processes on 2 cores, %.2f s per point\n",
      o.seconds);
  PrintTable(all, o);
  PrintTargets(all);
  std::printf("\ntotal %.1f s\n", NowSeconds() - t0);
  return 0;
}

}  // namespace
}  // namespace ukai::bench

int main(int argc, char** argv) { return ukai::bench::Main(argc, argv); }
