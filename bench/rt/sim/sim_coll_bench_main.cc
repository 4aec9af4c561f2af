// ukai_sim_coll_bench: the relay collectives of the full-mesh patent (docs/collectives.md,
// "Relay collectives on the simulated machine") against every classical algorithm, in
// simulated time (sim.cpu_scale = 0: deterministic). Machines: "fullmesh", the flit-level
// group topology with one group of n nodes (a direct link between every pair: the optical
// full mesh's links, each node injecting one flit per cycle), the same with
// router.eject_flits = n - 1 (a node receives on all its links at once), and a 4x4 torus
// (n processes on nodes 0..n-1). For broadcast (root 0), reduce (root 0), allreduce (sum of
// doubles) and Send/Recv (rank 0 to rank n-1) of each size it prints the best classical
// algorithm and its time, the relay time with the most relays (the default K) and with the
// best K of a few (RelayCounts), and relay / best. A time is the slowest member's, from its start
// (after a barrier) to its return. Default: n = 8, the full mesh, 4 KiB..1 MiB (make bench); --full
// adds the other machines, 16 B and 4 MiB;
// --chunk=BYTES sets CollOptions::chunk_bytes (pipeline unit of chain and relay) for all.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/rt/sim/sim_bench_job.h"
#include "ukai/ukai.hpp"

namespace {

using ukai::Status;
using ukai::rt::Algorithm;
using ukai::rt::Collective;
using ukai::rt::CollOptions;
using ukai::rt::Group;
using ukai::rt::bench::SimBenchJob;

constexpr int kProcs = 8;

struct Machine {
  const char* name;
  std::string config;
};

std::vector<Machine> Machines() {
  const std::string router = "flit_bytes = 16\nclock_mhz = 1000\n";
  const std::string sim = "[sim]\ncpu_scale = 0.0\n";
  const std::string mesh =
      "[network]\ntopology = \"group\"\ngroups = 1\ngroup_size = " + std::to_string(kProcs) +
      "\n[router]\n" + router;
  const std::string group_routing = "[routing]\nalgorithm = \"dor-detour\"\n";
  return {
      {"fullmesh", mesh + group_routing + sim},
      {"fullmesh_ej",
       mesh + "eject_flits = " + std::to_string(kProcs - 1) + "\n" + group_routing + sim},
      {"torus4x4", "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[router]\n" + router +
                       "[routing]\nalgorithm = \"dor\"\n" + sim},
  };
}

// One collective call of rank r with `bytes` per member.
Status Call(Group& g, Collective c, size_t bytes, Algorithm a, int relays, size_t chunk_bytes,
            std::vector<double>& in, std::vector<double>& out) {
  CollOptions o;
  o.algorithm = a;
  o.relays = relays;
  o.chunk_bytes = chunk_bytes;
  const size_t n = bytes / sizeof(double);
  std::span<double> src(in.data(), n), dst(out.data(), n);
  switch (c) {
    case Collective::kBroadcast:
      return g.Broadcast(dst, 0, o);
    case Collective::kReduce:
      return g.Reduce(src, dst, ukai::rt::ReduceOp::kSum, 0, o);
    case Collective::kAllreduce:
      return g.Allreduce(src, dst, ukai::rt::ReduceOp::kSum, o);
    case Collective::kSendRecv:
      if (g.rank() == 0) return g.Send(src, g.size() - 1, 1, o);
      if (g.rank() == g.size() - 1) return g.Recv(dst, 0, 1);
      return Status::Ok();
    default:
      return Status::InvalidArgument("not measured");
  }
}

struct Job {
  std::unique_ptr<SimBenchJob> sim;
  std::unique_ptr<ukai::rt::bench::MemberThreads> members;
  std::vector<std::unique_ptr<Group>> groups;
  // Runs fn(rank) on each member's own thread (SimBenchJob's MemberThreads).
  void Run(const std::function<void(int)>& fn) { members->Run(fn); }
};

// The relay counts K tried: the most (the default) first, then fewer (embodiment 6).
std::vector<int> RelayCounts(Collective c) {
  if (c == Collective::kSendRecv) return {kProcs - 2, kProcs / 2, 2, 1};
  return {kProcs, kProcs - 1, kProcs / 2, 2, 1};
}

// The largest spread of the members' start times (after the barrier) of any call measured,
// nanoseconds: how far a member's own elapsed time can undercount the whole operation.
int64_t g_max_start_spread_ns = 0;

// Simulated microseconds of one call (the slowest member), or < 0 on error.
double Measure(Job& job, Collective c, size_t bytes, Algorithm a, int relays, size_t chunk_bytes) {
  std::vector<int64_t> elapsed(job.sim->size(), -1), start(job.sim->size(), 0);
  job.Run([&](int r) {
    Group& g = *job.groups[r];
    std::vector<double> in(bytes / sizeof(double), 1.0 + r), out(bytes / sizeof(double), 0.0);
    if (!g.Barrier().ok()) return;
    const int64_t t0 = job.sim->rt(r).Now().count();
    start[r] = t0;
    Status st = Call(g, c, bytes, a, relays, chunk_bytes, in, out);
    if (!st.ok()) {
      std::fprintf(stderr, "rank %d: %s %s: %s\n", r, std::string(CollectiveName(c)).c_str(),
                   std::string(AlgorithmName(a)).c_str(), st.ToString().c_str());
      return;
    }
    elapsed[r] = job.sim->rt(r).Now().count() - t0;
  });
  int64_t worst = 0;
  for (int64_t e : elapsed) {
    if (e < 0) return -1;
    worst = std::max(worst, e);
  }
  const auto [lo, hi] = std::minmax_element(start.begin(), start.end());
  g_max_start_spread_ns = std::max(g_max_start_spread_ns, *hi - *lo);
  return double(worst) / 1000.0;
}

std::string SizeName(size_t b) {
  if (b >= (size_t{1} << 20)) return std::to_string(b >> 20) + "M";
  if (b >= 1024) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

bool RunMachine(const Machine& m, const std::vector<size_t>& sizes, size_t chunk_bytes) {
  Job job;
  // Built on a thread of its own: a program thread that called a runtime holds it until it
  // waits in the runtime, and a thread's hold ends with the thread.
  std::thread([&] { job.sim = SimBenchJob::Start(m.config, kProcs); }).join();
  if (!job.sim) return false;
  job.members = std::make_unique<ukai::rt::bench::MemberThreads>(*job.sim);
  job.groups.resize(kProcs);
  job.Run([&](int r) {
    auto g = Group::FromStartpoints(job.sim->ctx(r), job.sim->members());
    if (g.ok())
      job.groups[r] = std::move(*g);
    else
      std::fprintf(stderr, "group %d: %s\n", r, g.status().ToString().c_str());
  });
  for (auto& g : job.groups) {
    if (!g) return false;
  }
  for (Collective c : {Collective::kBroadcast, Collective::kReduce, Collective::kAllreduce,
                       Collective::kSendRecv}) {
    for (size_t bytes : sizes) {
      double best = -1, relay_max = -1, relay = -1;
      Algorithm best_alg = Algorithm::kAuto;
      int relay_k = 0;
      for (Algorithm a : ukai::rt::AlgorithmsFor(c)) {
        if (a == Algorithm::kRelay) continue;
        const double us = Measure(job, c, bytes, a, 0, chunk_bytes);
        if (us < 0) return false;
        if (best < 0 || us < best) {
          best = us;
          best_alg = a;
        }
      }
      for (int k : RelayCounts(c)) {
        const double us = Measure(job, c, bytes, Algorithm::kRelay, k, chunk_bytes);
        if (us < 0) return false;
        if (k == RelayCounts(c).front()) relay_max = us;
        if (relay < 0 || us < relay) {
          relay = us;
          relay_k = k;
        }
      }
      std::printf("%-11s %-10s %6s %-18s %9.2f %9.2f %9.2f %3d %6.2f\n", m.name,
                  std::string(CollectiveName(c)).c_str(), SizeName(bytes).c_str(),
                  std::string(AlgorithmName(best_alg)).c_str(), best, relay_max, relay, relay_k,
                  relay / best);
      std::fflush(stdout);
    }
  }
  job.Run([&](int r) { job.groups[r].reset(); });  // each member leaves its group
  job.members.reset();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  size_t chunk_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--full") == 0) {
      full = true;
    } else if (std::strncmp(argv[i], "--chunk=", 8) == 0 && std::atoll(argv[i] + 8) > 0) {
      chunk_bytes = static_cast<size_t>(std::atoll(argv[i] + 8));
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--chunk=BYTES]\n", argv[0]);
      return 2;
    }
  }
  std::vector<size_t> sizes = {4096, size_t{64} << 10, size_t{1} << 20};
  if (full) {
    sizes.insert(sizes.begin(), 16);
    sizes.push_back(size_t{4} << 20);
  }
  std::printf(
      "relay collectives against the best classical algorithm, %d processes, simulated time"
      " (16 B flits, 1 GHz, cpu_scale 0, chunk_bytes %s); relay_max: the most relays (the"
      " default K), relay_us: the best K of those tried, ratio = relay_us / best_us (below 1:"
      " relaying pays)\n",
      kProcs, chunk_bytes == 0 ? "default (64 KiB)" : std::to_string(chunk_bytes).c_str());
  std::printf("%-11s %-10s %6s %-18s %9s %9s %9s %3s %6s\n", "machine", "collective", "bytes",
              "best_classical", "best_us", "relay_max", "relay_us", "K", "ratio");
  for (const Machine& m : Machines()) {
    if (!full && std::strcmp(m.name, "fullmesh") != 0) continue;  // make bench: one machine
    if (!RunMachine(m, sizes, chunk_bytes)) return 1;
  }
  std::printf("members' start times after the barrier differed by at most %.2f us\n",
              double(g_max_start_spread_ns) / 1000.0);
  return 0;
}
