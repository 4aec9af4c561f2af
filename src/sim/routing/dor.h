// `dor`: deterministic dimension-order routing (lowest dimension first) on a k-ary n-cube.
// On a torus the VCs are split into two dateline classes (dimension_order.h), so it needs
// router.vcs >= 2 there; on a mesh every VC is usable. On a torus:
// - routing.dor_dateline = "shared" (default): a message may use every VC of a channel
//   that the class order allows (SharedDatelineMask); "split": the message uses every VC
//   of the one class (current, destination) gives it (half the VCs); "booksim": BookSim2's
//   dim_order_torus (the class fixed where the message enters the dimension, from its
//   source: BooksimDatelineClass), for matching its numbers.
// - routing.dor_tie: how a tie (k even, destination exactly k/2 away) goes: "random" per
//   message (default), "parity" of the other coordinates, or "plus" (always "+").
#ifndef UKAI_SIM_ROUTING_DOR_H_
#define UKAI_SIM_ROUTING_DOR_H_

#include <cstdint>
#include <vector>

#include "sim/experiment/sim_config.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

struct DorHop;

class DorRouting final : public RoutingFunction {
 public:
  DorRouting(const KaryNCube& topology, int vcs, DorTieRule tie = DorTieRule::kPlus,
             DorDateline dateline = DorDateline::kSplit);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool HasRouteOne() const override { return true; }
  uint64_t RouteOne(int32_t node, int32_t in_port, int32_t in_vc, int32_t src, int32_t dst,
                    int64_t now, uint32_t* message_state) const override;
  // A mesh, or a torus whose ties all go "+" and whose dateline class depends on (node,
  // destination) only (split): the hop depends on nothing else.
  bool PureRoute() const override {
    return !topo_.torus() || (tie_ == DorTieRule::kPlus && dateline_ == DorDateline::kSplit);
  }

 private:
  // The VCs of `hop` for a head that came in on (in_port, in_vc).
  uint32_t HopMask(const DorHop& hop, int node, int dst, int in_port, int in_vc) const;
  // The `booksim` dateline's VCs for a hop on `port` of a message src -> dst.
  uint32_t BooksimMask(uint32_t port, int32_t src, int32_t dst) const;
  void BuildHops();
  // RouteOne() without the hop table's fast case: the ties by DorTieMinusBits(), the hop
  // from the table or computed.
  uint64_t RouteComputed(int32_t node, int32_t in_port, int32_t in_vc, int32_t src, int32_t dst,
                         int64_t now, uint32_t* message_state) const;

  const KaryNCube& topo_;
  int vcs_;
  DorTieRule tie_;
  DorDateline dateline_;
  // On a torus of up to 8 VCs and kMaxHops (node, destination, tie bits) triples: per
  // triple, index (node * nodes + destination) << n | tie bits, the hop Route() computes
  // otherwise, packed: bits 0-7 the output port + 1 (0: node == destination), bits 8-15
  // the VC mask for a head that does not arrive straight along the hop's ring, 16-23 for
  // one that does on a VC below vcs / 2, 24-31 on one at or above it (the dateline masks
  // depend on nothing else). Empty otherwise.
  static constexpr size_t kMaxHops = size_t{1} << 16;
  std::vector<uint32_t> hops_;
  size_t hop_nodes_ = 0;
  int hop_n_ = 0;                   // the dimensions (the table index's tie bits)
  uint32_t tie_mask_ = 0;           // (1 << n) - 1
  uint32_t booksim_masks_[2] = {};  // the `booksim` dateline's classes (BooksimClassMask)
  // The table is built, n <= 3 and the ties "plus" or "random": RouteOne()'s short path.
  bool table_ties_ = false;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DOR_H_
