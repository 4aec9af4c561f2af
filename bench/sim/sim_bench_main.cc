// ukai_sim_bench: the simulator's speed on the networks of issue 2, single-threaded and in
// parallel (issue 20), each case in a fresh child process.
//
//   (a) 10x10 torus, DOR, 4 VCs x 8 flits, 64-byte (16-flit) messages, uniform, rate 0.3
//   (b) the same at rate 0.9 (past saturation)
//   (c) 16x16x16 torus, DOR, uniform, rate 0.1
//   (d) 64x64x64 torus (262,144 nodes), DOR, uniform, rate 0.05 (memory under MPI ranks)
// Router parameters of the spec: 5-cycle hop, 1-cycle link, 4 VCs x 8 flits of 4 bytes.
//
// Sections (each prints its own table):
// 1. Single thread: cycles and flit-hops per CPU-second of the child, peak RSS, against
//    BookSim2. With BOOKSIM=/path/to/booksim in the environment, BookSim2 runs (a) side by
//    side, alternately with ours (its own config, written to a temporary file:
//    the same network, routing, buffers, packet size and load, its default iq router),
//    and the ratio is of the two medians; otherwise the recorded references are printed.
// 2. Threads: (c) and (a) at 1 and 2 threads, alternately, --repeat times: the speed-up is
//    the median of the per-pair ratios of wall-clock rates (the machine is shared: CPU
//    time would not show waiting). (a) runs with the default run.partition_min_nodes (it
//    falls back to one partition and says so) and with every partition allowed.
// 3. MPI ranks (needs mpirun): (c) serial vs `mpirun -n 2`, alternately; (d) serial vs
//    `mpirun -n 2`: cycles/s and every rank's peak RSS against the serial run's.
// The load average (/proc/loadavg) is printed before and after each section, and before each
// pair of the threads section the round trip of a cache line between two threads.
//
// Usage: ukai_sim_bench [--quick] [--repeat N] [--only single,threads,mpi]
//        ukai_sim_bench --case a|b|c|d [--quick] [--threads N] [--min-nodes N] [--ranks]
//        ukai_sim_bench --rtt      # the cache-line round trip alone, in ns
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/engine/network.h"
#include "sim/engine/rank_group.h"

namespace {

struct Case {
  char id;
  const char* name;
  std::vector<int> k;
  double rate;
  int64_t warmup, cycles;
  double booksim_low, booksim_high;  // recorded BookSim2 cycles/s (a range, or low == high)
  const char* booksim_source;
};

const Case kCases[] = {
    {'a',
     "10x10 torus DOR uniform rate 0.3",
     {10, 10},
     0.3,
     20000,
     300000,
     4200,
     4200,
     "issue 2: about 4,200 cycles/s"},
    {'b',
     "10x10 torus DOR uniform rate 0.9",
     {10, 10},
     0.9,
     20000,
     200000,
     2700,
     2700,
     "issue 2: about 2,700 cycles/s"},
    {'c',
     "16x16x16 torus DOR uniform rate 0.1",
     {16, 16, 16},
     0.1,
     2000,
     10000,
     23,
     54,
     "issue 9: measured 23-54 cycles/s (issue 2's 'under 100' is only a bound)"},
    {'d', "64x64x64 torus DOR uniform rate 0.05", {64, 64, 64}, 0.05, 100, 200, 0, 0, ""},
};

const Case* FindCase(char id) {
  for (const Case& c : kCases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// What a child reports.
struct Figures {
  double cps = 0, hps = 0, wall_cps = 0;
  long long delivered = 0;
  long rss_kb = 0;  // the largest of the ranks'
  bool ok = false;
};

double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// --case: runs one case in this process and prints "cps hps wall_cps delivered rss_kb
// rank threads" (every rank prints its line under mpirun), plus the engine's partition
// note on stderr.
int RunCase(const Case& c, bool quick, int threads, int min_nodes, bool ranks) {
  std::unique_ptr<ukai::sim::RankGroup> group;
  if (ranks) {
    auto joined = ukai::sim::JoinRankGroup();
    if (!joined.ok()) {
      std::fprintf(stderr, "%s\n", joined.status().ToString().c_str());
      return 1;
    }
    group = std::move(*joined);
  }
  ukai::sim::SimConfig cfg;
  cfg.network.topology = ukai::sim::TopologyKind::kTorus;
  cfg.network.n = static_cast<int>(c.k.size());
  cfg.network.k = c.k;
  cfg.routing.algorithm = "dor";
  cfg.traffic.pattern = "uniform";
  cfg.traffic.message_bytes = 64;
  cfg.traffic.rate = c.rate;
  cfg.run.threads = threads;
  if (min_nodes > 0) cfg.run.partition_min_nodes = min_nodes;
  cfg.run.ranks = group.get();
  auto made = ukai::sim::Network::Create(cfg);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    return 1;
  }
  ukai::sim::Network& net = **made;
  if (!net.partition_note().empty() && (group == nullptr || group->writes_output())) {
    std::fprintf(stderr, "note: %s\n", net.partition_note().c_str());
  }
  const int64_t warmup = quick ? std::max<int64_t>(10, c.warmup / 10) : c.warmup;
  const int64_t cycles = quick ? std::max<int64_t>(20, c.cycles / 10) : c.cycles;
  for (int64_t i = 0; i < warmup; ++i) net.Step();
  const int64_t hops0 = net.flit_hops();
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t end = net.now() + cycles;
  while (net.now() < end) {
    net.SkipIdle(end);
    net.Step();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%.1f %.1f %.1f %lld %ld %d %d\n", static_cast<double>(cycles) / cpu,
              static_cast<double>(net.flit_hops() - hops0) / cpu,
              static_cast<double>(cycles) / wall, static_cast<long long>(net.messages_delivered()),
              ru.ru_maxrss, group == nullptr ? 0 : group->rank(), net.threads());
  std::fflush(stdout);
  return 0;
}

// Runs `cmd` (through the shell) and collects the lines it prints; false on failure.
bool RunCommand(const std::string& cmd, std::string* out) {
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return pclose(p) == 0;
}

// A child run of this binary (`prefix` is e.g. an mpirun command): rank 0's rates, the
// largest peak RSS over the ranks.
Figures Child(const std::string& prefix, char id, bool quick, const std::string& extra) {
  // Our own path (in the shell /proc/self/exe would name the shell).
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  Figures f;
  if (n <= 0) return f;
  self[n] = '\0';
  const std::string cmd =
      prefix + self + " --case " + std::string(1, id) + (quick ? " --quick " : " ") + extra;
  std::string out;
  if (!RunCommand(cmd, &out)) return f;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    Figures g;
    int rank = 0, threads = 0;
    if (std::sscanf(line.c_str(), "%lf %lf %lf %lld %ld %d %d", &g.cps, &g.hps, &g.wall_cps,
                    &g.delivered, &g.rss_kb, &rank, &threads) != 7) {
      continue;
    }
    const long rss = std::max(f.rss_kb, g.rss_kb);
    if (rank == 0) f = g;
    f.rss_kb = rss;
    f.ok = true;
  }
  return f;
}

// Ranks that poll (no sched_yield while waiting for a message: on a machine shared with
// other jobs a yield hands the core to them for a whole time slice).
std::string MpirunPrefix(int ranks) {
  std::string p = "mpirun -n " + std::to_string(ranks) +
                  " --oversubscribe --bind-to none --mca mpi_yield_when_idle 0 ";
  if (geteuid() == 0) p = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + p;
  return p;
}

// BookSim2 on case `c`: its cycles per CPU-second of the child (0 when it failed).
double RunBooksim(const std::string& booksim, const Case& c, bool quick) {
  char path[] = "/tmp/ukai_sim_bench_booksim_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return 0;
  close(fd);
  {
    std::ofstream cfg(path);
    cfg << "topology = torus;\nk = " << c.k[0] << ";\nn = " << c.k.size()
        << ";\nrouting_function = dim_order;\nnum_vcs = 4;\nvc_buf_size = 8;\n"
        << "traffic = uniform;\npacket_size = 16;\ninjection_rate_uses_flits = 1;\n"
        << "injection_rate = " << c.rate << ";\nsim_type = latency;\nwarmup_periods = 2;\n"
        << "sample_period = " << (quick ? 2000 : 10000) << ";\nmax_samples = 3;\n";
  }
  struct rusage before, after;
  getrusage(RUSAGE_CHILDREN, &before);
  std::string out;
  RunCommand(booksim + " " + path + " 2>&1", &out);  // exits non-zero after a normal run
  getrusage(RUSAGE_CHILDREN, &after);
  std::remove(path);
  const double cpu = static_cast<double>(after.ru_utime.tv_sec - before.ru_utime.tv_sec +
                                         after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(after.ru_utime.tv_usec - before.ru_utime.tv_usec +
                                                after.ru_stime.tv_usec - before.ru_stime.tv_usec);
  const size_t at = out.find("Time taken is ");
  if (at == std::string::npos || cpu <= 0) return 0;
  return std::atof(out.c_str() + at + 14) / cpu;
}

std::string Range(double low, double high, const char* unit) {
  char buf[64];
  const char* fmt = unit[0] != 0 ? "%.1f%s" : "%.0f%s";
  std::snprintf(buf, sizeof(buf), fmt, low, unit);
  std::string out = buf;
  if (high != low) {
    std::snprintf(buf, sizeof(buf), fmt, high, unit);
    out = out.substr(0, out.size() - std::string(unit).size()) + "-" + buf;
  }
  return out;
}

bool SingleThread(bool quick, int repeat) {
  const char* booksim = std::getenv("BOOKSIM");
  std::printf("== single thread: rates per CPU-second of the child (user+system); load %s\n",
              LoadAverage().c_str());
  std::printf("%-40s %12s %14s %12s %12s %13s %13s\n", "case", "cycles/s", "flit-hops/s",
              "wall cyc/s", "peak RSS MB", "BookSim2", "ratio");
  bool ok = true;
  for (char id : {'a', 'b', 'c'}) {
    const Case& c = *FindCase(id);
    // BookSim2 runs (a) only: past saturation (b) its latency mode stops as unstable
    // without a cycle count, and (c) takes it minutes per thousand cycles.
    const bool side_by_side = booksim != nullptr && id == 'a';
    std::vector<double> ours, theirs;
    Figures last;
    for (int i = 0; i < (side_by_side ? repeat : 1); ++i) {
      last = Child("", id, quick, "");
      if (!last.ok) break;
      ours.push_back(last.cps);
      if (side_by_side) theirs.push_back(RunBooksim(booksim, c, quick));
    }
    if (!last.ok) {
      std::printf("(%c) %-36s FAILED\n", c.id, c.name);
      ok = false;
      continue;
    }
    const double cps = Median(ours);
    std::string ref, ratio;
    if (side_by_side && Median(theirs) > 0) {
      const double bs = Median(theirs);
      ref = Range(bs, bs, "") + " (run)";
      ratio = Range(cps / bs, cps / bs, "x");
    } else {
      ref = Range(c.booksim_low, c.booksim_high, "");
      ratio = Range(cps / c.booksim_high, cps / c.booksim_low, "x");
    }
    std::printf("(%c) %-36s %12.0f %14.0f %12.0f %12.1f %13s %13s\n", c.id, c.name, cps, last.hps,
                last.wall_cps, static_cast<double>(last.rss_kb) / 1024.0, ref.c_str(),
                ratio.c_str());
    if (side_by_side) {
      std::printf("    %d alternating runs: ours", static_cast<int>(ours.size()));
      for (double v : ours) std::printf(" %.0f", v);
      std::printf("; BookSim2");
      for (double v : theirs) std::printf(" %.0f", v);
      std::printf(" cycles/CPU-s\n");
    }
    std::fflush(stdout);
  }
  if (booksim == nullptr) {
    std::printf("BookSim2 references (set BOOKSIM=/path/to/booksim to run it side by side):\n");
    for (char id : {'a', 'b', 'c'}) std::printf("  (%c) %s\n", id, FindCase(id)->booksim_source);
  }
  return ok;
}

// The round trip of a cache line between two threads of this process, in ns: the median
// of 9 batches of 2,000 (0, printed "n/a", when they took over 2 s: the two threads did
// not run at the same time, the machine being loaded). On the development VM this is
// 80-100 ns at some times and 400-430 ns at others (the host places the two vCPUs near
// each other or not), and a 2-thread run of (a), which moves cache lines between the
// threads several times a cycle, is about 1.5x or 0.9x of the serial run accordingly
// (docs/performance.md, "Parallel simulation"): the threads section prints it beside each
// pair.
double CacheLineRoundTripNs() {
  alignas(64) std::atomic<int> flag{0};
  std::atomic<bool> quit{false};
  std::thread echo([&] {
    int seen = 0;
    while (!quit.load(std::memory_order_relaxed)) {
      const int v = flag.load(std::memory_order_acquire);
      if (v != seen && v % 2 == 1) {
        seen = v + 1;
        flag.store(seen, std::memory_order_release);
      }
    }
  });
  std::vector<double> batches;
  int v = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (int b = 0; b < 9 && std::chrono::steady_clock::now() < give_up; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    int i = 0;
    for (; i < 2000 && std::chrono::steady_clock::now() < give_up; ++i) {
      flag.store(++v, std::memory_order_release);
      while (flag.load(std::memory_order_acquire) != v + 1) {
        if ((v & 255) == 0 && std::chrono::steady_clock::now() >= give_up) break;
      }
      ++v;
    }
    if (i < 2000) break;
    batches.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
        2000);
  }
  quit.store(true);
  echo.join();
  return batches.size() < 9 ? 0 : Median(batches);
}

// Serial and parallel runs of one case, alternately: the median of the pairs' ratios of
// wall-clock rates; with `rtt`, the cache-line round trip before each pair.
void Pairs(const std::string& label, char id, bool quick, int repeat, const std::string& serial_cmd,
           const std::string& serial_extra, const std::string& par_cmd,
           const std::string& par_extra, double target, bool rtt = false) {
  std::vector<double> ratios, s_rates, p_rates, rtts;
  long s_rss = 0, p_rss = 0;
  for (int i = 0; i < repeat; ++i) {
    if (rtt) rtts.push_back(CacheLineRoundTripNs());
    const Figures s = Child(serial_cmd, id, quick, serial_extra);
    const Figures p = Child(par_cmd, id, quick, par_extra);
    if (!s.ok || !p.ok) {
      std::printf("  %-48s FAILED\n", label.c_str());
      return;
    }
    s_rates.push_back(s.wall_cps);
    p_rates.push_back(p.wall_cps);
    ratios.push_back(p.wall_cps / s.wall_cps);
    s_rss = s.rss_kb;
    p_rss = p.rss_kb;
  }
  std::printf("  %-48s %10.0f %10.0f %8.2fx", label.c_str(), Median(s_rates), Median(p_rates),
              Median(ratios));
  if (target > 0)
    std::printf("  (target %.1fx: %s)", target, Median(ratios) >= target ? "met" : "NOT met");
  std::printf("\n    pairs:");
  for (size_t i = 0; i < ratios.size(); ++i) {
    std::printf(" %.2f", ratios[i]);
    if (rtt && rtts[i] > 0) std::printf(" (rtt %.0f ns)", rtts[i]);
    if (rtt && rtts[i] <= 0) std::printf(" (rtt n/a)");
  }
  std::printf("; peak RSS serial %.1f MB, parallel %.1f MB (largest rank)\n", s_rss / 1024.0,
              p_rss / 1024.0);
  std::fflush(stdout);
}

void Threads(bool quick, int repeat) {
  std::printf(
      "== threads: wall-clock cycles/s, serial vs parallel alternately, %d pairs; load %s\n",
      repeat, LoadAverage().c_str());
  std::printf("  %-48s %10s %10s %9s\n", "case", "serial", "parallel", "speed-up");
  Pairs("(c) 2 threads", 'c', quick, repeat, "", "", "", "--threads 2", 1.7, true);
  Pairs("(a) 2 threads, default partition_min_nodes", 'a', quick, repeat, "", "", "", "--threads 2",
        0);
  Pairs("(a) 2 threads, every partition allowed", 'a', quick, repeat, "", "", "",
        "--threads 2 --min-nodes 1", 1.3, true);
  std::printf("  load after: %s\n", LoadAverage().c_str());
}

void Ranks(bool quick, int repeat) {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) {
    std::printf("== MPI ranks: mpirun not found, skipped\n");
    return;
  }
  std::printf("== MPI ranks: wall-clock cycles/s, serial vs mpirun -n 2 alternately; load %s\n",
              LoadAverage().c_str());
  std::printf("  %-48s %10s %10s %9s\n", "case", "serial", "2 ranks", "speed-up");
  Pairs("(c) 2 ranks x 1 thread", 'c', quick, repeat, "", "", MpirunPrefix(2), "--ranks", 1.6);
  // (d): memory. One pair (it takes minutes).
  const Figures s = Child("", 'd', quick, "");
  const Figures p = Child(MpirunPrefix(2), 'd', quick, "--ranks");
  if (!s.ok || !p.ok) {
    std::printf("  (d) 64x64x64 torus: FAILED\n");
    return;
  }
  const double ratio = static_cast<double>(p.rss_kb) / static_cast<double>(s.rss_kb);
  std::printf(
      "  (d) 64x64x64 torus rate 0.05: serial %.1f cycles/s, peak RSS %.0f MB; 2 ranks "
      "%.1f cycles/s, largest rank's peak RSS %.0f MB = %.2fx serial (target <= 0.6x: "
      "%s)\n",
      s.wall_cps, s.rss_kb / 1024.0, p.wall_cps, p.rss_kb / 1024.0, ratio,
      ratio <= 0.6 ? "met" : "NOT met");
  std::printf("  load after: %s\n", LoadAverage().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, ranks = false;
  char only_case = 0;
  int threads = 1, min_nodes = 0, repeat = 3;
  std::string only = "single,threads,mpi";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    if (a == "--ranks") ranks = true;
    if (a == "--case" && i + 1 < argc) only_case = argv[++i][0];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    if (a == "--min-nodes" && i + 1 < argc) min_nodes = std::atoi(argv[++i]);
    if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    if (a == "--only" && i + 1 < argc) only = argv[++i];
    if (a == "--rtt") {
      std::printf("%.1f\n", CacheLineRoundTripNs());
      return 0;
    }
  }
  if (only_case != 0) {
    const Case* c = FindCase(only_case);
    if (c == nullptr) {
      std::fprintf(stderr, "unknown case %c\n", only_case);
      return 2;
    }
    return RunCase(*c, quick, threads, min_nodes, ranks);
  }
  std::printf("ukai_sim_bench%s: each case in a fresh child process\n",
              quick ? " --quick (1/10 of the cycles)" : "");
  bool ok = true;
  if (only.find("single") != std::string::npos) ok = SingleThread(quick, repeat);
  if (only.find("threads") != std::string::npos) Threads(quick, repeat);
  if (only.find("mpi") != std::string::npos) Ranks(quick, repeat);
  return ok ? 0 : 1;
}
