// ukai_coll_bench: the collectives of ukai::rt::Group (docs/collectives.md) beside Open MPI's,
// in one run (`make bench` runs it with no arguments).
//
//  * Targets (shm, 2 and 4 processes, default settings): barrier and 8-byte allreduce
//    latency, 1 MiB broadcast and allreduce, 64 KiB-per-pair alltoall. Each run launches a
//    ukai job (`ukai launch` of this program, --worker) and then the Open MPI helper
//    ukai_coll_mpi under mpirun (Open MPI's defaults on one host), so the two alternate;
//    --runs runs (default 3), but at least 3 with 2 processes and 7 with 4 (RunsFor). A
//    figure is the median of the runs' medians; ratio = ukai's figure / Open MPI's: the
//    latency targets need <= 1.2, the bandwidth ones <= 1.0. Under each row: the spread of
//    both libraries' run medians, and the median and spread of the ratio within each pair of
//    runs (the two jobs of a pair ran back to back, in the same state of the machine).
//  * Relay against the classical algorithms (4 processes, shm and tcp): broadcast, reduce,
//    allreduce and point-to-point at sizes from 4 KiB to 4 MiB, every algorithm, the best
//    classical one beside the relay one.
//  * --tune: every algorithm of every collective over shm and tcp, 2-4 processes, sizes 8 B
//    to 1 MiB; prints the rows of src/rt/coll/tuned_table.cc (the fastest per size, each
//    timed by its fastest batch) and each figure on stderr.
//
// A figure is rank 0's median time per call over batches of back-to-back calls (doubled from
// one until a batch takes kBatchUs = 20 us), as the helper times Open MPI. Options: --runs=N,
// --seconds=S (per figure, default 0.3), --only=targets|relay, --tune,
// --worker (internal: one rank of a ukai job; --specs=..., --out=FILE, and GroupOptions'
// --rendezvous=, --single-copy=, --single-copy-oversubscribed=, --segment=, --exchange-eager=,
// --shared-copy=, --slot-wait=sleep; CollOptions' --chunk=), --help; anything else is
// refused with exit code 2.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "figures.h"
#include "rt/launch/launcher.h"
#include "ukai/ukai.hpp"

namespace ukai::bench {
namespace {

using rt::Algorithm;
using rt::Collective;

// One figure to measure: a collective (or "sendrecv"), its bytes, its algorithm.
struct Spec {
  std::string op;
  uint64_t bytes = 0;
  Algorithm alg = Algorithm::kAuto;
  std::string Key() const {
    return op + ":" + std::to_string(bytes) + ":" + std::string(rt::AlgorithmName(alg));
  }
};

std::string Join(const std::vector<Spec>& specs) {
  std::string s;
  for (const Spec& x : specs) {
    if (!s.empty()) s.push_back(',');
    s.append(x.Key());
  }
  return s;
}

std::vector<Spec> Split(const std::string& text) {
  std::vector<Spec> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    Spec s;
    const size_t a = item.find(':'), b = item.find(':', a + 1);
    s.op = item.substr(0, a);
    s.bytes = std::strtoull(item.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
    s.alg = *rt::ParseAlgorithm(item.substr(b + 1));
    out.push_back(s);
  }
  return out;
}

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def = "") {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name.c_str(), name.size()) == 0 && argv[i][name.size()] == '=') {
      return argv[i] + name.size() + 1;
    }
    if (name == argv[i]) return "1";
  }
  return def;
}

// ---- the worker: one rank of a ukai job ----

// A batch of calls takes at least this long (us): rank 0 times whole batches, and the
// decision broadcast between two batches (rank 0 leaves it first) makes the first call of a
// batch wait for the others; in a batch of 2 calls (the rule was 2 us) that wait was half
// the figure of an 8-byte allreduce, in one of ~30 it is a thirtieth. ukai_coll_mpi uses the
// same rule.
constexpr double kBatchUs = 20.0;

// With UKAI_COLL_BENCH_RUSAGE set, every rank prints its CPU time and context switches per
// call of each measured spec on stderr (ukai_coll_mpi prints the same for Open MPI).
struct UsageMark {
  rusage u{};
  double wall = 0;
  UsageMark() {
    getrusage(RUSAGE_SELF, &u);
    wall = NowSeconds();
  }
  static double CpuUs(const rusage& x) {
    return static_cast<double>(x.ru_utime.tv_sec + x.ru_stime.tv_sec) * 1e6 +
           static_cast<double>(x.ru_utime.tv_usec + x.ru_stime.tv_usec);
  }
  void Print(const std::string& key, int rank, uint64_t calls) const {
    if (std::getenv("UKAI_COLL_BENCH_RUSAGE") == nullptr || calls == 0) return;
    const UsageMark now;
    const double c = static_cast<double>(calls);
    std::fprintf(
        stderr, "rusage %s rank %d calls %llu wall_us %.2f cpu_us %.2f vcsw %.3f ivcsw %.3f\n",
        key.c_str(), rank, static_cast<unsigned long long>(calls), (now.wall - wall) * 1e6 / c,
        (CpuUs(now.u) - CpuUs(u)) / c, static_cast<double>(now.u.ru_nvcsw - u.ru_nvcsw) / c,
        static_cast<double>(now.u.ru_nivcsw - u.ru_nivcsw) / c);
  }
};

// The `percentile`-th percentile (50: the median) of rank 0's us per call of fn over batches;
// every rank calls fn the same number of times (rank 0 decides when to stop and tells the
// others outside the timed part).
double TimeCalls(rt::Group& w, double seconds, int percentile, const std::function<bool()>& fn,
                 const std::string& key) {
  auto decide = [&](int32_t more) {
    (void)w.Broadcast(rt::MutView(&more, 1, rt::DataType::kInt32), 0);
    return more != 0;
  };
  int batch = 1;
  for (;;) {
    (void)w.Barrier();
    const double t0 = NowSeconds();
    for (int i = 0; i < batch; ++i) {
      if (!fn()) return -1;
    }
    const double us = (NowSeconds() - t0) * 1e6;
    if (!decide(us < kBatchUs && batch < (1 << 16))) break;
    batch *= 2;
  }
  std::vector<double> samples;
  (void)w.Barrier();
  const UsageMark mark;
  const double start = NowSeconds();
  for (;;) {
    const double t0 = NowSeconds();
    for (int i = 0; i < batch; ++i) {
      if (!fn()) return -1;
    }
    const double t = NowSeconds();
    samples.push_back((t - t0) * 1e6 / batch);
    if (!decide((t - start < seconds || samples.size() < 5) && samples.size() < 100000)) break;
  }
  mark.Print(key, w.rank(), samples.size() * static_cast<uint64_t>(batch));
  if (std::getenv("UKAI_COLL_BENCH_DEBUG") != nullptr && w.rank() == 0) {
    std::vector<double> v = samples;
    std::sort(v.begin(), v.end());
    std::fprintf(stderr, "samples %zu min %.2f p10 %.2f p50 %.2f p90 %.2f max %.2f\n", v.size(),
                 v.front(), v[v.size() / 10], v[v.size() / 2], v[v.size() * 9 / 10], v.back());
  }
  if (percentile == 50) return Median(samples);
  std::sort(samples.begin(), samples.end());
  return samples[std::min(samples.size() - 1, samples.size() * percentile / 100)];
}

double MeasureSpec(rt::Group& w, const Spec& s, double seconds, int percentile,
                   uint64_t chunk_bytes) {
  const size_t n = static_cast<size_t>(w.size());
  const int r = w.rank();
  const size_t count = std::max<uint64_t>(s.bytes / 8, s.op == "barrier" ? 0 : 1);
  std::vector<double> a(count * n, r + 1.0), b(count * n);
  rt::CollOptions o;
  o.algorithm = s.alg;
  o.chunk_bytes = chunk_bytes;
  std::function<bool()> fn;
  auto ok = [](const Status& st) {
    if (!st.ok()) std::fprintf(stderr, "ukai_coll_bench: %s\n", st.ToString().c_str());
    return st.ok();
  };
  const auto one = std::span(a).first(count);
  const auto out = std::span(b).first(count);
  if (s.op == "barrier") {
    fn = [&] { return ok(w.Barrier(o)); };
  } else if (s.op == "allreduce") {
    fn = [&] { return ok(w.Allreduce(one, out, rt::ReduceOp::kSum, o)); };
  } else if (s.op == "reduce") {
    fn = [&] { return ok(w.Reduce(one, out, rt::ReduceOp::kSum, 0, o)); };
  } else if (s.op == "broadcast") {
    fn = [&] { return ok(w.Broadcast(out, 0, o)); };
  } else if (s.op == "alltoall") {
    fn = [&] { return ok(w.Alltoall(a, b, o)); };
  } else if (s.op == "allgather") {
    fn = [&] { return ok(w.Allgather(one, b, o)); };
  } else if (s.op == "gather") {
    fn = [&] { return ok(w.Gather(one, b, 0, o)); };
  } else if (s.op == "scatter") {
    fn = [&] { return ok(w.Scatter(a, out, 0, o)); };
  } else if (s.op == "reduce_scatter") {
    fn = [&] { return ok(w.ReduceScatter(a, out, rt::ReduceOp::kSum, o)); };
  } else if (s.op == "sendrecv") {  // rank 0 -> 1 (relays: the others), 8-byte answer back
    std::vector<double> ack(1);
    fn = [&, ack]() mutable {
      if (r == 0) return ok(w.Send(one, 1, 0, o)) && ok(w.Recv(ack, 1, 1));
      if (r == 1) return ok(w.Recv(out, 0, 0)) && ok(w.Send(ack, 0, 1));
      return true;
    };
  } else {
    return -1;
  }
  return TimeCalls(w, seconds, percentile, fn, s.Key());
}

int RunWorker(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  auto ctx = (*made)->CreateContext({.name = "bench", .id = 1});
  if (!ctx.ok()) return 1;
  rt::GroupOptions go;
  if (const std::string rv = Arg(argc, argv, "--rendezvous"); !rv.empty()) {
    go.rendezvous_bytes = std::strtoull(rv.c_str(), nullptr, 10);
  }
  if (const std::string sc = Arg(argc, argv, "--single-copy"); !sc.empty()) {
    go.single_copy = sc != "0";
  }
  if (const std::string so = Arg(argc, argv, "--single-copy-oversubscribed"); !so.empty()) {
    go.single_copy_oversubscribed = so != "0";
  }
  if (Arg(argc, argv, "--slot-wait") == "sleep") go.slot_wait = rt::SlotWait::kSleep;
  if (const std::string sg = Arg(argc, argv, "--segment"); !sg.empty()) {
    go.segment_bytes = std::strtoull(sg.c_str(), nullptr, 10);
  }
  if (const std::string ee = Arg(argc, argv, "--exchange-eager"); !ee.empty()) {
    go.exchange_eager_bytes = std::strtoull(ee.c_str(), nullptr, 10);
  }
  if (const std::string sc = Arg(argc, argv, "--shared-copy"); !sc.empty()) {
    go.shared_copy_bytes = std::strtoull(sc.c_str(), nullptr, 10);
  }
  auto w = rt::Group::World(**ctx, go);
  if (!w.ok()) return std::fprintf(stderr, "%s\n", w.status().ToString().c_str()), 1;
  const double seconds = std::atof(Arg(argc, argv, "--seconds", "0.3").c_str());
  const int percentile =
      std::clamp(std::atoi(Arg(argc, argv, "--percentile", "50").c_str()), 0, 100);
  std::ofstream out;
  if ((*w)->rank() == 0) out.open(Arg(argc, argv, "--out"));
  const uint64_t chunk = std::strtoull(Arg(argc, argv, "--chunk", "0").c_str(), nullptr, 10);
  for (const Spec& s : Split(Arg(argc, argv, "--specs"))) {
    const double us = MeasureSpec(**w, s, seconds, percentile, chunk);
    if ((*w)->rank() == 0) out << s.Key() << " " << us << "\n" << std::flush;
  }
  w->reset();
  (void)(*made)->Finalize();
  return 0;
}

// ---- the driver ----

// Runs the specs as a ukai job of n processes over `module`; key -> us (-1: failed).
std::map<std::string, double> RunUkai(int n, const std::string& module,
                                      const std::vector<Spec>& specs, double seconds,
                                      int percentile = 50) {
  const std::string out = "/tmp/ukai_coll_bench_" + std::to_string(::getpid()) + ".txt";
  std::remove(out.c_str());
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = '\0';
  rt::LaunchOptions o;
  o.processes = n;
  o.modules = {module};
  o.timeout_s = 900;
  o.command = {exe,
               "--worker",
               "--specs=" + Join(specs),
               "--seconds=" + std::to_string(seconds),
               "--percentile=" + std::to_string(percentile),
               "--out=" + out};
  Result<int> code = rt::Launch(o);
  std::map<std::string, double> res;
  std::ifstream in(out);
  std::string key;
  double us;
  while (in >> key >> us) res[key] = us;
  std::remove(out.c_str());
  if (!code.ok() || *code != 0) {
    std::fprintf(stderr, "ukai_coll_bench: the ukai job (%d x %s) failed: %s\n", n, module.c_str(),
                 code.ok() ? std::to_string(*code).c_str() : code.status().ToString().c_str());
  }
  return res;
}

// Open MPI's figures for the same (op, bytes): key "op:bytes" -> us.
std::map<std::string, double> RunOmpi(int n, const std::vector<Spec>& specs, double seconds,
                                      std::string* note) {
  const std::string helper = SelfDirectory() + "/ukai_coll_mpi";
  std::map<std::string, double> res;
  if (access(helper.c_str(), X_OK) != 0) {
    *note = "no " + helper + " (Open MPI not found at build time)";
    return res;
  }
  std::string pairs;
  for (const Spec& s : specs) {
    if (!pairs.empty()) pairs.push_back(',');
    pairs.append(s.op == "broadcast" ? "bcast" : s.op.c_str());
    pairs.push_back(':');
    pairs.append(std::to_string(s.bytes));
  }
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.3f", seconds);
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 "
      "mpirun -n " +
      std::to_string(n) + " --oversubscribe --bind-to " + (n <= 2 ? "core" : "none") + " " +
      helper + " -p " + pairs + " -t " + budget;
  Result<std::string> out = RunCapture(cmd);
  if (!out.ok()) {
    *note = out.status().message();
    return res;
  }
  std::istringstream in(*out);
  std::string tag, op;
  uint64_t bytes;
  double us, samples;
  while (in >> tag >> op >> bytes >> us >> samples) {
    if (tag == "coll") res[(op == "bcast" ? "broadcast" : op) + ":" + std::to_string(bytes)] = us;
  }
  return res;
}

std::string Load() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double MedianOf(std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  return v.empty() ? -1 : Median(v);
}

struct Target {
  std::string op;
  uint64_t bytes;
  double limit;  // ukai / Open MPI time at most
  const char* what;
};

// Runs per process count at least: with 4 processes on a 2-core machine both libraries'
// times follow where the scheduler puts the processes (one job 12 us, the next 70), so one
// pair of jobs decides nothing; the medians of several alternating pairs do.
int RunsFor(int n, int runs) { return std::max(runs, n > 2 ? 7 : 3); }

// A figure in 3 significant digits, without an exponent ("0.562", "41.5", "19100").
std::string Figure(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x >= 1000 ? "%.0f" : "%.3g", x);
  return buf;
}

// "1.23-4.56" of the valid (>= 0) values, "-" when none.
std::string Spread(std::vector<double> v) {
  std::erase_if(v, [](double x) { return x < 0; });
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Figure(*lo) + "-" + Figure(*hi);
}

void Targets(int runs, double seconds) {
  const Target kTargets[] = {
      {"barrier", 8, 1.2, "latency within 1.2x"},
      {"allreduce", 8, 1.2, "latency within 1.2x"},
      {"broadcast", 1 << 20, 1.0, "bandwidth >= Open MPI"},
      {"allreduce", 1 << 20, 1.0, "bandwidth >= Open MPI"},
      {"alltoall", 64 << 10, 1.0, "bandwidth >= Open MPI"},
  };
  std::printf(
      "== targets: shm, default settings, %d (n = 2) and %d (n = 4) alternating runs (ukai "
      "job, then Open MPI job); each library's median of its runs' medians, ratio of the "
      "two; load %s\n",
      RunsFor(2, runs), RunsFor(4, runs), Load().c_str());
  std::printf("%-3s %-10s %9s %-18s %11s %11s %7s %6s  %s\n", "n", "collective", "bytes",
              "ukai algorithm", "ukai us", "ompi us", "ratio", "met", "target");
  for (int n : {2, 4}) {
    std::vector<Spec> specs;
    for (const Target& t : kTargets) specs.push_back({t.op, t.bytes, Algorithm::kAuto});
    std::map<std::string, std::vector<double>> ukai, ompi;
    std::string note;
    const int n_runs = RunsFor(n, runs);
    for (int k = 0; k < n_runs; ++k) {
      // -1 where a run gave no figure, so that run k of both libraries stays a pair.
      const auto u = RunUkai(n, "shm", specs, seconds);
      const auto m = RunOmpi(n, specs, seconds, &note);
      for (const Target& t : kTargets) {
        const std::string uk = Spec{t.op, t.bytes, Algorithm::kAuto}.Key();
        const std::string mk = t.op + ":" + std::to_string(t.bytes);
        ukai[uk].push_back(u.contains(uk) ? u.at(uk) : -1);
        ompi[mk].push_back(m.contains(mk) ? m.at(mk) : -1);
      }
    }
    for (const Target& t : kTargets) {
      const std::vector<double>& us = ukai[Spec{t.op, t.bytes, Algorithm::kAuto}.Key()];
      const std::vector<double>& ms = ompi[t.op + ":" + std::to_string(t.bytes)];
      const double u = MedianOf(us);
      const double m = MedianOf(ms);
      const double ratio = u > 0 && m > 0 ? u / m : -1;
      std::printf("%-3d %-10s %9llu %-18s %11.3f %11.3f %7.3f %6s  %s\n", n, t.op.c_str(),
                  static_cast<unsigned long long>(t.bytes), "(auto)", u, m, ratio,
                  ratio < 0          ? "?"
                  : ratio <= t.limit ? "yes"
                                     : "NO",
                  t.what);
      std::vector<double> pair;  // ukai / Open MPI of the same run
      int met = 0;
      for (size_t k = 0; k < us.size() && k < ms.size(); ++k) {
        if (us[k] <= 0 || ms[k] <= 0) continue;
        pair.push_back(us[k] / ms[k]);
        met += pair.back() <= t.limit;
      }
      const std::string paired = pair.empty() ? "-" : Figure(MedianOf(pair));
      std::printf(
          "      %d runs: ukai %s us, Open MPI %s us; ratio within a run: median %s, %s (met in "
          "%d of %zu)\n",
          n_runs, Spread(us).c_str(), Spread(ms).c_str(), paired.c_str(), Spread(pair).c_str(), met,
          pair.size());
    }
    if (!note.empty()) std::printf("   Open MPI: %s\n", note.c_str());
  }
  std::printf("   load at the end: %s\n", Load().c_str());
}

void Relay(double seconds) {
  const std::vector<std::string> ops = {"broadcast", "reduce", "allreduce", "sendrecv"};
  const std::vector<uint64_t> sizes = {4096, 65536, 1 << 20, 4 << 20};
  for (const char* module : {"shm", "tcp"}) {
    std::vector<Spec> specs;
    for (const std::string& op : ops) {
      const Collective c = op == "sendrecv" ? Collective::kSendRecv : *rt::ParseCollective(op);
      for (uint64_t b : sizes) {
        for (Algorithm alg : rt::AlgorithmsFor(c)) specs.push_back({op, b, alg});
      }
    }
    std::printf("== relay vs classical: 4 processes over %s, default settings; load %s\n", module,
                Load().c_str());
    const auto res = RunUkai(4, module, specs, seconds);
    std::printf("%-10s %9s %-20s %11s %11s %9s\n", "collective", "bytes", "best classical",
                "its us", "relay us", "relay/best");
    for (const std::string& op : ops) {
      const Collective c = op == "sendrecv" ? Collective::kSendRecv : *rt::ParseCollective(op);
      for (uint64_t b : sizes) {
        double best = -1, relay = -1;
        Algorithm best_alg = Algorithm::kAuto;
        for (Algorithm alg : rt::AlgorithmsFor(c)) {
          auto it = res.find(Spec{op, b, alg}.Key());
          if (it == res.end() || it->second < 0) continue;
          if (alg == Algorithm::kRelay) {
            relay = it->second;
          } else if (best < 0 || it->second < best) {
            best = it->second;
            best_alg = alg;
          }
        }
        std::printf("%-10s %9llu %-20s %11.2f %11.2f %9.2f\n", op.c_str(),
                    static_cast<unsigned long long>(b), rt::AlgorithmName(best_alg).data(), best,
                    relay, best > 0 && relay > 0 ? relay / best : -1.0);
      }
    }
  }
}

// C++ names of the enums for the printed rows.
std::string EnumName(const std::string& op) {
  static const std::map<std::string, std::string> kNames = {
      {"barrier", "kBarrier"},     {"broadcast", "kBroadcast"},          {"scatter", "kScatter"},
      {"gather", "kGather"},       {"allgather", "kAllgather"},          {"reduce", "kReduce"},
      {"allreduce", "kAllreduce"}, {"reduce_scatter", "kReduceScatter"}, {"alltoall", "kAlltoall"},
      {"sendrecv", "kSendRecv"}};
  return kNames.at(op);
}
std::string EnumName(Algorithm a) {
  static const char* const kNames[] = {"kAuto",
                                       "kDirect",
                                       "kBinomial",
                                       "kChain",
                                       "kRing",
                                       "kRecursiveDoubling",
                                       "kRecursiveHalving",
                                       "kPairwise",
                                       "kRelay"};
  return kNames[static_cast<int>(a)];
}

// The table's figures are the fastest batch, not the median: the batch that a loaded machine
// disturbed least (a collective needs every member on a CPU at once, so on an oversubscribed
// host most batches include someone's wait for the scheduler, and the delays only add).
void Tune(double seconds) {
  const std::vector<uint64_t> sizes = {8, 64, 512, 4096, 32768, 262144, 1 << 20};
  const std::vector<std::string> ops = {"barrier",   "broadcast", "scatter",   "gather",
                                        "allgather", "reduce",    "allreduce", "reduce_scatter",
                                        "alltoall",  "sendrecv"};
  std::printf("// Rows measured by `ukai_coll_bench --tune` (fastest batch; load %s)\n",
              Load().c_str());
  for (const char* module : {"shm", "tcp"}) {
    for (int n : {2, 3, 4}) {
      std::vector<Spec> specs;
      for (const std::string& op : ops) {
        const Collective c = op == "sendrecv" ? Collective::kSendRecv : *rt::ParseCollective(op);
        for (uint64_t b : sizes) {
          if (op == "barrier" && b != 8) continue;
          for (Algorithm alg : rt::AlgorithmsFor(c)) specs.push_back({op, b, alg});
        }
      }
      const auto res = RunUkai(n, module, specs, seconds, 0);
      for (const std::string& op : ops) {
        const Collective c = op == "sendrecv" ? Collective::kSendRecv : *rt::ParseCollective(op);
        Algorithm last = Algorithm::kAuto;
        uint64_t last_bytes = 0;
        std::vector<std::pair<uint64_t, Algorithm>> rows;
        for (uint64_t b : sizes) {
          if (op == "barrier" && b != 8) continue;
          double best = -1, last_us = -1;
          Algorithm best_alg = Algorithm::kAuto;
          std::string line;
          for (Algorithm alg : rt::AlgorithmsFor(c)) {
            auto it = res.find(Spec{op, b, alg}.Key());
            const double us = it == res.end() ? -1 : it->second;
            char cell[64];
            std::snprintf(cell, sizeof cell, " %s=%.2f", rt::AlgorithmName(alg).data(), us);
            line += cell;
            if (alg == last) last_us = us;
            if (us > 0 && (best < 0 || us < best)) {
              best = us;
              best_alg = alg;
            }
          }
          // Hysteresis: the previous size's choice stays unless another is 10 % faster (the
          // figures of a loaded machine jitter; a table that flips per size helps nobody).
          if (last != Algorithm::kAuto && last_us > 0 && last_us <= best * 1.1) best_alg = last;
          std::fprintf(stderr, "%s n=%d %s %llu:%s\n", module, n, op.c_str(),
                       static_cast<unsigned long long>(b), line.c_str());
          if (best_alg != last && last != Algorithm::kAuto) rows.push_back({last_bytes, last});
          last = best_alg;
          last_bytes = b;
        }
        rows.push_back({UINT64_MAX, last});
        for (size_t i = 0; i < rows.size(); ++i) {
          const std::string max_n = n == 4 ? "kLarge" : std::to_string(n);
          const std::string max_bytes =
              rows[i].first == UINT64_MAX ? "kAny" : std::to_string(rows[i].first);
          std::printf("    {Collective::%s, \"%s\", %d, %s, %s, Algorithm::%s},\n",
                      EnumName(op).c_str(), module, n, max_n.c_str(), max_bytes.c_str(),
                      EnumName(rows[i].second).c_str());
        }
      }
    }
  }
}

// Checks the driver's options (the worker's come from the driver): -1 to go on; otherwise the
// exit code (0 after --help, 2 after printing what is wrong), so that a mistyped option does
// not start a quarter-hour run.
int CheckDriverArgs(int argc, char** argv) {
  static const char kUsage[] =
      "usage: ukai_coll_bench [--runs=N] [--seconds=S] [--only=targets|relay]\n"
      "       ukai_coll_bench --tune [--seconds=S]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (a == "--help" || a == "-h") return std::fputs(kUsage, stdout), 0;
    char* end = nullptr;
    const double number = value.empty() ? 0 : std::strtod(value.c_str(), &end);
    const bool positive = !value.empty() && *end == '\0' && number > 0;
    const bool ok = (a == "--tune") || (name == "--seconds" && positive) ||
                    (name == "--runs" && positive && number == static_cast<int>(number)) ||
                    a == "--only=targets" || a == "--only=relay";
    if (!ok) {
      std::fprintf(stderr, "ukai_coll_bench: unknown or malformed argument '%s'\n%s", argv[i],
                   kUsage);
      return 2;
    }
  }
  return -1;
}

}  // namespace
}  // namespace ukai::bench

int main(int argc, char** argv) {
  using namespace ukai::bench;
  if (!Arg(argc, argv, "--worker").empty()) return RunWorker(argc, argv);
  if (const int code = CheckDriverArgs(argc, argv); code >= 0) return code;
  const double seconds = std::atof(Arg(argc, argv, "--seconds", "0.3").c_str());
  if (!Arg(argc, argv, "--tune").empty()) {
    Tune(seconds);
    return 0;
  }
  const int runs = std::atoi(Arg(argc, argv, "--runs", "3").c_str());
  const std::string only = Arg(argc, argv, "--only");
  if (only.empty() || only == "targets") Targets(runs, seconds);
  if (only.empty() || only == "relay") Relay(seconds);
  return 0;
}
