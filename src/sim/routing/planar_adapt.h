// Planar-adaptive routing on a mesh (Chien and Kim; BookSim2's planar_adapt_mesh), without
// faults. The VCs are split into three classes of m = floor(V/3): class 0 = VCs [0, m),
// class 1 = [m, 2m), class 2 = [2m, V). A message routes in adaptive plane i, i the lowest
// dimension where it is not yet at its destination's coordinate: it may move productively
// along dimension i on class 2, or productively along dimension i+1 (mod n; not when that
// wraps round to an already finished dimension 0) on class 0 when it moves "+" along
// dimension i, class 1 when it moves "-". Both are offered at the same tier (the router
// picks). Deadlock-free (the checker builds the dependency graph from Route() on every VC).
//
// Thread safety: Route() is const.
#ifndef UKAI_SIM_ROUTING_PLANAR_ADAPT_H_
#define UKAI_SIM_ROUTING_PLANAR_ADAPT_H_

#include <cstdint>

#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class PlanarAdaptRouting final : public RoutingFunction {
 public:
  // vcs >= 3 (the registry checks it).
  PlanarAdaptRouting(const KaryNCube& topology, int vcs);
  void Route(const RouteRequest& request, RouteResult* result) const override;

 private:
  const KaryNCube& topo_;
  uint32_t class_[3];  // VC masks of the three classes
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_PLANAR_ADAPT_H_
