// DorPlanner: the dimension-order next hop and dateline VC class on any topology that has
// a dimension order — a k-ary n-cube (dimension 0 first, routing/dimension_order.h) or the
// group topology (topology/group.h: first the full-connection hop to the destination's
// member number inside the source group, then along the ring to the destination group,
// the shorter way round, ties "+").
//
// VC classes (deadlock freedom): on a torus and on the group topology's ring the dateline
// classes of dimension_order.h (class 0 while the message still has to cross the
// dateline channel of the ring it is on, class 1 after). The group topology's
// full-connection hop is the first hop of a dimension-order path and only ever follows
// an injection (or an earlier detour leg on a lower VC layer, routing/detour.h), so no
// channel dependency enters it within one layer: it may take any VC and is given class 1.
// A mesh has one class.
//
// Thread safety: immutable after construction; the topology must outlive the planner.
#ifndef UKAI_SIM_ROUTING_DOR_PLANNER_H_
#define UKAI_SIM_ROUTING_DOR_PLANNER_H_

#include <memory>
#include <vector>

#include "sim/routing/dimension_order.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class DorPlanner {
 public:
  virtual ~DorPlanner() = default;
  // The planner of `topology`, or nullptr when it has no dimension order.
  static std::unique_ptr<DorPlanner> For(const Topology& topology);

  // The next hop from `node` towards `dst` (port -1 when node == dst).
  virtual DorHop Next(int node, int dst) const = 0;
  // VC classes a deadlock-free layer needs (2 with rings, 1 on a mesh).
  virtual int classes() const = 0;

  // The nodes of the dimension-order path from `src` to `dst`, both included.
  std::vector<int> Path(const Topology& topology, int src, int dst) const;
  // True when the dimension-order path from `node` to `dst` crosses a dead node or a dead
  // channel of `topology` (`node` itself is not checked).
  bool PathBlocked(const Topology& topology, int node, int dst) const;
};

// VC mask of class `cls` of layer `layer` when each layer has `classes` classes of
// `per_class` VCs: layer l, class c = VCs [(l * classes + c) * per_class, +per_class).
inline uint32_t LayerClassMask(int layer, int classes, int per_class, int cls) {
  const int first = (layer * classes + cls) * per_class;
  if (per_class <= 0 || first + per_class > 32) return 0;
  return (per_class >= 32 ? ~0u : ((1u << per_class) - 1)) << first;
}

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DOR_PLANNER_H_
