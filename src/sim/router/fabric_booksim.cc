// BookSim2's VC allocators (router.vc_allocator = islip / separable_input_first;
// sim_config.h VcAllocator): a routed head's requests and their matching, which replace
// the SelectionFunction. Off the hot path: Evaluate() reaches them only when
// Hot::booksim_va is set.
//
// Both keep, per input VC, BookSim2's input-side round-robin pointer (va_accept_: the
// router-local index port << vshift | vc of the output VC after the last one it won) and
// use the per-output-VC pointer of AllocateVcs() (va_rr_) on the output side, so the
// round-robin order over input and output VCs is BookSim2's (its allocator's inputs and
// outputs are numbered port x VCs + VC, ours port x 2^vshift + VC: the same order).
#include <algorithm>
#include <bit>
#include <vector>

#include "sim/router/fabric.h"

namespace ukai::sim {

// The head of `ivc` (routed, its pipeline over) requests every free output VC among its
// candidates (free as for the SelectionFunction: not owned, room where the routing or VCT
// needs it). None free: it is blocked until an output VC of its router may have become
// free, as after a failed selection.
void Fabric::RequestBooksimVcs(int lane, int32_t r, int32_t ivc, int64_t now) {
  Lane& l = lanes_[static_cast<size_t>(lane)];
  InVc& q = in_[ivc];
  const int ip = (ivc >> vshift_) & ((1 << pshift_) - 1);
  const int v = ivc & ((1 << vshift_) - 1);
  const Flit& f = buf_[(static_cast<size_t>(ivc) << dshift_) + q.head];
  const Message& m = (*messages_)[f.msg()];
  if (reroute_ && now > q.ready && m.dst != r) {
    Hot h = hot_;
    h.route = &l.route;
    if (!ReRouteBlocked(h, r, ip, v, ivc, f, now)) return;
  }
  const RouteCandidate one{q.cand_port, 0, q.cand_mask};
  const RouteCandidate* cands =
      q.cand_count == 1 ? &one : &cand_[static_cast<size_t>(ivc) * cand_stride_];
  const int32_t base = r << rshift_;
  const int32_t needed = vct_ ? m.length : 0;
  const size_t before = l.bs_req.size();
  bool freeing = false;  // a VC freed too recently: try again next cycle
  for (int i = 0; i < q.cand_count; ++i) {
    const RouteCandidate& c = cands[i];
    for (uint32_t mask = c.vc_mask; mask != 0; mask &= mask - 1) {
      const int vc = std::countr_zero(mask);
      const int32_t ovc = base + (c.port << vshift_) + vc;
      const OutputVcState& s = out_[ovc];
      const int32_t need = ((atomic_vcs_ >> vc) & 1u) != 0 ? depth_ : needed;
      if (s.owner >= 0 || s.credits < need) continue;
      if (va_free_from_[ovc] > now) {
        freeing = true;
        continue;
      }
      l.bs_req.push_back({ivc, ovc, static_cast<int16_t>(ip), static_cast<int16_t>(v), c.tier});
    }
  }
  if (l.bs_req.size() == before && !reroute_ && !freeing) {
    q.state = kBlocked;
    q.aux = static_cast<int32_t>(epoch_[r]);
  }
}

// Matches the requests of router r's heads into s.va (at most one per input VC; islip: at
// most one per output VC too), for AllocateVcs() to grant; clears the requests.
void Fabric::MatchBooksimVcs(int lane, int32_t r, Scratch& s) {
  Lane& l = lanes_[static_cast<size_t>(lane)];
  if (l.bs_req.empty()) return;
  const int32_t rbase = r << rshift_;
  const int32_t lmask = (1 << rshift_) - 1;
  // Round-robin distance of router-local index x from pointer p (0: p itself).
  auto dist = [lmask](int32_t x, int32_t p) { return (x - p) & lmask; };
  std::vector<int32_t>& grant = l.bs_grant;  // per local output VC: the input VC it grants
  std::vector<int32_t>& pick = l.bs_pick;    // per local input VC: its request (index)
  if (grant.empty()) {
    grant.assign(static_cast<size_t>(lmask) + 1, -1);
    pick.assign(static_cast<size_t>(lmask) + 1, -1);
  }
  const int n = static_cast<int>(l.bs_req.size());
  const bool islip = booksim_va_ == VcAllocator::kIslip;
  // Better request for input VC `ivc` than the one at `b` (islip: among its grants;
  // separable input-first: the best tier first): the output VC nearest its pointer.
  auto better = [&](const BsReq& q, const BsReq& b, int32_t ptr) {
    return !islip && q.tier != b.tier ? q.tier < b.tier
                                      : dist(q.ovc - rbase, ptr) < dist(b.ovc - rbase, ptr);
  };
  // One requesting input VC (the common case): every output VC it asks for grants it, so
  // both allocators give it its best request.
  int one = 0;
  while (one < n && l.bs_req[static_cast<size_t>(one)].ivc == l.bs_req[0].ivc) ++one;
  if (one == n) {
    const int32_t ptr = va_accept_[l.bs_req[0].ivc];
    const BsReq* b = &l.bs_req[0];
    for (int i = 1; i < n; ++i) {
      if (better(l.bs_req[static_cast<size_t>(i)], *b, ptr)) b = &l.bs_req[static_cast<size_t>(i)];
    }
    s.va[s.nva++] = {b->ivc, b->ovc, b->ip, b->v};
    l.bs_req.clear();
    return;
  }
  if (islip) {
    // Grant: every requested output VC grants the requesting input VC nearest its pointer.
    for (const BsReq& q : l.bs_req) {
      const int32_t lo = q.ovc - rbase, li = q.ivc - rbase;
      int32_t& g = grant[static_cast<size_t>(lo)];
      if (g < 0 || dist(li, va_rr_[q.ovc]) < dist(g, va_rr_[q.ovc])) g = li;
    }
  }
  // Accept (islip: among the grants; separable input-first: among the requests of the
  // best tier): the output VC nearest the input VC's pointer.
  for (int i = 0; i < n; ++i) {
    const BsReq& q = l.bs_req[static_cast<size_t>(i)];
    const int32_t lo = q.ovc - rbase, li = q.ivc - rbase;
    if (islip && grant[static_cast<size_t>(lo)] != li) continue;
    int32_t& p = pick[static_cast<size_t>(li)];
    if (p >= 0 && !better(q, l.bs_req[static_cast<size_t>(p)], va_accept_[q.ivc])) continue;
    p = i;
  }
  for (const BsReq& q : l.bs_req) {
    const int32_t li = q.ivc - rbase;
    int32_t& p = pick[static_cast<size_t>(li)];
    if (p >= 0) {
      const BsReq& b = l.bs_req[static_cast<size_t>(p)];
      s.va[s.nva++] = {b.ivc, b.ovc, b.ip, b.v};
      p = -1;
    }
    grant[static_cast<size_t>(q.ovc - rbase)] = -1;
  }
  l.bs_req.clear();
}

// router.model = booksim's credit channels. A credit for output VC `ovc` staged in cycle
// `now` counts from cycle now + 1 + its channel's latency + credit_delay_ (ukai's model:
// now + 1).
void Fabric::DeferCredit(Lane& lane, int32_t ovc, int64_t now) {
  const int link = credit_port_[static_cast<size_t>(ovc >> vshift_)];
  const int64_t from = now + 1 + link + credit_delay_;
  lane.credit_ring[static_cast<size_t>(from % static_cast<int64_t>(lane.credit_ring.size()))]
      .push_back(ovc);
}

void Fabric::ApplyCredit(int32_t ovc) {
  OutputVcState& o = out_[ovc];
  if (o.credits++ == 0 && o.owner >= 0) masks_[o.owner >> mshift_].credit |= Bit(o.owner);
  if (needs_room_) ++epoch_[ovc >> rshift_];  // a head waiting for room may now find it
}

void Fabric::ApplyDueCredits(Lane& lane, int64_t now) {
  const auto slots = static_cast<int64_t>(lane.credit_ring.size());
  // Every slot once at most: the cycles since the last call (the engine may skip idle ones).
  const int64_t first = std::max(lane.credits_applied + 1, now - slots + 1);
  for (int64_t t = first; t <= now; ++t) {
    std::vector<int32_t>& due = lane.credit_ring[static_cast<size_t>(t % slots)];
    for (int32_t ovc : due) ApplyCredit(ovc);
    due.clear();
  }
  lane.credits_applied = now;
}

// Commit() with credit channels: the flits count now, the credits when they arrive.
void Fabric::CommitDelayed(Lane& lane, int64_t now, uint8_t* active) {
  for (const Lane& other : lanes_) {
    if (!other.out[static_cast<size_t>(lane.part)].empty()) {
      CommitInbox(other.out[static_cast<size_t>(lane.part)], active, &lane, now);
    }
  }
  if (!lane.remote_in.empty()) {
    CommitInbox(lane.remote_in, active, &lane, now);
    lane.remote_in.clear();
  }
  for (int i = 0; i < lane.ntx; ++i) {
    const Transfer t = lane.tx[static_cast<size_t>(i)];
    if (t.credit >= 0) DeferCredit(lane, t.credit, now);
    ++in_[t.dst].count;  // Evaluate() already wrote the flit into its slot
    masks_[t.dst >> mshift_].nonempty |= Bit(t.dst);
    active[t.dst >> rshift_] = 1;
  }
  for (int i = 0; i < lane.nej; ++i) {
    if (lane.ej[static_cast<size_t>(i)].credit >= 0) {
      DeferCredit(lane, lane.ej[static_cast<size_t>(i)].credit, now);
    }
  }
  lane.ntx = 0;
  lane.nej = 0;
}

int32_t Fabric::CreditsOnTheirWay(int32_t ovc) const {
  int32_t n = 0;
  for (const Lane& l : lanes_) {
    for (const std::vector<int32_t>& slot : l.credit_ring) {
      for (int32_t c : slot) n += c == ovc ? 1 : 0;
    }
  }
  return n;
}

}  // namespace ukai::sim
