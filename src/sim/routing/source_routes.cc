#include "sim/routing/source_routes.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace ukai::sim {
namespace {

constexpr int kFar = std::numeric_limits<int>::max();

// BFS levels over the forwarding nodes from `root`; an end node sits one below its
// nearest forwarding neighbour.
std::vector<int> Levels(const Topology& t, int root) {
  const int n = t.NumNodes();
  std::vector<int> level(n, kFar);
  std::vector<int> queue{root};
  level[root] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.Neighbor(v, p);
      if (!far.valid() || level[far.node] != kFar) continue;
      level[far.node] = level[v] + 1;
      if (t.Forwards(far.node)) queue.push_back(far.node);
    }
  }
  return level;
}

// The forwarding node of least eccentricity (over forwarding nodes), ties to the lower one.
int DefaultRoot(const Topology& t) {
  int best = -1, best_ecc = kFar;
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!t.Forwards(v)) continue;
    const std::vector<int> level = Levels(t, v);
    int ecc = 0;
    for (int w = 0; w < t.NumNodes(); ++w) {
      if (t.Forwards(w)) ecc = std::max(ecc, level[w]);
    }
    if (ecc < best_ecc) best = v, best_ecc = ecc;
  }
  return best < 0 ? 0 : best;
}

}  // namespace

bool ForwardingCycle(const Topology& t) {
  std::vector<int> parent(t.NumNodes());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!t.Forwards(v)) continue;
    std::vector<int> seen;  // parallel channels to one neighbour count once
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.Neighbor(v, p);
      if (!far.valid() || far.node <= v || !t.Forwards(far.node)) continue;
      if (std::find(seen.begin(), seen.end(), far.node) != seen.end()) continue;
      seen.push_back(far.node);
      const int a = find(v), b = find(far.node);
      if (a == b) return true;
      parent[a] = b;
    }
  }
  return false;
}

Result<std::unique_ptr<SourceRouteTable>> SourceRouteTable::Build(const Topology& t,
                                                                  SourceRouteMode mode, int root,
                                                                  int max_paths) {
  if (t.NumTerminals() > kMaxTerminals) {
    return Status::InvalidArgument(fmt::format("routing.algorithm: 'source' keeps a route table of "
                                               "every pair of end nodes, for at "
                                               "most {} end nodes (the network has {})",
                                               kMaxTerminals, t.NumTerminals()))
        .WithKey("routing.algorithm");
  }
  if (max_paths < 1 || max_paths > 15) {
    return Status::InvalidArgument(
               fmt::format("routing.source_paths: must be in [1, 15] (got {})", max_paths))
        .WithKey("routing.source_paths");
  }
  std::unique_ptr<SourceRouteTable> table(new SourceRouteTable());
  table->terminals_ = t.NumTerminals();
  table->max_paths_ = max_paths;
  if (root >= 0) {
    if (root >= t.NumNodes() || !t.Forwards(root)) {
      return Status::InvalidArgument(fmt::format("routing.root: node {} is not a switch of the {} "
                                                 "(the up*/down* root must forward)",
                                                 root, t.Describe()))
          .WithKey("routing.root");
    }
    table->root_ = root;
  } else {
    table->root_ = DefaultRoot(t);
  }
  table->mode_ = mode != SourceRouteMode::kAuto ? mode
                 : ForwardingCycle(t)           ? SourceRouteMode::kUpDown
                                                : SourceRouteMode::kShortest;
  table->level_ = Levels(t, table->root_);
  UKAI_RETURN_IF_ERROR(table->Compute(t));
  return table;
}

int64_t SourceRouteTable::BranchOrder(int node, int far) const {
  const int64_t n = static_cast<int64_t>(level_.size());
  const int64_t rank = static_cast<int64_t>(level_[far]) * n + far;
  return IsUp(node, far) ? rank - n * n * 2 : rank;
}

int64_t SourceRouteTable::routes() const {
  int64_t total = 0;
  for (uint8_t c : count_) total += c;
  return total;
}

int SourceRouteTable::NextPhase(int ph, int v, int w) const {
  if (mode_ != SourceRouteMode::kUpDown) return 0;
  if (IsUp(v, w)) return ph == 0 ? 0 : -1;
  return 1;
}

bool SourceRouteTable::Extract(const Topology& t, int start, int d, int64_t k,
                               std::vector<RouteHop>* out) const {
  out->clear();
  if (Dist(d, 0, start) == kFar) return false;
  int v = start, ph = 0;
  while (v != d) {
    int options[kMaxChoices];
    const int count = NextHops(t, v, ph, d, options);
    if (count == 0) return false;
    const int p = options[k % count];
    k /= count;
    out->push_back({v, p});
    const int w = t.Neighbor(v, p).node;
    ph = NextPhase(ph, v, w);
    v = w;
  }
  return true;
}

int SourceRouteTable::NextHops(const Topology& t, int v, int ph, int d, int* ports) const {
  int count = 0;
  const int here = Dist(d, ph, v);
  for (int p = 0, n = t.NumNetworkPorts(); p < n && count < kMaxChoices; ++p) {
    const PortRef far = t.Neighbor(v, p);
    if (!far.valid() || (!t.Forwards(far.node) && far.node != d)) continue;
    const int nph = NextPhase(ph, v, far.node);
    if (nph >= 0 && Dist(d, nph, far.node) == here - 1) ports[count++] = p;
  }
  return count;
}

// Depth first over the choices, stopping once `need` routes are counted: at most `need`
// routes are walked (every choice leads to d, the distance falling by one per hop).
int SourceRouteTable::CountRoutes(const Topology& t, int v, int ph, int d, int need) const {
  if (v == d) return 1;
  int ports[kMaxChoices];
  const int count = NextHops(t, v, ph, d, ports);
  int total = 0;
  for (int i = 0; i < count && total < need; ++i) {
    const int w = t.Neighbor(v, ports[i]).node;
    total += CountRoutes(t, w, NextPhase(ph, v, w), d, need - total);
  }
  return total;
}

std::vector<RouteHop> SourceRouteTable::PathFrom(const Topology& t, int start, int dst) const {
  std::vector<RouteHop> out;
  if (start != dst && dst >= 0 && dst < terminals_) Extract(t, start, dst, 0, &out);
  return out;
}

Status SourceRouteTable::Compute(const Topology& t) {
  const int n = t.NumNodes();
  const int ports = t.NumNetworkPorts();
  phases_ = mode_ == SourceRouteMode::kUpDown ? 2 : 1;
  count_.assign(static_cast<size_t>(terminals_) * terminals_, 0);
  begin_.assign(static_cast<size_t>(terminals_) * terminals_ * max_paths_, 0);
  length_.assign(begin_.size(), 0);
  dist_.assign(static_cast<size_t>(terminals_) * phases_ * n, kFar);
  std::vector<std::pair<int, int>> queue;
  std::vector<RouteHop> path;
  std::vector<std::vector<RouteHop>> found;
  for (int d = 0; d < terminals_; ++d) {
    int32_t* dist = &dist_[static_cast<size_t>(d) * phases_ * n];
    queue.clear();
    for (int ph = 0; ph < phases_; ++ph) {
      dist[ph * n + d] = 0;
      queue.push_back({d, ph});
    }
    // Backwards from d: v -> w is a hop when the phase after it is w's.
    for (size_t i = 0; i < queue.size(); ++i) {
      const auto [w, phw] = queue[i];
      for (int pw = 0; pw < ports; ++pw) {
        const PortRef back = t.Neighbor(w, pw);
        if (!back.valid()) continue;
        const int v = back.node;
        for (int ph = 0; ph < phases_; ++ph) {
          if (NextPhase(ph, v, w) != phw || dist[ph * n + v] != kFar) continue;
          dist[ph * n + v] = dist[phw * n + w] + 1;
          if (t.Forwards(v) && v != d) queue.push_back({v, ph});
        }
      }
    }
    for (int s = 0; s < terminals_; ++s) {
      if (s == d) continue;
      if (dist[s] == kFar) {
        return Status::InvalidArgument(
                   fmt::format(
                       "routing.algorithm: 'source' finds no {}route from {} to {} on the {}",
                       phases_ == 2 ? "up*/down* " : "", t.NodeName(s), t.NodeName(d),
                       t.Describe()))
            .WithKey("routing.algorithm");
      }
      found.clear();
      // Routes k = 0, 1, ... until max_paths_ distinct ones (or all there are) are found.
      const int want = CountRoutes(t, s, 0, d, max_paths_);
      for (int k = 0; static_cast<int>(found.size()) < want && k < 4 * max_paths_; ++k) {
        if (!Extract(t, s, d, k, &path)) {
          return Status::Internal(fmt::format("source routes: no next hop from {} towards {}",
                                              t.NodeName(s), t.NodeName(d)));
        }
        const bool dup = std::any_of(found.begin(), found.end(), [&](const auto& f) {
          return std::equal(f.begin(), f.end(), path.begin(), path.end(),
                            [](const RouteHop& a, const RouteHop& b) {
                              return a.node == b.node && a.port == b.port;
                            });
        });
        if (!dup) found.push_back(path);
      }
      count_[Pair(s, d)] = static_cast<uint8_t>(found.size());
      for (int k = 0; k < static_cast<int>(found.size()); ++k) {
        if (found[k].size() > 255) {
          return Status::InvalidArgument(fmt::format("routing.algorithm: 'source' route from {} to "
                                                     "{} has {} hops (at most 255)",
                                                     t.NodeName(s), t.NodeName(d), found[k].size()))
              .WithKey("routing.algorithm");
        }
        const size_t slot = Slot(s, d, k);
        begin_[slot] = static_cast<uint32_t>(hops_.size());
        length_[slot] = static_cast<uint8_t>(found[k].size());
        hops_.insert(hops_.end(), found[k].begin(), found[k].end());
      }
      if (static_cast<int64_t>(hops_.size()) > kMaxHops) {
        return Status::InvalidArgument(
                   fmt::format(
                       "routing.source_paths: the route tables would hold more than {} hops; lower "
                       "routing.source_paths or the network size",
                       kMaxHops))
            .WithKey("routing.source_paths");
      }
    }
  }
  return Status::Ok();
}

}  // namespace ukai::sim
