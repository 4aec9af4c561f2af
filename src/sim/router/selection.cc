#include "sim/router/selection.h"

#include <bit>
#include <limits>

namespace ukai::sim {

int32_t MaxCreditSelection::Select(const RouteCandidate* candidates, int count,
                                   const OutputVcView& view, int32_t needed_credits) const {
  int32_t best = -1;
  int best_tier = std::numeric_limits<int>::max();
  int32_t best_credits = -1;
  for (int i = 0; i < count; ++i) {
    const RouteCandidate& c = candidates[i];
    if (c.tier > best_tier) continue;
    const int32_t base = c.port * view.vc_stride;
    for (uint32_t m = c.vc_mask; m != 0; m &= m - 1) {
      const int32_t ovc = base + std::countr_zero(m);
      if (view.owner[ovc] >= 0) continue;
      const int32_t cr = view.credits[ovc];
      if (cr < needed_credits) continue;
      if (c.tier < best_tier || cr > best_credits) {
        best = ovc;
        best_tier = c.tier;
        best_credits = cr;
      }
    }
  }
  return best;
}

}  // namespace ukai::sim
