#include "sim/routing/dor.h"

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

void DorRouting::Route(const RouteRequest& request, RouteResult* result) const {
  const uint32_t ties = tie_ == DorTieRule::kPlus
                            ? 0u
                            : DorTieMinusBits(topo_, tie_, request.src, request.dst, request.now,
                                              request.message_state);
  const DorHop hop = NextDorHop(topo_, request.node, request.dst, ties);
  if (hop.port < 0) return;
  const uint32_t all = vcs_ >= 32 ? ~0u : ((1u << vcs_) - 1);
  uint32_t mask = all;
  if (topo_.torus()) {
    mask = dateline_ == DorDateline::kShared
               ? SharedDatelineMask(topo_, hop, request.node, request.dst, request.in_port,
                                    request.in_vc, vcs_)
               : ClassMask(0, vcs_, hop.dateline_class);
  }
  result->Add(hop.port, mask);
}

}  // namespace ukai::sim
