// Fabric::Purge and Fabric::InFlight: removing whole messages from the routers (the
// reconfiguration's discards, sim/engine/reconfiguration.h). Between cycles only; not on
// the hot path.
#include <algorithm>

#include "sim/router/fabric.h"

namespace ukai::sim {

// The message an input VC is serving: its front flit's, or, when it is empty but still
// owns an output VC (the rest of the worm has not arrived yet), the message of the last
// flit that left it (its ring slot is not overwritten until a new flit arrives).
int32_t Fabric::ServedMessage(int32_t ivc) const {
  const InVc& q = in_[ivc];
  const size_t base = static_cast<size_t>(ivc) << dshift_;
  if (q.count > 0) return buf_[base + q.head].msg();
  if ((masks_[ivc >> mshift_].active & Bit(ivc)) != 0) {
    return buf_[base + ((q.head - 1u) & slot_mask_)].msg();
  }
  return -1;
}

void Fabric::InFlight(std::vector<int32_t>* out) const {
  for (size_t ivc = 0; ivc < in_.size(); ++ivc) {
    const InVc& q = in_[ivc];
    const size_t base = ivc << dshift_;
    for (int k = 0; k < q.count; ++k) {
      out->push_back(buf_[base + ((q.head + static_cast<uint32_t>(k)) & slot_mask_)].msg());
    }
    const int32_t served = ServedMessage(static_cast<int32_t>(ivc));
    if (served >= 0) out->push_back(served);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

int64_t Fabric::Purge(const std::function<bool(int32_t msg)>& discard) {
  int64_t removed_total = 0;
  for (size_t i = 0; i < in_.size(); ++i) {
    const int32_t ivc = static_cast<int32_t>(i);
    InVc& q = in_[ivc];
    const int32_t served = ServedMessage(ivc);
    if (served < 0) continue;
    const size_t base = static_cast<size_t>(ivc) << dshift_;
    int kept = 0;
    for (int k = 0; k < q.count; ++k) {
      const Flit f = buf_[base + ((q.head + static_cast<uint32_t>(k)) & slot_mask_)];
      if (discard(f.msg())) continue;
      buf_[base + ((q.head + static_cast<uint32_t>(kept)) & slot_mask_)] = f;
      ++kept;
    }
    const int removed = q.count - kept;
    removed_total += removed;
    q.count = static_cast<uint16_t>(kept);
    Masks& mk = masks_[ivc >> mshift_];
    if (removed > 0 && q.up >= 0) {  // the slots go back to the upstream output VC
      out_[q.up].credits += removed;
      out_[q.up].tail = static_cast<int32_t>((q.head + static_cast<uint32_t>(kept)) & slot_mask_);
      if (out_[q.up].owner >= 0) {
        const int32_t o = out_[q.up].owner;
        masks_[o >> mshift_].credit |= Bit(o);
      }
    }
    if (kept == 0) mk.nonempty &= ~Bit(ivc);
    mk.visible &= ~Bit(ivc);  // recomputed by the next scan
    if (!discard(served)) continue;
    // The served message is gone: release its output VC, route the next head afresh.
    if ((mk.active & Bit(ivc)) != 0) {
      if (out_[q.out].owner == ivc) out_[q.out].owner = -1;
      mk.active &= ~Bit(ivc);
      mk.credit &= ~Bit(ivc);
    }
    q.state = kIdle;
    q.stored = 0;
  }
  for (uint32_t& e : epoch_) ++e;  // output VCs may be free again
  flits_discarded_ += removed_total;
  return removed_total;
}

}  // namespace ukai::sim
