#include "sim/routing/duato.h"

#include <cstdlib>

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

DuatoRouting::DuatoRouting(const KaryNCube& topology, int vcs, DuatoAtomic atomic,
                           bool sticky_escape, bool booksim_set)
    : topo_(topology),
      escape_vcs_(topology.torus() ? 2 : 1),
      sticky_escape_(sticky_escape),
      first_dim_only_(booksim_set) {
  const uint32_t all = vcs >= 32 ? ~0u : ((1u << vcs) - 1);
  adaptive_mask_ = all & ~((1u << escape_vcs_) - 1);
  // BookSim2's min_adapt_torus: the adaptive range is VC 3 alone (vcBegin + 3).
  if (booksim_set && topology.torus()) adaptive_mask_ = all & (1u << 3);
  switch (atomic) {
    case DuatoAtomic::kAll:
      atomic_vcs_ = all;
      break;
    case DuatoAtomic::kAdaptive:
      atomic_vcs_ = adaptive_mask_;
      break;
    case DuatoAtomic::kEscape:
      atomic_vcs_ = all & ~adaptive_mask_;
      break;
    case DuatoAtomic::kNone:
      atomic_vcs_ = 0;
      break;
  }
}

void DuatoRouting::Route(const RouteRequest& request, RouteResult* result) const {
  const int node = request.node;
  const int dst = request.dst;
  const bool on_escape =
      sticky_escape_ && request.in_port != topo_.PePort() && request.in_vc < escape_vcs_;
  for (int d = 0; d < topo_.n() && !on_escape; ++d) {
    const int c = topo_.Coord(node, d);
    const int t = topo_.Coord(dst, d);
    if (c == t) continue;
    const int off = topo_.Offset(d, c, t);
    const bool half_way = topo_.torus() && 2 * std::abs(off) == topo_.k(d);
    if (first_dim_only_) {
      // BookSim2 keeps the first range of a priority only; half way round it goes "-".
      result->Add(2 * d + (off > 0 && !half_way ? 0 : 1), adaptive_mask_, 0);
      break;
    }
    result->Add(2 * d + (off > 0 ? 0 : 1), adaptive_mask_, 0);
    if (half_way) {
      result->Add(2 * d + 1, adaptive_mask_, 0);  // both ways are minimal
    }
  }
  const DorHop hop = NextDorHop(topo_, node, dst);
  if (hop.port < 0) return;
  const uint32_t escape = topo_.torus() ? (hop.dateline_class == 0 ? 1u : 2u) : 1u;
  result->Add(hop.port, escape, 1);
}

}  // namespace ukai::sim
