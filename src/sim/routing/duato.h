// `duato`: Duato's protocol on a k-ary n-cube. Fully adaptive minimal routing on the
// adaptive VCs (tier 0: every productive direction of every unfinished dimension; on a
// torus both directions when the destination is exactly k/2 away) plus an escape
// sub-network running `dor` (tier 1): on a torus 2 escape VCs (VC 0 = dateline class 0,
// VC 1 = class 1), on a mesh 1 (VC 0). The adaptive VCs are the remaining ones, so
// router.vcs must be >= 3 on a torus and >= 2 on a mesh. A message may return from an
// escape VC to the adaptive VCs at the next router (Duato's condition holds because the
// escape routing is connected and deadlock-free and the adaptive routing is minimal).
// routing.duato_atomic: which VCs are allocated atomically with wormhole (routing.h:
// AtomicVcMask; a VC takes a new message only once its buffer is empty): "adaptive"
// (default), "all" (the model before this option), "escape" or "none" (docs/simulator.md,
// "Duato: atomic VC allocation", says why only "adaptive" and "all" are deadlock-free).
#ifndef UKAI_SIM_ROUTING_DUATO_H_
#define UKAI_SIM_ROUTING_DUATO_H_

#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class DuatoRouting final : public RoutingFunction {
 public:
  // `sticky_escape`: a message that took an escape VC keeps to the escape VCs (BookSim2's
  // min_adapt_mesh / min_adapt_torus: `min_adapt`); otherwise it may go back to the
  // adaptive VCs at the next router (Duato's protocol as `duato` runs it).
  // `booksim_set` (min_adapt with routing.min_adapt_candidates = booksim): the adaptive
  // VCs only toward the lowest unfinished dimension and, on a torus, VC 3 alone, as
  // BookSim2's min_adapt_mesh / min_adapt_torus offer them (sim_config.h).
  DuatoRouting(const KaryNCube& topology, int vcs, DuatoAtomic atomic = DuatoAtomic::kAll,
               bool sticky_escape = false, bool booksim_set = false);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool AtomicVcAllocation() const override { return atomic_vcs_ != 0; }
  uint32_t AtomicVcMask() const override { return atomic_vcs_; }

  int escape_vcs() const { return escape_vcs_; }

 private:
  const KaryNCube& topo_;
  int escape_vcs_;
  uint32_t adaptive_mask_;
  uint32_t atomic_vcs_;
  bool sticky_escape_;
  bool first_dim_only_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DUATO_H_
