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
  for (const NodeRun& run : local_) {
    for (size_t ivc = size_t(run.begin) << rshift_; ivc < size_t(run.end) << rshift_; ++ivc) {
      const InVc& q = in_[ivc];
      const size_t base = ivc << dshift_;
      for (int k = 0; k < q.count; ++k) {
        out->push_back(buf_[base + ((q.head + static_cast<uint32_t>(k)) & slot_mask_)].msg());
      }
      const int32_t served = ServedMessage(static_cast<int32_t>(ivc));
      if (served >= 0) out->push_back(served);
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

int64_t Fabric::Purge(const std::function<bool(int32_t msg)>& discard,
                      std::vector<PurgedCredits>* remote) {
  int64_t removed_total = 0;
  for (const NodeRun& run : local_) {
    for (int32_t ivc = run.begin << rshift_; ivc < run.end << rshift_; ++ivc) {
      removed_total += PurgeVc(ivc, discard, remote);
    }
  }
  for (const NodeRun& run : local_) {
    for (int32_t r = run.begin; r < run.end; ++r) ++epoch_[r];  // output VCs may be free again
  }
  flits_discarded_ += removed_total;
  return removed_total;
}

void Fabric::ApplyPurgedCredits(const PurgedCredits& c) {
  out_[c.ovc].credits += c.credits;
  out_[c.ovc].tail = c.tail;
  if (out_[c.ovc].owner >= 0) {
    const int32_t o = out_[c.ovc].owner;
    masks_[o >> mshift_].credit |= Bit(o);
  }
}

// Purge() of one input VC; returns the flits removed.
int Fabric::PurgeVc(int32_t ivc, const std::function<bool(int32_t msg)>& discard,
                    std::vector<PurgedCredits>* remote) {
  InVc& q = in_[ivc];
  const int32_t served = ServedMessage(ivc);
  if (served < 0) return 0;
  const size_t base = static_cast<size_t>(ivc) << dshift_;
  int kept = 0;
  for (int k = 0; k < q.count; ++k) {
    const Flit f = buf_[base + ((q.head + static_cast<uint32_t>(k)) & slot_mask_)];
    if (discard(f.msg())) continue;
    buf_[base + ((q.head + static_cast<uint32_t>(kept)) & slot_mask_)] = f;
    ++kept;
  }
  const int removed = q.count - kept;
  q.count = static_cast<uint16_t>(kept);
  Masks& mk = masks_[ivc >> mshift_];
  if (removed > 0 && q.up >= 0) {  // the slots go back to the upstream output VC
    const PurgedCredits back{
        q.up, removed, static_cast<int32_t>((q.head + static_cast<uint32_t>(kept)) & slot_mask_)};
    if (LaneOf(owner_[q.up >> rshift_]) < 0) {
      remote->push_back(back);
    } else {
      out_[q.up].credits += back.credits;
      out_[q.up].tail = back.tail;
      if (out_[q.up].owner >= 0) {
        const int32_t o = out_[q.up].owner;
        masks_[o >> mshift_].credit |= Bit(o);
      }
    }
  }
  if (kept == 0) mk.nonempty &= ~Bit(ivc);
  mk.visible &= ~Bit(ivc);  // recomputed by the next scan
  if (!discard(served)) return removed;
  // The served message is gone: release its output VC, route the next head afresh.
  if ((mk.active & Bit(ivc)) != 0) {
    if (out_[q.out].owner == ivc) ClearOwner(q.out);
    mk.active &= ~Bit(ivc);
    mk.credit &= ~Bit(ivc);
  }
  q.state = kIdle;
  mk.pipe &= ~Bit(ivc);
  q.stored = 0;
  return removed;
}

}  // namespace ukai::sim
