// ukai_sim_multicast_bench: the runtime's multicast (include/ukai/rt/multicast.hpp) in
// simulated time on a 64-node torus (8x8, dimension-order routing, 16-byte flits, 1 GHz,
// sim.cpu_scale = 0: deterministic). Process 0 multicasts one message to processes
// 1..g (node i = process i) with acks; for each kind (chain with ack combining, k-ary tree,
// naive) it prints the simulated time until the last member had the whole message
// (deliver_us) and until the sender held every ack (ack_us), the bytes the runtimes put on
// the network and the mean router-to-router hops of its packets. Each point runs on a fresh
// machine. Default: a short set (make bench); --full: group sizes 4..63 and 64 B..1 MiB;
// --tree: the same on a 64-node tree of switches instead (3 levels of 4-way switches, source
// routing: the hierarchical network of seed 003, docs/sss.md), where a hop between two
// nodes under one switch counts 2 (node to switch to node).
// docs/sim-module.md ("Measured on the simulated machine") shows the table.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/rt/sim/sim_bench_job.h"
#include "ukai/ukai.hpp"

namespace {

using ukai::rt::Multicaster;
using ukai::rt::MulticastKind;
using ukai::rt::MulticastOptions;
using ukai::rt::Startpoint;
using ukai::rt::bench::SimBenchJob;

constexpr char kTree64[] =
    "[network]\ntopology = \"tree\"\ntree_arity = 4\ntree_levels = 3\n"
    "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
    "[routing]\nalgorithm = \"source\"\n"
    "[sim]\ncpu_scale = 0.0\n";

constexpr char kTorus64[] =
    "[network]\ntopology = \"torus\"\nk = 8\nn = 2\n"
    "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
    "[routing]\nalgorithm = \"dor\"\n"
    "[sim]\ncpu_scale = 0.0\n";

struct Point {
  double deliver_us = 0;
  double ack_us = 0;
  double mbytes_sent = 0;
  double avg_hops = 0;
  bool ok = false;
};

Point RunOne(const char* machine, MulticastKind kind, int fanout, size_t chunk, int members,
             size_t bytes) {
  Point p;
  std::unique_ptr<SimBenchJob> job = SimBenchJob::Start(machine, members + 1);
  if (!job) return p;
  std::atomic<int64_t> last_delivery_ns{0};
  std::atomic<int> delivered{0};
  std::vector<std::unique_ptr<Multicaster>> mcs;
  std::vector<Startpoint> group;
  for (int i = 0; i <= members; ++i) {
    ukai::rt::Runtime* rt = &job->rt(i);
    auto mc =
        Multicaster::Attach(job->ctx(i), [&, rt, bytes](const ukai::rt::MulticastDelivery& d) {
          if (d.data.size() != bytes) return;
          const int64_t t = rt->Now().count();
          int64_t prev = last_delivery_ns.load();
          while (t > prev && !last_delivery_ns.compare_exchange_weak(prev, t)) {
          }
          ++delivered;
        });
    if (!mc.ok()) {
      std::fprintf(stderr, "attach %d: %s\n", i, mc.status().ToString().c_str());
      return p;
    }
    if (i > 0) group.push_back((*mc)->startpoint());
    mcs.push_back(std::move(*mc));
  }
  const std::vector<uint8_t> data(bytes, 0x5a);
  MulticastOptions o;
  o.kind = kind;
  o.fanout = fanout;
  o.chunk_bytes = chunk;
  o.timeout = std::chrono::minutes(10);
  const uint64_t sent0 = job->fabric().Counters()["bytes_sent"];
  const int64_t t0 = job->rt(0).Now().count();
  auto r = mcs[0]->Multicast(group, data, o);
  const int64_t t1 = job->rt(0).Now().count();
  if (!r.ok() || !r->all_acked() || delivered.load() != members) {
    std::fprintf(stderr, "multicast %s to %d members of %zu bytes failed: %s (%d delivered)\n",
                 std::string(ukai::rt::MulticastKindName(kind)).c_str(), members, bytes,
                 r.ok() ? "not every member acked" : r.status().ToString().c_str(),
                 delivered.load());
    return p;
  }
  p.deliver_us = double(last_delivery_ns.load() - t0) / 1000.0;
  p.ack_us = double(t1 - t0) / 1000.0;
  p.mbytes_sent = double(job->fabric().Counters()["bytes_sent"] - sent0) / 1e6;
  p.avg_hops = ukai::rt::NetworkResult(job->fabric()).avg_hops;
  p.ok = true;
  mcs.clear();
  return p;
}

std::string SizeName(size_t b) {
  if (b >= (size_t{1} << 20)) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false, tree = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--full") == 0) {
      full = true;
    } else if (std::strcmp(argv[i], "--tree") == 0) {
      tree = true;
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--tree]\n", argv[0]);
      return 2;
    }
  }
  const char* machine = tree ? kTree64 : kTorus64;
  const std::vector<int> groups =
      full ? std::vector<int>{4, 8, 16, 32, 63} : std::vector<int>{8, 63};
  const std::vector<size_t> sizes =
      full ? std::vector<size_t>{64, 4096, size_t{64} << 10, size_t{1} << 20}
           : std::vector<size_t>{64, size_t{64} << 10};
  struct Kind {
    const char* name;
    MulticastKind kind;
    int fanout;
    size_t chunk;
  };
  constexpr size_t k64K = size_t{64} << 10, k4K = 4096;
  const Kind kinds[] = {
      {"chain", MulticastKind::kChain, 2, k64K}, {"chain/4K", MulticastKind::kChain, 2, k4K},
      {"tree2", MulticastKind::kTree, 2, k64K},  {"tree2/4K", MulticastKind::kTree, 2, k4K},
      {"tree4", MulticastKind::kTree, 4, k64K},  {"naive", MulticastKind::kNaive, 2, k64K}};
  std::printf(
      "multicast with acks from node 0 to nodes 1..g of %s (16 B flits, 1 GHz,"
      " cpu_scale 0), simulated microseconds until the sender held every ack\n"
      "(kind/4K: 4 KiB chunks, else the default 64 KiB; treeK: fanout K); MB = bytes the"
      " runtimes sent (10^6), hops = mean router-to-router hops per packet; ack_c / ack_t ="
      " ack_us - deliver_us (the last member had the data) of chain/4K / tree2/4K\n",
      tree ? "a tree of 4-way switches, 3 levels (source routing)" : "an 8x8 torus (dor)");
  std::printf("%-3s %8s", "g", "bytes");
  for (const Kind& k : kinds) std::printf(" %9s", k.name);
  std::printf(" %8s %8s %6s %6s %6s %6s %6s\n", "MB_chain", "MB_tree2", "h_chn", "h_tr2", "h_nai",
              "ack_c", "ack_t");
  for (size_t bytes : sizes) {
    for (int g : groups) {
      std::printf("%-3d %8s", g, SizeName(bytes).c_str());
      std::vector<Point> pts;
      for (const Kind& k : kinds) {
        pts.push_back(RunOne(machine, k.kind, k.fanout, k.chunk, g, bytes));
        if (!pts.back().ok) return 1;
        std::printf(" %9.2f", pts.back().ack_us);
        std::fflush(stdout);
      }
      std::printf(" %8.3f %8.3f %6.2f %6.2f %6.2f %6.2f %6.2f\n", pts[0].mbytes_sent,
                  pts[2].mbytes_sent, pts[0].avg_hops, pts[2].avg_hops, pts[5].avg_hops,
                  pts[1].ack_us - pts[1].deliver_us, pts[3].ack_us - pts[3].deliver_us);
    }
  }
  return 0;
}
