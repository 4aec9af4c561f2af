// `duato`: Duato's protocol on a k-ary n-cube. Fully adaptive minimal routing on the
// adaptive VCs (tier 0: every productive direction of every unfinished dimension; on a
// torus both directions when the destination is exactly k/2 away) plus an escape
// sub-network running `dor` (tier 1): on a torus 2 escape VCs (VC 0 = dateline class 0,
// VC 1 = class 1), on a mesh 1 (VC 0). The adaptive VCs are the remaining ones, so
// router.vcs must be >= 3 on a torus and >= 2 on a mesh. A message may return from an
// escape VC to the adaptive VCs at the next router (Duato's condition holds because the
// escape routing is connected and deadlock-free and the adaptive routing is minimal).
// VCs are allocated atomically (routing.h: AtomicVcAllocation), as Duato's theorem assumes.
#ifndef UKAI_SIM_ROUTING_DUATO_H_
#define UKAI_SIM_ROUTING_DUATO_H_

#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class DuatoRouting final : public RoutingFunction {
 public:
  DuatoRouting(const KaryNCube& topology, int vcs);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool AtomicVcAllocation() const override { return true; }

  int escape_vcs() const { return escape_vcs_; }

 private:
  const KaryNCube& topo_;
  int escape_vcs_;
  uint32_t adaptive_mask_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DUATO_H_
