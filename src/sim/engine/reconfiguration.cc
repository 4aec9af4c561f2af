#include "sim/engine/reconfiguration.h"

#include <algorithm>

namespace ukai::sim {
namespace {

// Hop distances from `from` over live channels between healthy nodes (-1: unreachable).
std::vector<int> Bfs(const Topology& t, int from) {
  std::vector<int> dist(static_cast<size_t>(t.NumNodes()), -1);
  if (from < 0 || !t.NodeAlive(from)) return dist;
  std::vector<int> queue{from};
  dist[from] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && t.NodeAlive(far.node) && dist[far.node] < 0) {
        dist[far.node] = dist[v] + 1;
        queue.push_back(far.node);
      }
    }
  }
  return dist;
}

int LowestHealthy(const Topology& t) {
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (t.NodeAlive(v)) return v;
  }
  return 0;
}

}  // namespace

int ChooseRoot(const Topology& target, const ReconfigConfig& config,
               const std::vector<int>& priority, int current, const std::vector<int>& region) {
  if (config.root == ReconfigConfig::RootPolicy::kFaultRegion) {
    int best = -1;
    for (int v : region) {
      if (target.NodeAlive(v) && (best < 0 || v < best)) best = v;
    }
    if (best >= 0) return best;
  }
  for (int v : priority) {
    if (target.NodeAlive(v)) return v;
  }
  if (current >= 0 && target.NodeAlive(current)) return current;
  return -1;
}

ReconfigPlan PlanReconfiguration(const Topology& target, const ReconfigConfig& c, int64_t now,
                                 const std::vector<int>& region, int root, int region_distance) {
  ReconfigPlan plan;
  const int n = target.NumNodes();
  plan.start = now;
  plan.detect = now + c.detect_cycles;
  plan.root = root >= 0 ? root : LowestHealthy(target);
  int nominator = -1;
  for (int v : region) {
    if (target.NodeAlive(v) && (nominator < 0 || v < nominator)) nominator = v;
  }
  const int64_t agree = plan.detect + c.hop_cycles * 2 * region_distance;
  const std::vector<int> from_nominator = Bfs(target, nominator);
  const int to_root =
      nominator >= 0 && from_nominator[plan.root] >= 0 ? from_nominator[plan.root] : 0;
  plan.root_start = agree + c.hop_cycles * to_root;
  const std::vector<int> level = Bfs(target, plan.root);
  plan.recv.assign(n, -1);
  plan.update.assign(n, -1);
  plan.resume.assign(n, -1);
  plan.done = plan.root_start + c.compute_cycles;
  for (int v = 0; v < n; ++v) {
    if (level[v] < 0) continue;
    plan.recv[v] = plan.root_start + level[v] * (c.compute_cycles + c.hop_cycles);
    plan.update[v] = plan.recv[v] + c.compute_cycles;
    plan.done = std::max(plan.done, plan.update[v] + level[v] * c.hop_cycles);
  }
  plan.end = plan.done;
  for (int v = 0; v < n; ++v) {
    if (level[v] < 0) continue;
    plan.resume[v] = plan.done + level[v] * c.hop_cycles;
    plan.end = std::max(plan.end, plan.resume[v]);
  }
  return plan;
}

}  // namespace ukai::sim
