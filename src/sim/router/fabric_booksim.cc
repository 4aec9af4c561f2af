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

// The head of `ivc` (routed, its pipeline over) requests, per candidate, every free output
// VC of it (free as for the SelectionFunction: not owned, room where the routing or VCT
// needs it): one request of a VC mask per candidate. None free: it is blocked until an
// output VC of its router may have become free, as after a failed selection.
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
  bool requested = false;
  bool freeing = false;  // a VC freed too recently: try again next cycle
  for (int i = 0; i < q.cand_count; ++i) {
    const RouteCandidate& c = cands[i];
    const int32_t port_base = base + (c.port << vshift_);
    const Masks& mk = masks_[port_base >> mshift_];
    const uint64_t recent = mk.freed_at + 2 > now ? mk.freed : 0;
    uint32_t free = 0;
    for (uint32_t mask = c.vc_mask; mask != 0; mask &= mask - 1) {
      const int vc = std::countr_zero(mask);
      const OutputVcState& s = out_[port_base + vc];
      const int32_t need = ((atomic_vcs_ >> vc) & 1u) != 0 ? depth_ : needed;
      if (s.owner >= 0 || s.credits < need) continue;
      if ((recent & Bit(port_base + vc)) != 0) {
        freeing = true;
        continue;
      }
      free |= 1u << vc;
    }
    if (free == 0) continue;
    l.bs_req.push_back(
        {ivc, static_cast<int16_t>(ip), static_cast<int16_t>(v), c.tier, c.port, free});
    requested = true;
  }
  if (!requested && !reroute_ && !freeing) {
    q.state = kBlocked;
    q.aux = static_cast<int32_t>(epoch_[r]);
  }
}

// Matches the requests of router r's heads into s.va (at most one per input VC; islip: at
// most one per output VC too), for AllocateVcs() to grant; clears the requests. The
// requests of one input VC are consecutive (one head's candidates). islip's grant is
// pairwise: an output VC that two input VCs request goes to the one nearer its pointer
// (va_rr_); each input VC then accepts the granted output VC nearest its own pointer
// (va_accept_). Separable input-first: each input VC picks the best tier, then the output
// VC nearest its pointer, and AllocateVcs() arbitrates per output VC.
namespace {

// islip: the VCs of request `q` (of router-local input VC `li`) that no request nearer an
// output VC's pointer also names (`winner`: the nearest one of every VC in `multi`).
inline uint32_t IslipGranted(uint32_t mask, int32_t port_base, int32_t li, uint64_t multi,
                             const int32_t* winner) {
  uint32_t granted = mask;
  for (uint64_t m = (uint64_t{mask} << port_base) & multi; m != 0; m &= m - 1) {
    const int b = std::countr_zero(m);
    if (winner[b] != li) granted &= ~(1u << (b - port_base));
  }
  return granted;
}

}  // namespace

// islip on routers of up to 64 VCs: the output VCs (bit: router-local index) that more
// than one request names, and in `winner` for each the router-local input VC nearest its
// pointer; `grouped`: some input VC made more than one request.
uint64_t Fabric::IslipContested(const BsReq* req, int n, int32_t rbase, int32_t* winner,
                                bool* grouped) const {
  const int32_t lmask = (1 << rshift_) - 1;
  uint64_t any = 0, multi = 0;
  bool more = false;
  for (int j = 0; j < n; ++j) {
    const uint64_t m = uint64_t{req[j].mask} << (req[j].port << vshift_);
    multi |= any & m;
    any |= m;
    more |= j > 0 && req[j].ivc == req[j - 1].ivc;
  }
  *grouped = more;
  if (multi == 0) return 0;
  int32_t best_dist[64];
  uint64_t seen = 0;
  for (int j = 0; j < n; ++j) {
    const int32_t lj = req[j].ivc - rbase;
    for (uint64_t m = (uint64_t{req[j].mask} << (req[j].port << vshift_)) & multi; m != 0;
         m &= m - 1) {
      const int b = std::countr_zero(m);
      const int32_t dist = (lj - va_rr_[rbase + b]) & lmask;
      if (((seen >> b) & 1u) == 0 || dist < best_dist[b]) {
        best_dist[b] = dist;
        winner[b] = lj;
      }
      seen |= uint64_t{1} << b;
    }
  }
  return multi;
}

// Each contested output VC goes to the input VC nearest its pointer: the first of those
// naming it at or after the pointer, cyclically (router-local input VC bits); the others
// lose it, and each input VC takes its nearest VC among those left.
void Fabric::MatchIslipContested(int lane, int32_t r, uint64_t multi, Scratch& s) {
  std::vector<BsReq>& req = lanes_[static_cast<size_t>(lane)].bs_req;
  const int32_t rbase = r << rshift_;
  const int n = static_cast<int>(req.size());
  const int vshift = vshift_;
  uint64_t named[64];  // per contested VC: the input VCs (router-local bits) naming it
  uint64_t won[64];    // per requesting input VC: the contested VCs it won
  for (uint64_t m = multi; m != 0; m &= m - 1) named[std::countr_zero(m)] = 0;
  for (int j = 0; j < n; ++j) {
    const int32_t li = req[j].ivc - rbase;
    won[li] = 0;
    for (uint64_t m = (uint64_t{req[j].mask} << (req[j].port << vshift)) & multi; m != 0;
         m &= m - 1) {
      named[std::countr_zero(m)] |= uint64_t{1} << li;
    }
  }
  for (uint64_t m = multi; m != 0; m &= m - 1) {
    const int b = std::countr_zero(m);
    const int rr = va_rr_[rbase + b];  // < 64: a router-local index
    const uint64_t at_or_after = named[b] >> rr << rr;
    won[std::countr_zero(at_or_after != 0 ? at_or_after : named[b])] |= uint64_t{1} << b;
  }
  for (int j = 0; j < n; ++j) {
    const BsReq& q = req[j];
    const int32_t port_base = q.port << vshift;
    // Its VCs no other request names, and the contested ones it won.
    const uint64_t mine = uint64_t{q.mask} << port_base;
    const auto granted =
        static_cast<uint32_t>(((mine & ~multi) | (mine & won[q.ivc - rbase])) >> port_base);
    if (granted == 0) continue;
    const int32_t lo = port_base + NearestVc(granted, port_base, va_accept_[q.ivc], vshift);
    s.va[s.nva++] = {q.ivc, rbase + lo, q.ip, q.v};
  }
  req.clear();
}

void Fabric::MatchBooksimVcs(int lane, int32_t r, Scratch& s) {
  Lane& l = lanes_[static_cast<size_t>(lane)];
  const int n = static_cast<int>(l.bs_req.size());
  if (n == 0) return;
  const int32_t rbase = r << rshift_;
  const int32_t lmask = (1 << rshift_) - 1;
  const bool islip = booksim_va_ == VcAllocator::kIslip;
  const BsReq* req = l.bs_req.data();
  const bool one_input = req[n - 1].ivc == req[0].ivc;
  const bool table = islip && !one_input && rshift_ <= 6;
  uint64_t multi = 0;
  int32_t winner[64];
  bool grouped = true;
  if (table) multi = IslipContested(req, n, rbase, winner, &grouped);
  if (table && !grouped) {  // one request per input VC: it takes its nearest granted VC
    for (int j = 0; j < n; ++j) {
      const BsReq& q = req[j];
      const int32_t port_base = q.port << vshift_;
      const uint32_t granted = IslipGranted(q.mask, port_base, q.ivc - rbase, multi, winner);
      if (granted == 0) continue;
      const int32_t lo = port_base + NearestVc(granted, port_base, va_accept_[q.ivc], vshift_);
      s.va[s.nva++] = {q.ivc, rbase + lo, q.ip, q.v};
    }
    l.bs_req.clear();
    return;
  }
  for (int g = 0; g < n;) {
    const int32_t ivc = req[g].ivc;
    const int32_t li = ivc - rbase;
    const int32_t ptr = va_accept_[ivc];
    int best = -1, best_tier = 0;
    int32_t best_ovc = 0, best_dist = 0;
    for (; g < n && req[g].ivc == ivc; ++g) {
      const BsReq& q = req[g];
      const int32_t port_base = q.port << vshift_;
      uint32_t granted = q.mask;
      if (table) {
        granted = IslipGranted(q.mask, port_base, li, multi, winner);
        if (granted == 0) continue;
      } else if (islip && !one_input) {
        // Output VCs an input VC nearer their pointers also requests go to that one.
        for (int j = 0; j < n; ++j) {
          const BsReq& o = req[j];
          if (o.ivc == ivc || o.port != q.port) continue;
          for (uint32_t both = granted & o.mask; both != 0; both &= both - 1) {
            const int32_t ovc = rbase + port_base + std::countr_zero(both);
            const int32_t rr = va_rr_[ovc];
            if (((o.ivc - rbase - rr) & lmask) < ((li - rr) & lmask)) granted &= ~(both & -both);
          }
        }
        if (granted == 0) continue;
      }
      const int32_t lo = port_base + NearestVc(granted, port_base, ptr, vshift_);
      const int32_t dist = (lo - ptr) & lmask;
      // islip: the nearest granted VC; separable input-first: the best tier first. Ties
      // (one output VC named by two candidates) keep the earlier request.
      const bool better =
          best < 0 || (!islip && q.tier != best_tier ? q.tier < best_tier : dist < best_dist);
      if (!better) continue;
      best = g;
      best_tier = q.tier;
      best_ovc = rbase + lo;
      best_dist = dist;
    }
    if (best >= 0) s.va[s.nva++] = {ivc, best_ovc, req[best].ip, req[best].v};
  }
  l.bs_req.clear();
}

// router.model = booksim's credit channels. A credit for output VC `ovc` staged in cycle
// `now` counts from cycle now + 1 + its channel's latency + credit_delay_ (ukai's model:
// now + 1).
void Fabric::DeferCredit(Lane& lane, int32_t ovc, int64_t now) {
  const int link = credit_port_[static_cast<size_t>(ovc >> vshift_)];
  const int64_t from = now + 1 + link + credit_delay_;
  lane.credit_ring[static_cast<size_t>(from) & (lane.credit_ring.size() - 1)].push_back(ovc);
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
    std::vector<int32_t>& due = lane.credit_ring[static_cast<size_t>(t & (slots - 1))];
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
  // DeferCredit() with the lookups hoisted out of the loops.
  std::vector<int32_t>* ring = lane.credit_ring.data();
  const size_t ring_mask = lane.credit_ring.size() - 1;
  const int32_t* credit_port = credit_port_.data();
  const int64_t from = now + 1 + credit_delay_;
  const int vshift = vshift_;
  auto defer = [&](int32_t ovc) {
    ring[static_cast<size_t>(from + credit_port[ovc >> vshift]) & ring_mask].push_back(ovc);
  };
  if (defer_arrivals_) {
    DeferArrivals(lane, now, active);
    lane.ntx = 0;
    lane.nej = 0;
    return;
  }
  InVc* in = in_.data();
  Masks* masks = masks_.data();
  const int mshift = mshift_, rshift = rshift_;
  for (int i = 0; i < lane.ntx; ++i) {
    const Transfer t = lane.tx[static_cast<size_t>(i)];
    if (t.credit >= 0) defer(t.credit);
    ++in[t.dst].count;  // Evaluate() already wrote the flit into its slot
    masks[t.dst >> mshift].nonempty |= Bit(t.dst);
    active[t.dst >> rshift] = 1;
  }
  for (int i = 0; i < lane.nej; ++i) {
    if (lane.ej[static_cast<size_t>(i)].credit >= 0) defer(lane.ej[static_cast<size_t>(i)].credit);
  }
  lane.ntx = 0;
  lane.nej = 0;
}

// The flits of this cycle arrive in cycle now + 1 + link_cycles_ (every channel's latency
// when the arrivals are deferred): the Commit() of the cycle before counts them, and sets
// their VCs visible (a counted flit has arrived, so a VC's front flit is always visible) and
// their routers active. Their credits go back as without the ring.
void Fabric::DeferArrivals(Lane& lane, int64_t now, uint8_t* active) {
  // Every credit channel has the same latency too (InitHot()): the cycle's flits take one
  // slot of each ring, appended in one go.
  const auto slots = static_cast<int64_t>(lane.arrival_ring.size());
  std::vector<int32_t>& later =
      lane.arrival_ring[static_cast<size_t>((now + link_cycles_) & (slots - 1))];
  std::vector<int32_t>& credits =
      lane.credit_ring[static_cast<size_t>(now + 1 + credit_delay_ + defer_credit_cycles_) &
                       (lane.credit_ring.size() - 1)];
  const int ntx = lane.ntx;
  if (ntx > 0) {
    const size_t at = later.size(), cat = credits.size();
    later.resize(at + static_cast<size_t>(ntx));
    credits.resize(cat + static_cast<size_t>(ntx));
    int32_t* __restrict dst = later.data() + at;
    int32_t* __restrict up = credits.data() + cat;
    const Transfer* __restrict tx = lane.tx.data();
    int nc = 0;
    for (int i = 0; i < ntx; ++i) {
      dst[i] = tx[i].dst;
      up[nc] = tx[i].credit;
      nc += tx[i].credit >= 0 ? 1 : 0;  // none from the injection port
    }
    credits.resize(cat + static_cast<size_t>(nc));
    lane.arrivals_pending += ntx;
  }
  for (int i = 0; i < lane.nej; ++i) {
    if (lane.ej[static_cast<size_t>(i)].credit >= 0)
      credits.push_back(lane.ej[static_cast<size_t>(i)].credit);
  }
  // Every slot once at most (the engine skips no cycle while flits are on the ring).
  const int64_t first = std::max(lane.arrivals_applied + 1, now - slots + 1);
  for (int64_t t = first; t <= now; ++t) {
    std::vector<int32_t>& due = lane.arrival_ring[static_cast<size_t>(t & (slots - 1))];
    CountArrivals(lane, due, now, active);
    lane.arrivals_pending -= static_cast<int64_t>(due.size());
    due.clear();
  }
  lane.arrivals_applied = now;
}

int32_t Fabric::ArrivalsPending(int32_t ivc) const {
  if (!defer_arrivals_) return 0;
  int32_t n = 0;
  for (const Lane& l : lanes_) {
    for (const std::vector<int32_t>& slot : l.arrival_ring) {
      for (int32_t d : slot) n += d == ivc ? 1 : 0;
    }
  }
  return n;
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
