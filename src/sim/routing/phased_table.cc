#include "sim/routing/phased_table.h"

namespace ukai::sim {

void PhasedPathTable::Build(const Topology& t, const std::function<int(int, int)>& phase) {
  nodes_ = t.NumNodes();
  ports_per_node_ = t.NumNetworkPorts();
  const int P = ports_per_node_;
  neighbor_.assign(static_cast<size_t>(nodes_) * P, -1);
  phase_.assign(static_cast<size_t>(nodes_) * P, -1);
  for (int v = 0; v < nodes_; ++v) {
    if (!t.NodeAlive(v)) continue;
    for (int p = 0; p < P; ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (!far.valid() || !t.NodeAlive(far.node)) continue;
      const int ph = phase(v, p);
      if (ph < 0) continue;
      neighbor_[static_cast<size_t>(v) * P + p] = far.node;
      phase_[static_cast<size_t>(v) * P + p] = static_cast<int8_t>(ph);
    }
  }
  const size_t entries = static_cast<size_t>(nodes_) * nodes_ * 2;
  dist_.assign(entries, kUnreachable);
  ports_.assign(entries, 0);
  std::vector<int> queue;
  queue.reserve(static_cast<size_t>(nodes_) * 2);
  for (int d = 0; d < nodes_; ++d) {
    if (t.NodeAlive(d)) BuildDestination(d, &queue);
  }
}

// Backward BFS over states (node, phase) from (dst, *): a phase-0 channel v -> w leads
// (v, 0) to (w, 0); a phase-1 channel leads (v, 0) and (v, 1) to (w, 1).
void PhasedPathTable::BuildDestination(int dst, std::vector<int>* queue) {
  const int P = ports_per_node_;
  queue->clear();
  dist_[Index(dst, dst, false)] = dist_[Index(dst, dst, true)] = 0;
  queue->push_back(dst * 2);
  queue->push_back(dst * 2 + 1);
  for (size_t i = 0; i < queue->size(); ++i) {
    const int w = (*queue)[i] / 2, wphase = (*queue)[i] % 2;
    const int dw = dist_[Index(w, dst, wphase != 0)];
    // Channels are bidirectional: the neighbours of w are the candidate predecessors v.
    for (int p = 0; p < P; ++p) {
      const int v = neighbor_[static_cast<size_t>(w) * P + p];
      if (v < 0) continue;
      // The channel v -> w: its port at v is the one whose neighbour is w with that phase.
      for (int q = 0; q < P; ++q) {
        const size_t vq = static_cast<size_t>(v) * P + q;
        if (neighbor_[vq] != w || phase_[vq] != wphase) continue;
        for (int vphase = 0; vphase <= wphase; ++vphase) {
          int& dv = dist_[Index(v, dst, vphase != 0)];
          if (dv == kUnreachable) {
            dv = dw + 1;
            queue->push_back(v * 2 + vphase);
          }
        }
      }
    }
  }
  for (int v = 0; v < nodes_; ++v) {
    for (int vphase = 0; vphase < 2 && v != dst; ++vphase) {
      const int dv = dist_[Index(v, dst, vphase != 0)];
      if (dv == kUnreachable) continue;
      uint32_t mask = 0;
      for (int p = 0; p < P; ++p) {
        const size_t vp = static_cast<size_t>(v) * P + p;
        const int w = neighbor_[vp];
        if (w < 0 || phase_[vp] < vphase) continue;
        if (dist_[Index(w, dst, phase_[vp] != 0)] == dv - 1) mask |= 1u << p;
      }
      ports_[Index(v, dst, vphase != 0)] = mask;
    }
  }
}

}  // namespace ukai::sim
