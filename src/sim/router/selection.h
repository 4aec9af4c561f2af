// SelectionFunction: picks one output VC among a routing function's candidates that is
// free now. Free means: not owned by another message (its previous owner's tail has left)
// and, with virtual cut-through, at least `needed_credits` free slots downstream (the whole
// message); with wormhole needed_credits is 0.
//
// The default, MaxCreditSelection, takes the lowest tier that has a free VC and within it
// the VC with the most free downstream slots (least congested); ties go to the earlier
// candidate and the lower VC, so it is deterministic.
//
// Thread safety: Select() is const and reads only the view it is given.
#ifndef UKAI_SIM_ROUTER_SELECTION_H_
#define UKAI_SIM_ROUTER_SELECTION_H_

#include <cstdint>

#include "sim/routing/routing.h"

namespace ukai::sim {

// Read-only view of one router's output VCs: index port * vc_stride + vc.
struct OutputVcView {
  const int32_t* owner;    // -1 when free
  const int32_t* credits;  // free slots downstream
  int vc_stride;
};

class SelectionFunction {
 public:
  virtual ~SelectionFunction() = default;
  // Returns the chosen local output VC (port * vc_stride + vc), or -1 if none is free.
  virtual int32_t Select(const RouteCandidate* candidates, int count, const OutputVcView& view,
                         int32_t needed_credits) const = 0;
};

class MaxCreditSelection final : public SelectionFunction {
 public:
  int32_t Select(const RouteCandidate* candidates, int count, const OutputVcView& view,
                 int32_t needed_credits) const override;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTER_SELECTION_H_
