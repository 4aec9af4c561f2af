// ukai_sim_bench: single-threaded simulator speed on the three networks of issue 2,
// compared with BookSim2 reference figures measured on this machine class: (a) and (b) as
// quoted in issue 2 ("about 4,200" and "about 2,700" cycles/s), (c) as measured in issue 9
// (23-54 cycles/s; issue 2 gave only an upper bound, "under 100"). Each reference and its
// source is printed; the ratio is given against both ends of a measured range.
//
//   (a) 10x10 torus, DOR, 4 VCs x 8 flits, 64-byte (16-flit) messages, uniform, rate 0.3
//   (b) the same at rate 0.9 (past saturation)
//   (c) 16x16x16 torus, DOR, uniform, rate 0.1
// Router parameters of the spec: 5-cycle hop, 1-cycle link, 4 VCs x 8 flits of 4 bytes.
//
// Every case runs in a fresh child process (this binary re-executed with --case X), so
// the peak resident set size that wait4() reports for the child belongs to that case
// alone. Each child first runs warm-up cycles (untimed, so the network reaches its steady
// state), then times a fixed number of cycles.
//
// Usage: ukai_sim_bench [--quick] | ukai_sim_bench --case a|b|c [--quick]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/engine/network.h"

namespace {

struct Case {
  char id;
  const char* name;
  std::vector<int> k;
  double rate;
  int64_t warmup, cycles;
  double booksim_low, booksim_high;  // measured BookSim2 cycles/s (a range, or low == high)
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
};

// "4200" or "23-54" (with `unit` after each number, e.g. "42.1-98.8x").
std::string Range(double low, double high, const char* unit) {
  char buf[64];
  const char* fmt = unit[0] != 0 ? "%.1f%s" : "%.0f%s";
  std::string out;
  std::snprintf(buf, sizeof(buf), fmt, low, unit);
  out = buf;
  if (high != low) {
    std::snprintf(buf, sizeof(buf), fmt, high, unit);
    out = out.substr(0, out.size() - std::string(unit).size()) + "-" + buf;
  }
  return out;
}

// CPU time of this process (user + system), seconds.
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int RunCase(const Case& c, bool quick) {
  ukai::sim::SimConfig cfg;
  cfg.network.topology = ukai::sim::TopologyKind::kTorus;
  cfg.network.n = static_cast<int>(c.k.size());
  cfg.network.k = c.k;
  cfg.routing.algorithm = "dor";
  cfg.traffic.pattern = "uniform";
  cfg.traffic.message_bytes = 64;
  cfg.traffic.rate = c.rate;
  auto made = ukai::sim::Network::Create(cfg);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    return 1;
  }
  ukai::sim::Network& net = **made;
  const int64_t warmup = quick ? c.warmup / 10 : c.warmup;
  const int64_t cycles = quick ? c.cycles / 10 : c.cycles;
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
  std::printf("%.1f %.1f %.1f %lld\n", static_cast<double>(cycles) / cpu,
              static_cast<double>(net.flit_hops() - hops0) / cpu,
              static_cast<double>(cycles) / wall, static_cast<long long>(net.messages_delivered()));
  return 0;
}

// Runs `self --case id` in a child; returns false on failure.
bool RunChild(const char* self, const Case& c, bool quick, double* cps, double* hps,
              double* wall_cps, long* maxrss_kb) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    const std::string id(1, c.id);
    if (quick) {
      execl(self, self, "--case", id.c_str(), "--quick", static_cast<char*>(nullptr));
    } else {
      execl(self, self, "--case", id.c_str(), static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  close(fds[1]);
  char buf[256] = {};
  size_t got = 0;
  ssize_t n;
  while (got < sizeof(buf) - 1 && (n = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0) {
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return false;
  }
  long long delivered = 0;
  if (std::sscanf(buf, "%lf %lf %lf %lld", cps, hps, wall_cps, &delivered) != 4) return false;
  *maxrss_kb = ru.ru_maxrss;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  char only = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i][0];
  }
  if (only != 0) {
    for (const Case& c : kCases) {
      if (c.id == only) return RunCase(c, quick);
    }
    std::fprintf(stderr, "unknown case %c\n", only);
    return 2;
  }
  std::printf("ukai_sim_bench: single thread, each case in a fresh child process%s\n",
              quick ? " (--quick: 1/10 of the cycles)" : "");
  std::printf("rates per CPU-second of the child (user+system time); wall-clock rate beside\n");
  std::printf("%-40s %12s %14s %12s %12s %11s %13s\n", "case", "cycles/s", "flit-hops/s",
              "wall cyc/s", "peak RSS MB", "BookSim2", "ratio");
  bool ok = true;
  for (const Case& c : kCases) {
    double cps = 0, hps = 0, wall_cps = 0;
    long rss = 0;
    if (!RunChild("/proc/self/exe", c, quick, &cps, &hps, &wall_cps, &rss)) {
      std::printf("(%c) %-36s FAILED\n", c.id, c.name);
      ok = false;
      continue;
    }
    std::printf("(%c) %-36s %12.0f %14.0f %12.0f %12.1f %11s %13s\n", c.id, c.name, cps, hps,
                wall_cps, static_cast<double>(rss) / 1024.0,
                Range(c.booksim_low, c.booksim_high, "").c_str(),
                Range(cps / c.booksim_high, cps / c.booksim_low, "x").c_str());
    std::fflush(stdout);
  }
  std::printf("BookSim2 references:\n");
  for (const Case& c : kCases) std::printf("  (%c) %s\n", c.id, c.booksim_source);
  return ok ? 0 : 1;
}
