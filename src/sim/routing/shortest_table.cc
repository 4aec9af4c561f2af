#include "sim/routing/shortest_table.h"

namespace ukai::sim {

void ShortestPathTable::Build(const Topology& t) {
  nodes_ = t.NumNodes();
  const int P = t.NumNetworkPorts();
  const size_t n = static_cast<size_t>(nodes_);
  dist_.assign(n * n, kUnreachable);
  ports_.assign(n * n, 0);
  std::vector<int> queue;
  queue.reserve(n);
  // Channels are bidirectional and fail in both directions, so the BFS from the
  // destination over live channels gives every node's distance to it.
  for (int d = 0; d < nodes_; ++d) {
    if (!t.NodeAlive(d)) continue;
    queue.assign(1, d);
    dist_[static_cast<size_t>(d) * n + d] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      const int w = queue[i];
      for (int p = 0; p < P; ++p) {
        const PortRef far = t.LiveNeighbor(w, p);
        if (!far.valid() || !t.NodeAlive(far.node)) continue;
        int& dv = dist_[static_cast<size_t>(far.node) * n + d];
        if (dv == kUnreachable) {
          dv = dist_[static_cast<size_t>(w) * n + d] + 1;
          queue.push_back(far.node);
        }
      }
    }
    for (int v : queue) {
      uint32_t mask = 0;
      const int dv = dist_[static_cast<size_t>(v) * n + d];
      for (int p = 0; p < P && v != d; ++p) {
        const PortRef far = t.LiveNeighbor(v, p);
        if (far.valid() && t.NodeAlive(far.node) &&
            dist_[static_cast<size_t>(far.node) * n + d] == dv - 1) {
          mask |= 1u << p;
        }
      }
      ports_[static_cast<size_t>(v) * n + d] = mask;
    }
  }
}

}  // namespace ukai::sim
