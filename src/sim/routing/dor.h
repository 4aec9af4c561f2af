// `dor`: deterministic dimension-order routing (lowest dimension first) on a k-ary n-cube.
// On a torus the VCs are split into two dateline classes (dimension_order.h), so it needs
// router.vcs >= 2 there; on a mesh every VC is usable. The message may use every VC of its
// class. On a torus, ties (k even, destination exactly k/2 away) go the "+" way.
#ifndef UKAI_SIM_ROUTING_DOR_H_
#define UKAI_SIM_ROUTING_DOR_H_

#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class DorRouting final : public RoutingFunction {
 public:
  DorRouting(const KaryNCube& topology, int vcs) : topo_(topology), vcs_(vcs) {}
  void Route(const RouteRequest& request, RouteResult* result) const override;

 private:
  const KaryNCube& topo_;
  int vcs_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DOR_H_
