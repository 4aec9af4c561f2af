#include "sim/nic/detour_search.h"

#include <algorithm>

namespace ukai::sim {
namespace {

// Hops of the leg a -> b, or -1 when a node after `a` is avoided (b included unless it
// is `end`, the destination, which may not be avoided by construction).
int LegHops(const DorPlanner& planner, const Topology& t, int a, int b,
            const std::vector<uint8_t>& avoid) {
  int hops = 0;
  for (int node = a; node != b; ++hops) {
    node = t.Neighbor(node, planner.Next(node, b).port).node;
    if (avoid[node] != 0) return -1;
  }
  return hops;
}

}  // namespace

std::vector<int> AffectedDestinations(const DorPlanner& planner, const Topology& topology, int io,
                                      const std::vector<uint8_t>& faulty) {
  const int n = topology.NumNodes();
  // parent[d]: the node before d on the path io -> d; then resolve in path-length order.
  std::vector<int> parent(n, -1), depth(n, 0), order;
  for (int d = 0; d < n; ++d) {
    if (d == io) continue;
    const std::vector<int> path = planner.Path(topology, io, d);
    parent[d] = path[path.size() - 2];
    depth[d] = static_cast<int>(path.size()) - 1;
    order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] < depth[b]; });
  std::vector<uint8_t> behind(n, 0);  // a faulty node lies strictly before d on its path
  std::vector<int> out;
  for (int d : order) {
    const int p = parent[d];
    behind[d] = p != io && (behind[p] != 0 || faulty[p] != 0);
    if (behind[d] != 0 && faulty[d] == 0) out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::vector<int>> FindDetour(const DorPlanner& planner, const Topology& topology,
                                           int io, int dst, const std::vector<uint8_t>& avoid,
                                           int max_via) {
  const int n = topology.NumNodes();
  std::vector<uint8_t> blocked = avoid;
  blocked[io] = 0;
  blocked[dst] = 0;
  std::optional<std::vector<int>> best;
  int best_hops = 0;
  for (int v = 0; v < n && max_via >= 1; ++v) {
    if (blocked[v] != 0 || v == io || v == dst) continue;
    const int a = LegHops(planner, topology, io, v, blocked);
    const int b = a < 0 ? -1 : LegHops(planner, topology, v, dst, blocked);
    if (b >= 0 && (!best || a + b < best_hops)) {
      best = std::vector<int>{v};
      best_hops = a + b;
    }
  }
  if (best || max_via < 2) return best;
  for (int v = 0; v < n; ++v) {
    if (blocked[v] != 0 || v == io || v == dst) continue;
    const int a = LegHops(planner, topology, io, v, blocked);
    if (a < 0) continue;
    for (int w = 0; w < n; ++w) {
      if (blocked[w] != 0 || w == v || w == io || w == dst) continue;
      const int b = LegHops(planner, topology, v, w, blocked);
      const int c = b < 0 ? -1 : LegHops(planner, topology, w, dst, blocked);
      if (c >= 0 && (!best || a + b + c < best_hops)) {
        best = std::vector<int>{v, w};
        best_hops = a + b + c;
      }
    }
  }
  return best;
}

std::optional<std::vector<int>> DisjointDetour(const DorPlanner& planner, const Topology& topology,
                                               int io, int dst, int max_via) {
  std::vector<uint8_t> interior(topology.NumNodes(), 0);
  const std::vector<int> path = planner.Path(topology, io, dst);
  for (size_t i = 1; i + 1 < path.size(); ++i) interior[path[i]] = 1;
  if (path.size() <= 2) return std::nullopt;  // a neighbour: nothing in between to avoid
  return FindDetour(planner, topology, io, dst, interior, max_via);
}

}  // namespace ukai::sim
