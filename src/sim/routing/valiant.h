// Two-phase routing on a k-ary n-cube (BookSim2's valiant_mesh / valiant_torus and
// romm_mesh): dimension order to an intermediate node, then dimension order to the
// destination. `valiant`: the intermediate is any node, uniformly; `romm`: a node of the
// minimal box between source and destination (each coordinate uniformly between the
// source's and the destination's, along the minimal direction on a torus), so paths stay
// minimal. The intermediate is a hash of (source, destination, creation cycle): the same on
// every hop. Phase p uses half p of the VCs (phase 0 the lower floor(V/2)); on a torus each
// half is split again into the two dateline classes (routing/dimension_order.h). So router.vcs
// >= 2 on a mesh, >= 4 on a torus. Torus ties go "+". State: bit 4 = phase 1.
//
// Thread safety: Route() is const.
#ifndef UKAI_SIM_ROUTING_VALIANT_H_
#define UKAI_SIM_ROUTING_VALIANT_H_

#include <memory>

#include "sim/routing/cdg_check.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class TwoPhaseRouting final : public RoutingFunction {
 public:
  // `via_destination` (routing.valiant_via_destination): a message whose path to its
  // intermediate node passes its destination goes on to the intermediate first, on every VC
  // at the destination, as BookSim2's valiant_mesh / valiant_torus route it.
  TwoPhaseRouting(const KaryNCube& topology, int vcs, bool romm, bool via_destination = false)
      : topo_(topology), vcs_(vcs), romm_(romm), via_destination_(via_destination) {}
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool RoutesAtDestination() const override { return via_destination_; }

  // The intermediate node of a message.
  int Intermediate(int src, int dst, int64_t created) const;
  // The VCs of the hop from `node` towards `target` in `phase` (0 or 1), with its port.
  void Hop(int node, int target, int phase, int* port, uint32_t* mask) const;
  // The deadlock checker's view: one exploration per intermediate node (any node: a
  // superset of romm's boxes), the phase told by the arriving VC's half.
  std::unique_ptr<EscapeFunction> Escape() const;

  const KaryNCube& topology() const { return topo_; }
  int vcs() const { return vcs_; }
  bool via_destination() const { return via_destination_; }

 private:
  const KaryNCube& topo_;
  int vcs_;
  bool romm_;
  bool via_destination_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_VALIANT_H_
