// ukai_workload_bench: speed and memory of the workload layer and the trace readers
// (docs/workloads.md, docs/performance.md "Workload layer and trace replay").
//
//   overhead-rR   the synthetic generator against the workload layer replaying the very same
//                 messages (SyntheticMessageList + ListSource: identical deliveries, cycle for
//                 cycle; tests/sim/workload/workload_layer_test.cc) on the 10x10 torus, dor,
//                 uniform 16-byte messages at R flits/node/cycle, 20000 cycles. Each side runs
//                 kRepeats times, alternating; the figure is the best CPU time of each side
//                 (a loaded machine slows runs, never speeds them up). Target: the layer
//                 within 10 % (ratio <= 1.10). The message list is drawn before the clock
//                 starts (the synthetic generator draws as it goes: that cost is on its side).
//   netrace-N     a netrace trace of N packets written by the benchmark (64 nodes, random
//                 pairs, control and data packets, each packet letting 0-2 later packets
//                 start), replayed on an 8x8 mesh with its dependencies: trace packets per
//                 second of wall time and of CPU time, and the peak RSS of the process.
//   otf2-I        an OTF2 archive of 16 ranks written by the benchmark, I iterations of a
//                 ring exchange (MPI_Isend / MPI_Irecv / waits, 4 KiB and 100 KiB messages,
//                 the larger by rendezvous) and an 8-byte MPI_Allreduce, 2 us of compute
//                 between, replayed on a 4x4 torus: messages the network carried per second,
//                 peak RSS.
// RSS against trace length: each netrace and OTF2 case runs at two lengths (10x apart) in
// its own forked child (wait4's ru_maxrss); target: flat (the long trace's RSS within 10 %
// of the short one's).
//
// Usage: ukai_workload_bench [--quick]   (--quick: shorter traces, for a smoke run)
//        ukai_workload_bench --write-netrace FILE   (the 500000-packet trace, for profiling)
//        ukai_workload_bench --netrace FILE         (one replay on the 8x8 mesh, in-process)
//        ukai_workload_bench --write-otf2 DIR RANKS ITERATIONS   (the OTF2 case's program)
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/engine/network.h"
#include "sim/workload/list_source.h"
#include "sim/workload/netrace_source.h"
#include "sim/workload/netrace_writer.h"  // tests/: the test code's trace writers
#include "sim/workload/otf2_replay.h"
#include "sim/workload/otf2_writer.h"
#include "sim/workload/run_workload.h"
#include "sim/workload/workload.h"

namespace {

using namespace ukai::sim;  // NOLINT: a benchmark driver
using ukai::Rng;

constexpr int kRepeats = 5;

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SimConfig TorusConfig(double rate) {
  SimConfig c;
  c.network.topology = TopologyKind::kTorus;
  c.network.n = 2;
  c.network.k = {10, 10};
  c.routing.algorithm = "dor";
  c.traffic.pattern = "uniform";
  c.traffic.message_bytes = 16;
  c.traffic.rate = rate;
  c.seed = 7;
  return c;
}

// One run of `cycles` cycles: the synthetic generator (layer = false) or the layer replaying
// `messages`. Returns the CPU seconds of the stepping alone; *delivered counts deliveries.
double RunOnce(const SimConfig& c, int64_t cycles, bool layer,
               const std::vector<WorkMessage>& messages, int64_t* delivered) {
  auto net = std::move(Network::Create(c, {}, /*with_traffic=*/!layer)).value();
  Workload w(WorkloadOptions{c.router.flit_bytes, 32767, false});
  ListSource list(messages);
  if (layer) {
    w.AddSource(&list);
    net->SetMessageSource(&w);
  }
  *delivered = 0;
  const double t0 = CpuSeconds();
  while (net->now() < cycles) {
    net->Step();
    *delivered += static_cast<int64_t>(net->deliveries().size());
  }
  const double t = CpuSeconds() - t0;
  net->SetMessageSource(nullptr);
  return t;
}

void Overhead(double rate, bool quick) {
  const int64_t cycles = quick ? 4000 : 20000;
  const SimConfig c = TorusConfig(rate);
  auto net = std::move(Network::Create(c, {}, false)).value();
  const std::vector<WorkMessage> messages =
      std::move(SyntheticMessageList(c, net->topology(), cycles)).value();
  double best_syn = 1e30, best_layer = 1e30;
  int64_t syn_delivered = 0, layer_delivered = 0;
  for (int i = 0; i < kRepeats; ++i) {
    best_syn = std::min(best_syn, RunOnce(c, cycles, false, messages, &syn_delivered));
    best_layer = std::min(best_layer, RunOnce(c, cycles, true, messages, &layer_delivered));
  }
  std::printf("%-16s %10lld %10lld %10.3f %10.3f %8.3f %s\n",
              ("overhead-r" + std::to_string(rate).substr(0, 4)).c_str(),
              static_cast<long long>(syn_delivered), static_cast<long long>(layer_delivered),
              best_syn, best_layer, best_layer / best_syn,
              syn_delivered == layer_delivered ? "same deliveries" : "DIFFERENT deliveries");
}

// A netrace trace of `packets` packets on 64 nodes (see the file comment).
bool WriteNetrace(const std::string& path, uint32_t packets) {
  ukai::testing::TraceHeader h;
  h.benchmark = "ukai_workload_bench";
  const uint64_t spacing = 1;  // one packet per cycle on 64 nodes: 1/64 packet/node/cycle
  ukai::testing::StreamingTraceWriter out(path, h, packets, spacing * (packets - 1));
  Rng rng(11);
  for (uint32_t i = 0; i < packets; ++i) {
    ukai::testing::TracePacket p;
    p.id = i;
    p.cycle = spacing * i;
    p.src = static_cast<uint8_t>(rng.Uniform(64));
    p.dst = static_cast<uint8_t>((p.src + 1 + rng.Uniform(63)) % 64);
    p.type = rng.Uniform(2) == 0 ? 1 : 2;  // ReadReq (8 bytes) or ReadResp (72 bytes)
    const uint64_t deps = rng.Uniform(3);
    for (uint64_t d = 0; d < deps; ++d) {
      const uint32_t later = i + 1 + static_cast<uint32_t>(rng.Uniform(200));
      if (later < packets) p.deps.push_back(later);
    }
    out.Add(p);
  }
  return out.Close();
}

// An OTF2 archive of `kRanks` ranks, `iterations` of ring exchange + allreduce.
std::string WriteOtf2(const std::string& dir, int iterations, int kRanks = 16) {
  ukai::testing::Otf2TestArchive a(dir, kRanks);
  for (int r = 0; r < kRanks; ++r) {
    OTF2_EvtWriter* w = a.Events(r);
    const uint32_t next = (r + 1) % kRanks, prev = (r + kRanks - 1) % kRanks;
    uint64_t t = 0;
    for (int i = 0; i < iterations; ++i) {
      const uint64_t bytes = i % 8 == 7 ? 100000 : 4096;
      t += 2000;  // compute
      OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, 1);
      OTF2_EvtWriter_MpiIsend(w, nullptr, t + 1, next, 0, 3, bytes, 2);
      OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t + 2, 2);
      OTF2_EvtWriter_MpiIrecv(w, nullptr, t + 3, prev, 0, 3, bytes, 1);
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t + 4);
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t + 5, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, 0,
                                      8 * kRanks, 8 * kRanks);
      t += 5;
    }
  }
  return a.Close();
}

struct Replayed {
  int64_t units = 0;  // trace packets (netrace) or network messages (OTF2)
  int64_t cycles = 0;
  bool ok = false;
};

Replayed ReplayTrace(const SimConfig& c) {
  auto net = std::move(Network::Create(c, {}, false)).value();
  auto source = std::move(OpenTraceSource(c, net->topology(), 1000)).value();
  Workload w(WorkloadOptionsFor(c));
  w.AddSource(source.get());
  net->SetMessageSource(&w);
  while (!w.Done() && !w.Stuck(net->now()) && w.status().ok()) {
    net->SkipIdle(int64_t{1} << 62);
    net->Step();
  }
  net->SetMessageSource(nullptr);
  Replayed r;
  r.units = w.stats().messages_delivered;
  r.cycles = net->now();
  r.ok = w.Done() && w.status().ok();
  return r;
}

// Runs in a forked child: prints the case's figures (the parent adds the RSS).
void RunTrace(const char* name, const SimConfig& c) {
  const double w0 = WallSeconds(), c0 = CpuSeconds();
  const Replayed r = ReplayTrace(c);
  const double wall = WallSeconds() - w0, cpu = CpuSeconds() - c0;
  std::printf("%-16s %10lld %10lld %10.3f %10.3f %12.0f %12.0f %s", name,
              static_cast<long long>(r.units), static_cast<long long>(r.cycles), wall, cpu,
              static_cast<double>(r.units) / wall, static_cast<double>(r.units) / cpu,
              r.ok ? "ok " : "FAILED");
  std::fflush(stdout);
  std::_Exit(r.ok ? 0 : 1);
}

// Forks, runs `body` in the child, returns its peak RSS in MB (-1 when it failed).
template <typename Body>
double InChild(Body body) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    std::fflush(stdout);
    std::_Exit(0);
  }
  int status = 0;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

SimConfig NetraceConfig(const std::string& path) {
  SimConfig c;
  c.network.topology = TopologyKind::kMesh;
  c.network.n = 2;
  c.network.k = {8, 8};
  c.routing.algorithm = "dor";
  c.workload.kind = WorkloadKind::kNetrace;
  c.workload.file = path;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick |= std::strcmp(argv[i], "--quick") == 0;
  if (argc == 3 && std::strcmp(argv[1], "--write-netrace") == 0) {  // for profiling
    return WriteNetrace(argv[2], 500000) ? 0 : 1;
  }
  if (argc == 5 && std::strcmp(argv[1], "--write-otf2") == 0) {  // tests/data/otf2/ring4
    WriteOtf2(argv[2], std::atoi(argv[4]), std::atoi(argv[3]));
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--netrace") == 0) {  // one replay, in this process
    RunTrace("netrace", NetraceConfig(argv[2]));
  }
  int failures = 0;

  std::printf("Workload layer overhead against the synthetic generator (best of %d, CPU s)\n",
              kRepeats);
  std::printf("%-16s %10s %10s %10s %10s %8s\n", "case", "syn deliv", "layer deliv", "syn cpu s",
              "layer cpu s", "ratio");
  for (double rate : {0.1, 0.3}) {
    if (InChild([&] { Overhead(rate, quick); }) < 0) ++failures;
    std::printf("\n");
  }

  const std::string dir =
      (std::filesystem::temp_directory_path() / ("ukai_workload_bench_" + std::to_string(getpid())))
          .string();
  std::filesystem::create_directories(dir);
  std::printf("\nTrace replay: units = trace packets (netrace) or network messages (OTF2)\n");
  std::printf("%-16s %10s %10s %10s %10s %12s %12s %6s %8s\n", "case", "units", "cycles", "wall s",
              "cpu s", "units/s", "units/cpu-s", "", "RSS MB");
  const uint32_t short_packets = quick ? 5000 : 50000;
  std::vector<double> rss;
  for (uint32_t packets : {short_packets, 10 * short_packets}) {
    const std::string path = dir + "/bench_" + std::to_string(packets) + ".tra.bz2";
    // Written in a child, so that the compressor's memory is not the replay's.
    if (InChild([&] { std::_Exit(WriteNetrace(path, packets) ? 0 : 1); }) < 0) {
      std::printf("cannot write %s\n", path.c_str());
      return 1;
    }
    const SimConfig c = NetraceConfig(path);
    const std::string name = "netrace-" + std::to_string(packets);
    rss.push_back(InChild([&] { RunTrace(name.c_str(), c); }));
    std::printf(" %8.1f\n", rss.back());
    if (rss.back() < 0) ++failures;
  }
  std::printf("netrace RSS long / short: %.3f (target: flat, <= 1.10)\n", rss[1] / rss[0]);
  rss.clear();
  const int short_iterations = quick ? 100 : 500;
  for (int iterations : {short_iterations, 10 * short_iterations}) {
    const std::string anchor = dir + "/otf2_" + std::to_string(iterations) + "/traces.otf2";
    if (InChild([&] { WriteOtf2(dir + "/otf2_" + std::to_string(iterations), iterations); }) < 0) {
      std::printf("cannot write %s\n", anchor.c_str());
      return 1;
    }
    SimConfig c;
    c.network.topology = TopologyKind::kTorus;
    c.network.n = 2;
    c.network.k = {4, 4};
    c.routing.algorithm = "dor";
    c.router.clock_mhz = 1000;
    c.workload.kind = WorkloadKind::kOtf2;
    c.workload.file = anchor;
    const std::string name = "otf2-" + std::to_string(iterations);
    rss.push_back(InChild([&] { RunTrace(name.c_str(), c); }));
    std::printf(" %8.1f\n", rss.back());
    if (rss.back() < 0) ++failures;
  }
  std::printf("otf2 RSS long / short: %.3f (target: flat, <= 1.10)\n", rss[1] / rss[0]);
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
