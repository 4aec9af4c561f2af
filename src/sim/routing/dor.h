// `dor`: deterministic dimension-order routing (lowest dimension first) on a k-ary n-cube.
// On a torus the VCs are split into two dateline classes (dimension_order.h), so it needs
// router.vcs >= 2 there; on a mesh every VC is usable. On a torus:
// - routing.dor_dateline = "shared" (default): a message may use every VC of a channel
//   that the class order allows (SharedDatelineMask); "split": the message uses every VC
//   of the one class (current, destination) gives it (half the VCs).
// - routing.dor_tie: how a tie (k even, destination exactly k/2 away) goes: "random" per
//   message (default), "parity" of the other coordinates, or "plus" (always "+").
#ifndef UKAI_SIM_ROUTING_DOR_H_
#define UKAI_SIM_ROUTING_DOR_H_

#include "sim/experiment/sim_config.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class DorRouting final : public RoutingFunction {
 public:
  DorRouting(const KaryNCube& topology, int vcs, DorTieRule tie = DorTieRule::kPlus,
             DorDateline dateline = DorDateline::kSplit)
      : topo_(topology), vcs_(vcs), tie_(tie), dateline_(dateline) {}
  void Route(const RouteRequest& request, RouteResult* result) const override;
  // A mesh, or a torus whose ties all go "+" and whose dateline class depends on (node,
  // destination) only (split): the hop depends on nothing else.
  bool PureRoute() const override {
    return !topo_.torus() || (tie_ == DorTieRule::kPlus && dateline_ == DorDateline::kSplit);
  }

 private:
  const KaryNCube& topo_;
  int vcs_;
  DorTieRule tie_;
  DorDateline dateline_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DOR_H_
