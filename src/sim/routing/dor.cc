#include "sim/routing/dor.h"

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

DorRouting::DorRouting(const KaryNCube& topology, int vcs, DorTieRule tie, DorDateline dateline)
    : topo_(topology), vcs_(vcs), tie_(tie), dateline_(dateline) {
  booksim_masks_[0] = BooksimClassMask(vcs_, 0);
  booksim_masks_[1] = BooksimClassMask(vcs_, 1);
  if (topo_.torus() && vcs_ >= 1 && vcs_ <= 8) BuildHops();
}

uint32_t DorRouting::HopMask(const DorHop& hop, int node, int dst, int in_port, int in_vc) const {
  if (dateline_ == DorDateline::kBooksim) return 0;  // from the source: BooksimMask()
  return dateline_ == DorDateline::kShared
             ? SharedDatelineMask(topo_, hop, node, dst, in_port, in_vc, vcs_)
             : ClassMask(0, vcs_, hop.dateline_class);
}

uint32_t DorRouting::BooksimMask(uint32_t port, int32_t src, int32_t dst) const {
  const int dim = static_cast<int>(port >> 1);
  return booksim_masks_[BooksimDatelineClass((port & 1u) == 0, topo_.Coord(src, dim),
                                             topo_.Coord(dst, dim))];
}

void DorRouting::BuildHops() {
  const auto nodes = static_cast<size_t>(topo_.NumNodes());
  const int n = topo_.n();
  if (n >= 16 || nodes > kMaxHops || (nodes * nodes << n) > kMaxHops) return;
  hops_.assign(nodes * nodes << n, 0);
  hop_nodes_ = nodes;
  hop_n_ = n;
  tie_mask_ = (1u << n) - 1;
  table_ties_ = n <= 3 && (tie_ == DorTieRule::kPlus || tie_ == DorTieRule::kRandom);
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
  const uint64_t c = RouteOne(request.node, request.in_port, request.in_vc, request.src,
                              request.dst, request.now, request.message_state);
  if (c != 0) result->Add(static_cast<int>(c & 0xffffu) - 1, static_cast<uint32_t>(c >> 32));
}

uint64_t DorRouting::RouteOne(int32_t node, int32_t in_port, int32_t in_vc, int32_t src,
                              int32_t dst, int64_t now, uint32_t* message_state) const {
  if (!table_ties_ || dst < 0)
    return RouteComputed(node, in_port, in_vc, src, dst, now, message_state);
  // The hop table with DorTieMinusBits()'s "plus" or "random" rule on up to 3 dimensions:
  // the random tie bits are the drawn bits themselves.
  uint32_t ties = 0;
  if (tie_ == DorTieRule::kRandom) {
    constexpr uint32_t kDrawn = 1u << 7;
    if ((*message_state & kDrawn) == 0) {
      const uint64_t pair =
          static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
      *message_state |=
          kDrawn | static_cast<uint32_t>(
                       Mix64(pair ^ (static_cast<uint64_t>(now) * 0x9e3779b97f4a7c15ULL)) & 7u)
                       << 4;
    }
    ties = (*message_state >> 4) & tie_mask_;
  }
  const uint32_t e =
      hops_[(static_cast<size_t>(node) * hop_nodes_ + static_cast<size_t>(dst)) << hop_n_ | ties];
  if (e == 0) return 0;
  const uint32_t port = (e & 0xffu) - 1;
  uint32_t mask;
  if (dateline_ == DorDateline::kBooksim) {
    mask = BooksimMask(port, src, dst);
  } else {
    const int shift = in_port != static_cast<int32_t>(port ^ 1) ? 8 : in_vc >= vcs_ / 2 ? 24 : 16;
    mask = (e >> shift) & 0xffu;
  }
  return mask == 0 ? uint64_t{0} : uint64_t{mask} << 32 | (port + 1);
}

uint64_t DorRouting::RouteComputed(int32_t node, int32_t in_port, int32_t in_vc, int32_t src,
                                   int32_t dst, int64_t now, uint32_t* message_state) const {
  const uint32_t ties =
      tie_ == DorTieRule::kPlus ? 0u : DorTieMinusBits(topo_, tie_, src, dst, now, message_state);
  auto pack = [](int port, uint32_t mask) {
    return mask == 0 ? uint64_t{0} : uint64_t{mask} << 32 | static_cast<uint32_t>(port + 1);
  };
  if (!hops_.empty() && dst >= 0) {
    const uint32_t e =
        hops_[(static_cast<size_t>(node) * hop_nodes_ + static_cast<size_t>(dst)) << topo_.n() |
              ties];
    if (e == 0) return 0;
    const int port = static_cast<int>(e & 0xffu) - 1;
    if (dateline_ == DorDateline::kBooksim) {
      return pack(port, BooksimMask(static_cast<uint32_t>(port), src, dst));
    }
    const int shift = in_port != (port ^ 1) ? 8 : in_vc >= vcs_ / 2 ? 24 : 16;
    return pack(port, (e >> shift) & 0xffu);
  }
  const DorHop hop = NextDorHop(topo_, node, dst, ties);
  if (hop.port < 0) return 0;
  const uint32_t all = vcs_ >= 32 ? ~0u : ((1u << vcs_) - 1);
  uint32_t mask = all;
  if (topo_.torus()) {
    mask = dateline_ == DorDateline::kBooksim
               ? BooksimMask(static_cast<uint32_t>(hop.port), src, dst)
           : dateline_ == DorDateline::kShared
               ? SharedDatelineMask(topo_, hop, node, dst, in_port, in_vc, vcs_)
               : ClassMask(0, vcs_, hop.dateline_class);
  }
  return pack(hop.port, mask);
}

}  // namespace ukai::sim
