#include "sim/routing/dor.h"

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

DorRouting::DorRouting(const KaryNCube& topology, int vcs, DorTieRule tie, DorDateline dateline)
    : topo_(topology), vcs_(vcs), tie_(tie), dateline_(dateline) {
  if (topo_.torus() && vcs_ >= 1 && vcs_ <= 8) BuildHops();
}

uint32_t DorRouting::HopMask(const DorHop& hop, int node, int dst, int in_port, int in_vc) const {
  return dateline_ == DorDateline::kShared
             ? SharedDatelineMask(topo_, hop, node, dst, in_port, in_vc, vcs_)
             : ClassMask(0, vcs_, hop.dateline_class);
}

void DorRouting::BuildHops() {
  const auto nodes = static_cast<size_t>(topo_.NumNodes());
  const int n = topo_.n();
  if (n >= 16 || nodes > kMaxHops || (nodes * nodes << n) > kMaxHops) return;
  hops_.assign(nodes * nodes << n, 0);
  hop_nodes_ = nodes;
  for (size_t node = 0; node < nodes; ++node) {
    for (size_t dst = 0; dst < nodes; ++dst) {
      for (uint32_t ties = 0; ties < (1u << n); ++ties) {
        const int a = static_cast<int>(node), b = static_cast<int>(dst);
        const DorHop hop = NextDorHop(topo_, a, b, ties);
        if (hop.port < 0) continue;
        // A head arriving straight along the ring came in on port hop.port ^ 1.
        hops_[(node * nodes + dst) << n | ties] = static_cast<uint32_t>(hop.port + 1) |
                                                  HopMask(hop, a, b, hop.port, 0) << 8 |
                                                  HopMask(hop, a, b, hop.port ^ 1, 0) << 16 |
                                                  HopMask(hop, a, b, hop.port ^ 1, vcs_ - 1) << 24;
      }
    }
  }
}

void DorRouting::Route(const RouteRequest& request, RouteResult* result) const {
  const uint32_t ties = tie_ == DorTieRule::kPlus
                            ? 0u
                            : DorTieMinusBits(topo_, tie_, request.src, request.dst, request.now,
                                              request.message_state);
  if (!hops_.empty() && request.dst >= 0) {
    const uint32_t e =
        hops_[(static_cast<size_t>(request.node) * hop_nodes_ + static_cast<size_t>(request.dst))
                  << topo_.n() |
              ties];
    if (e == 0) return;
    const int port = static_cast<int>(e & 0xffu) - 1;
    const int shift = request.in_port != (port ^ 1) ? 8 : request.in_vc >= vcs_ / 2 ? 24 : 16;
    result->Add(port, (e >> shift) & 0xffu);
    return;
  }
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
