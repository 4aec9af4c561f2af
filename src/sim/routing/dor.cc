#include "sim/routing/dor.h"

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

void DorRouting::Route(const RouteRequest& request, RouteResult* result) const {
  const DorHop hop = NextDorHop(topo_, request.node, request.dst);
  if (hop.port < 0) return;
  const uint32_t all = vcs_ >= 32 ? ~0u : ((1u << vcs_) - 1);
  result->Add(hop.port, topo_.torus() ? ClassMask(0, vcs_, hop.dateline_class) : all);
}

}  // namespace ukai::sim
