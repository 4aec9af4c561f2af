// ukai_fullmesh_bench: speed and memory of the full-mesh model (src/sim/fullmesh) under random
// storms of operations, and a 1024-node allreduce sweep. Figures go to docs/performance.md.
//
//   p2p-N8       N = 8, 2 M random p2p (64 B - 4 KiB, variable-k), arrivals 0.25 us apart
//   p2p-N8-data  the same, 200 k operations, moving and checking real bytes
//   mix-N{8,64,1024}  half p2p over WORLD (variable-k), half collectives (multicast,
//                scatter, gather, reduce, allreduce, allgather, all-to-all) over a random
//                group of 8 consecutive nodes; 16 B - 16 KiB; arrivals max(2, 64/N) us apart
//   allreduce-N1024  fixed-k allreduce of 4 KiB .. 4 MiB per node, each alone (K = N)
// Each case runs in a forked child, so its peak RSS (wait4) is its own; operations are drawn
// one at a time and results consumed as they finish (Machine's streaming form), so the RSS is
// the machine's own: live rows, their links, the link table. Timing only
// (fullmesh.data = false) unless the name says data. ops/s = operations / wall seconds
// (cpu s: the child's user + system CPU time, for a loaded machine);
// cpu ns/xfer = CPU time / link segments of the plans (the cost grows with those, not N^2).
//
// Usage: ukai_fullmesh_bench [--quick]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/fullmesh/machine.h"

namespace {

using ukai::Rng;
using namespace ukai::sim::fullmesh;

struct Outcome {
  int64_t ops = 0, transfers = 0, bad = 0, max_rows = 0;
  double wall = 0, sim_us = 0;
};

// Runs `count` operations drawn one at a time by `next` through a streaming machine (no
// workload or result vectors: the memory is the machine's own).
template <typename Next>
Outcome RunStorm(const FullMeshConfig& cfg, int64_t count, Next next) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  int64_t drawn = 0;
  Machine m(
      cfg,
      [&](Operation* op) {
        if (drawn == count) return false;
        ++drawn;
        next(op);
        return true;
      },
      [&o](int64_t, const Operation&, const OpResult& r) {
        o.transfers += r.transfers;
        o.bad += r.data_checked && !r.data_ok;
      });
  m.Run();
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.ops = m.completed();
  o.sim_us = m.now();
  o.max_rows = static_cast<int64_t>(m.max_rows());
  return o;
}

// Random p2p over N nodes, 64 B - 4 KiB, one every 0.25 us.
struct P2pDraw {
  int nodes;
  Rng rng;
  double t = 0;
  void operator()(Operation* op) {
    *op = Operation();
    t += 0.25;
    op->type = OpType::kP2p;
    op->root = static_cast<int>(rng.Uniform(nodes));
    op->dest = (op->root + 1 + static_cast<int>(rng.Uniform(nodes - 1))) % nodes;
    op->bytes = 64 + static_cast<int64_t>(rng.Uniform(4096 - 64));
    op->at_us = t;
  }
};

// Half p2p over WORLD, half collectives over a random group of 8 (comms 1..).
struct MixDraw {
  const FullMeshConfig* cfg;
  Rng rng;
  double t = 0;
  void operator()(Operation* op) {
    *op = Operation();
    t += std::max(2.0, 64.0 / cfg->nodes);
    op->at_us = t;
    op->bytes = 4 * (16 + static_cast<int64_t>(rng.Uniform(4096)));
    if (rng.Bernoulli(0.5)) {
      op->type = OpType::kP2p;
      op->root = static_cast<int>(rng.Uniform(cfg->nodes));
      op->dest = (op->root + 1 + static_cast<int>(rng.Uniform(cfg->nodes - 1))) % cfg->nodes;
      return;
    }
    op->type = static_cast<OpType>(1 + rng.Uniform(7));
    op->comm = 1 + static_cast<int>(rng.Uniform(cfg->comms.size() - 1));
    op->root = cfg->comms[op->comm].members[rng.Uniform(8)];
  }
};

void AddGroups(FullMeshConfig* cfg) {
  for (int g = 0; g + 8 <= cfg->nodes; g += 8) {
    char name[16];
    std::snprintf(name, sizeof(name), "G%d", g / 8);
    Communicator c{name, {}};
    for (int i = 0; i < 8; ++i) c.members.push_back(g + i);
    cfg->comms.push_back(c);
  }
}

FullMeshConfig Base(int nodes, Policy policy, bool data) {
  FullMeshConfig c;
  c.nodes = nodes;
  c.policy = policy;
  c.data = data;
  c.Normalize();
  return c;
}

void RunCase(const std::string& name, bool quick) {
  const int64_t scale = quick ? 10 : 1;
  Outcome o;
  if (name == "p2p-N8" || name == "p2p-N8-data") {
    const bool data = name == "p2p-N8-data";
    const FullMeshConfig cfg = Base(8, Policy::kVariableK, data);
    o = RunStorm(cfg, (data ? 200000 : 2000000) / scale, P2pDraw{8, Rng(1)});
  } else if (name.rfind("mix-N", 0) == 0) {
    FullMeshConfig cfg = Base(std::stoi(name.substr(5)), Policy::kVariableK, false);
    AddGroups(&cfg);
    const int64_t count = (cfg.nodes >= 1024 ? 100000 : 400000) / scale;
    o = RunStorm(cfg, count, MixDraw{&cfg, Rng(2)});
  } else {  // allreduce-N1024
    const FullMeshConfig cfg = Base(1024, Policy::kFixedK, false);
    for (int64_t bytes = 4096; bytes <= (int64_t{4} << 20); bytes *= quick ? 1024 : 4) {
      const Outcome one = RunStorm(cfg, 1, [bytes](Operation* op) {
        *op = Operation();
        op->type = OpType::kAllreduce;
        op->bytes = bytes;
      });
      o.ops += one.ops;
      o.transfers += one.transfers;
      o.wall += one.wall;
    }
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  std::printf("%-16s %9lld %8.3f %8.3f %10.0f %10.0f %10.1f %11.1f %8lld %4lld", name.c_str(),
              static_cast<long long>(o.ops), o.wall, cpu, o.ops / o.wall, o.ops / cpu,
              static_cast<double>(o.transfers) / o.ops, cpu * 1e9 / o.transfers,
              static_cast<long long>(o.max_rows), static_cast<long long>(o.bad));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick |= std::strcmp(argv[i], "--quick") == 0;
  const char* cases[] = {"p2p-N8",  "p2p-N8-data", "mix-N8",
                         "mix-N64", "mix-N1024",   "allreduce-N1024"};
  std::printf("%-16s %9s %8s %8s %10s %10s %10s %11s %8s %4s %8s\n", "case", "ops", "wall s",
              "cpu s", "ops/s", "ops/cpu-s", "xfers/op", "cpu ns/xfer", "max rows", "bad",
              "RSS MB");
  for (const char* c : cases) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      RunCase(c, quick);
      std::_Exit(0);
    }
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    std::printf(" %8.1f\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
