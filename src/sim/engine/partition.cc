#include "sim/engine/partition.h"

#include <sched.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

namespace ukai::sim {
namespace {

// The coordinate ranges of `parts` balanced pieces of `k` coordinates: piece j holds
// [j*k/parts, (j+1)*k/parts).
int PieceOf(int coord, int k, int parts) {
  // The largest j with j*k/parts <= coord.
  int j = static_cast<int>((static_cast<int64_t>(coord) * parts + parts - 1) / k);
  while (j > 0 && static_cast<int64_t>(j) * k / parts > coord) --j;
  while (j + 1 < parts && static_cast<int64_t>(j + 1) * k / parts <= coord) ++j;
  return j;
}

bool IsCube(const NetworkConfig& c) {
  return c.topology == TopologyKind::kMesh || c.topology == TopologyKind::kTorus;
}

// Channels cut by splitting dimension d of a k-ary n-cube into p pieces.
double CutChannels(const NetworkConfig& c, int nodes, int d, int p) {
  if (p <= 1) return 0;
  const double cross = static_cast<double>(nodes) / c.k[static_cast<size_t>(d)];
  return cross * (c.topology == TopologyKind::kTorus ? p : p - 1);
}

// The block factorisation of `count` that cuts the fewest channels (ties: the smallest
// largest factor — a block of every dimension — then the higher dimensions split first).
// Empty when no factorisation fits the radices.
std::vector<int> BlockFactors(const NetworkConfig& c, int nodes, int count) {
  const int n = c.n;
  std::vector<int> best, cur(static_cast<size_t>(n), 1);
  double best_cut = -1;
  int best_max = 0;
  std::function<void(int, int)> search = [&](int d, int left) {
    if (d < 0) {
      if (left != 1) return;
      double cut = 0;
      for (int i = 0; i < n; ++i) cut += CutChannels(c, nodes, i, cur[static_cast<size_t>(i)]);
      const int max_p = *std::max_element(cur.begin(), cur.end());
      bool better = best_cut < 0 || cut < best_cut - 1e-9;
      if (!better && std::abs(cut - best_cut) <= 1e-9) {
        better = max_p < best_max ||
                 (max_p == best_max && std::lexicographical_compare(best.rbegin(), best.rend(),
                                                                    cur.rbegin(), cur.rend()));
      }
      if (better) {
        best = cur;
        best_cut = cut;
        best_max = max_p;
      }
      return;
    }
    for (int p = 1; p <= left && p <= c.k[static_cast<size_t>(d)]; ++p) {
      if (left % p != 0) continue;
      cur[static_cast<size_t>(d)] = p;
      search(d - 1, left / p);
    }
    cur[static_cast<size_t>(d)] = 1;
  };
  search(n - 1, count);
  return best;
}

}  // namespace

int CoresOfThisProcess() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

PartitionPlan PartitionPlan::Single(int nodes) {
  PartitionPlan plan;
  plan.owner_.assign(static_cast<size_t>(nodes), 0);
  plan.runs_.assign(1, {NodeRun{0, nodes}});
  plan.description_ = "1 partition";
  return plan;
}

Result<PartitionPlan> PartitionPlan::Make(const NetworkConfig& c, int nodes, int count,
                                          PartitionShape shape) {
  if (count <= 1) return Single(nodes);
  if (count > nodes) {
    return Status::InvalidArgument(
        fmt::format("run.threads: {} partitions for a network of {} nodes (at most one per node)",
                    count, nodes));
  }
  PartitionPlan plan;
  plan.owner_.assign(static_cast<size_t>(nodes), 0);
  const bool cube = IsCube(c) && static_cast<int>(c.k.size()) == c.n;
  if (shape == PartitionShape::kBlock && !cube) {
    return Status::InvalidArgument(
        "run.partition: \"block\" needs network.topology = \"mesh\" or \"torus\" (use \"slab\")");
  }
  // No factorisation of `count` fits the radices (a prime above every k): slabs instead.
  const std::vector<int> p =
      shape == PartitionShape::kBlock ? BlockFactors(c, nodes, count) : std::vector<int>();
  if (!p.empty()) {
    std::vector<int> coord(static_cast<size_t>(c.n), 0);
    for (int node = 0; node < nodes; ++node) {
      int part = 0;
      for (int d = c.n - 1; d >= 0; --d) {
        const size_t i = static_cast<size_t>(d);
        part = part * p[i] + PieceOf(coord[i], c.k[i], p[i]);
      }
      plan.owner_[static_cast<size_t>(node)] = part;
      for (int d = 0; d < c.n; ++d) {  // next coordinates, dimension 0 fastest
        if (++coord[static_cast<size_t>(d)] < c.k[static_cast<size_t>(d)]) break;
        coord[static_cast<size_t>(d)] = 0;
      }
    }
    std::string dims;
    for (int d = 0; d < c.n; ++d)
      dims += (d ? " x " : "") + std::to_string(p[static_cast<size_t>(d)]);
    plan.description_ = fmt::format("{} blocks ({} per dimension)", count, dims);
  } else {
    // Units: the blocks of the slowest dimensions, the fewest that give every partition one.
    int64_t units = nodes;
    int dims = 0;
    if (cube) {
      units = 1;
      for (int d = c.n - 1; d >= 0 && units < count; --d, ++dims)
        units *= c.k[static_cast<size_t>(d)];
    }
    const int64_t unit_nodes = nodes / units;
    for (int part = 0; part < count; ++part) {
      const int64_t u0 = units * part / count, u1 = units * (part + 1) / count;
      std::fill(plan.owner_.begin() + u0 * unit_nodes, plan.owner_.begin() + u1 * unit_nodes, part);
    }
    plan.description_ = cube && dims == 1
                            ? fmt::format("{} slabs along dimension {}", count, c.n - 1)
                        : cube ? fmt::format("{} slabs of the {} slowest dimensions", count, dims)
                               : fmt::format("{} ranges of node numbers", count);
  }
  plan.BuildRuns(count);
  return plan;
}

void PartitionPlan::BuildRuns(int count) {
  runs_.assign(static_cast<size_t>(count), {});
  for (int32_t node = 0; node < static_cast<int32_t>(owner_.size()); ++node) {
    std::vector<NodeRun>& r = runs_[static_cast<size_t>(owner_[static_cast<size_t>(node)])];
    if (!r.empty() && r.back().end == node) {
      ++r.back().end;
    } else {
      r.push_back({node, node + 1});
    }
  }
}

int64_t PartitionPlan::NodesOf(int part) const {
  int64_t n = 0;
  for (const NodeRun& r : runs(part)) n += r.end - r.begin;
  return n;
}

PartitionChoice ChoosePartitions(const RunConfig& run, int nodes, int ranks) {
  PartitionChoice choice;
  const int asked = run.threads == 0 ? CoresOfThisProcess() : std::max(1, run.threads);
  const int min_nodes = std::max(1, run.partition_min_nodes);
  // The most partitions the network fills with min_nodes nodes each.
  const int fit = std::max(1, nodes / min_nodes);
  ranks = std::max(1, ranks);
  if (ranks > 1 && fit < ranks) {
    choice.replicated = true;
    choice.ranks = 1;
    choice.threads = std::min(asked, fit);
    choice.note = fmt::format(
        "{} nodes are too few for {} MPI ranks (run.partition_min_nodes = {} per partition): "
        "every rank simulates the whole network{}, rank 0 writes the results",
        nodes, ranks, min_nodes,
        choice.threads > 1 ? fmt::format(" with {} threads", choice.threads) : "");
    return choice;
  }
  choice.ranks = ranks;
  choice.threads = std::min(asked, fit / ranks);
  if (choice.threads < asked) {
    choice.note = fmt::format(
        "{} nodes are too few for {} partitions of at least run.partition_min_nodes = {} "
        "nodes: running {} thread{} per {}",
        nodes, asked * ranks, min_nodes, choice.threads, choice.threads == 1 ? "" : "s",
        ranks > 1 ? "rank" : "process");
  }
  return choice;
}

}  // namespace ukai::sim
