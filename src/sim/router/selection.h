// SelectionFunction: picks one output VC among a routing function's candidates that is
// free now. Free means: not owned by another message (its previous owner's tail has left)
// and, with virtual cut-through, at least `needed_credits` free slots downstream (the whole
// message); with wormhole needed_credits is 0, except on the view's atomic VCs (empty).
//
// The default, MaxCreditSelection, takes the lowest tier that has a free VC and within it
// the VC with the most free downstream slots (least congested); ties go to the earlier
// candidate and the lower VC, so it is deterministic. Its logic lives in the inline
// SelectMaxCredit() so that the router can call it without a virtual call.
//
// Thread safety: Select() is const and reads only the view it is given.
#ifndef UKAI_SIM_ROUTER_SELECTION_H_
#define UKAI_SIM_ROUTER_SELECTION_H_

#include <bit>
#include <cstdint>
#include <limits>

#include "sim/routing/routing.h"

namespace ukai::sim {

// The state of one output VC of a router.
struct OutputVcState {
  int32_t owner;    // the input VC (global index) whose message holds it; -1 when free
  int32_t credits;  // free slots of the downstream input VC
  int32_t tail;     // the router's own: next slot it writes in the downstream VC's ring
};

// Read-only view of one router's output VCs: index port * vc_stride + vc. An output VC
// whose number v has bit v set in `atomic_vcs` is free only with `atomic_credits` credits
// (all of them: its downstream buffer is empty; atomic VC allocation, routing.h).
struct OutputVcView {
  const OutputVcState* vcs;
  int vc_stride;
  uint32_t atomic_vcs = 0;
  int32_t atomic_credits = 0;
};

class SelectionFunction {
 public:
  virtual ~SelectionFunction() = default;
  // Returns the chosen local output VC (port * vc_stride + vc), or -1 if none is free.
  virtual int32_t Select(const RouteCandidate* candidates, int count, const OutputVcView& view,
                         int32_t needed_credits) const = 0;
};

// MaxCreditSelection's rule (see the file comment). kAtomic = false ignores
// view.atomic_vcs (the router's fast path when it has none).
template <bool kAtomic = true>
inline int32_t SelectMaxCredit(const RouteCandidate* candidates, int count,
                               const OutputVcView& view, int32_t needed_credits) {
  int32_t best = -1;
  int best_tier = std::numeric_limits<int>::max();
  int32_t best_credits = -1;
  for (int i = 0; i < count; ++i) {
    const RouteCandidate& c = candidates[i];
    if (c.tier > best_tier) continue;
    const int32_t base = c.port * view.vc_stride;
    for (uint32_t m = c.vc_mask; m != 0; m &= m - 1) {
      const int v = std::countr_zero(m);
      const int32_t ovc = base + v;
      const OutputVcState& s = view.vcs[ovc];
      const int32_t need =
          kAtomic && ((view.atomic_vcs >> v) & 1u) != 0 ? view.atomic_credits : needed_credits;
      if (s.owner >= 0 || s.credits < need) continue;
      if (c.tier < best_tier || s.credits > best_credits) {
        best = ovc;
        best_tier = c.tier;
        best_credits = s.credits;
      }
    }
  }
  return best;
}

class MaxCreditSelection final : public SelectionFunction {
 public:
  int32_t Select(const RouteCandidate* candidates, int count, const OutputVcView& view,
                 int32_t needed_credits) const override {
    return SelectMaxCredit(candidates, count, view, needed_credits);
  }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTER_SELECTION_H_
