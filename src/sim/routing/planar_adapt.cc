#include "sim/routing/planar_adapt.h"

namespace ukai::sim {

PlanarAdaptRouting::PlanarAdaptRouting(const KaryNCube& topology, int vcs) : topo_(topology) {
  const int m = vcs / 3;
  const uint32_t all = vcs >= 32 ? ~0u : (1u << vcs) - 1;
  class_[0] = (1u << m) - 1;
  class_[1] = ((1u << (2 * m)) - 1) & ~class_[0];
  class_[2] = all & ~(class_[0] | class_[1]);
}

void PlanarAdaptRouting::Route(const RouteRequest& request, RouteResult* result) const {
  const int n = topo_.n();
  int plane = 0;
  while (plane < n && topo_.Coord(request.node, plane) == topo_.Coord(request.dst, plane)) {
    ++plane;
  }
  if (plane == n) return;  // at the destination: the engine ejects
  const bool increase = topo_.Coord(request.node, plane) < topo_.Coord(request.dst, plane);
  result->Add(2 * plane + (increase ? 0 : 1), class_[2]);
  const int next = (plane + 1) % n;
  if (next == plane) return;
  const int here = topo_.Coord(request.node, next), there = topo_.Coord(request.dst, next);
  if (here == there) return;
  result->Add(2 * next + (here < there ? 0 : 1), class_[increase ? 0 : 1]);
}

}  // namespace ukai::sim
