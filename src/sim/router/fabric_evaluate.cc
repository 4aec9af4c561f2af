// Fabric::Evaluate: one cycle of a set of routers, in stages (scan the input ports, VC
// allocation, switch allocation + traversal). Every stage of router r reads committed
// state and writes only router r's own state and the staged transfers (fabric.h).
#include <algorithm>
#include <bit>

#include "sim/router/fabric.h"

#define UKAI_INLINE __attribute__((always_inline)) inline

namespace ukai::sim {
namespace {

// Index of the lowest set bit; `mask` != 0 (a bare bsf/tzcnt, no zero check).
UKAI_INLINE int Ctz(uint32_t mask) { return __builtin_ctz(mask); }
UKAI_INLINE int Ctz64(uint64_t mask) { return __builtin_ctzll(mask); }

// First set bit of `mask` at or after `start` (cyclically). `mask` != 0.
UKAI_INLINE int PickRoundRobin(uint32_t mask, int start) {
  // The bits at or above `start` (0 <= start <= 32: a 64-bit shift needs no range check).
  const auto hi = static_cast<uint32_t>((uint64_t{mask} >> start) << start);
  return Ctz(hi != 0 ? hi : mask);
}

}  // namespace

void Fabric::Evaluate(int lane_index, const int32_t* routers, size_t count, int64_t now) {
  Lane& lane = lanes_[static_cast<size_t>(lane_index)];
  if (credit_delay_ >= 0) ApplyDueCredits(lane, now);
  ClearPipes(lane, now);
  for (int32_t part : lane.out_used) lane.out[static_cast<size_t>(part)].clear();
  lane.out_used.clear();
  lane.boundary_flits = 0;
  Hot base = hot_;
  base.tx = lane.tx.data();
  base.ej = lane.ej.data();
  base.route = &lane.route;
  base.bs_req = &lane.bs_req;
  base.pipe_ring = lane.pipe_ring.data();
  base.lane = lane_index;
  base.generic_match = !constant_layouts_;
  Scratch s;
  s.ntx = lane.ntx;
  s.nej = lane.nej;
  for (uint32_t& req : s.out_req) req = 0;
  s.bs_any = s.bs_multi = 0;
  s.bs_generic = false;
  const bool fixed = constant_layouts_ && hot_.pshift == 3 && !hot_.extras;
  const bool plain = fixed && hot_.link == 1 && !hot_.booksim_va;
  if (plain && hot_.vshift == 2 && hot_.dshift == 3) {
    EvaluateFixed<2, 3, false>(base, routers, count, now, s);
  } else if (plain && hot_.vshift == 2 && hot_.dshift == 4) {
    EvaluateFixed<2, 4, false>(base, routers, count, now, s);
  } else if (plain && hot_.vshift == 3 && hot_.dshift == 6) {
    EvaluateFixed<3, 6, false>(base, routers, count, now, s);
  } else if (fixed && hot_.booksim_va && hot_.vshift == 2 && hot_.dshift == 3) {
    EvaluateFixed<2, 3, true>(base, routers, count, now, s);
  } else {
    const Hot h = base;
    for (size_t i = 0; i < count; ++i) EvaluateRouter(h, routers[i], now, s);
  }
  lane.ntx = s.ntx;
  lane.nej = s.nej;
  const int moved = lane.ntx + lane.nej + lane.boundary_flits;
  if (moved > 0) {
    lane.flits_ejected += lane.nej;
    lane.flits_moved += moved;
    // Every transfer crossed a router-to-router channel.
    lane.flit_hops += lane.ntx + lane.boundary_flits;
    lane.last_move_cycle = now;
  }
}

// Every slot once at most: the cycles since the last call (the engine may skip idle ones).
// A slot holds only VCs due in a cycle after the last call and within kPipeSlots of it.
void Fabric::ClearPipes(Lane& lane, int64_t now) {
  const int64_t first = std::max(lane.pipes_cleared + 1, now - kPipeSlots + 1);
  for (int64_t t = first; t <= now; ++t) {
    std::vector<int32_t>& due = lane.pipe_ring[static_cast<size_t>(t & (kPipeSlots - 1))];
    for (int32_t ivc : due) masks_[ivc >> mshift_].pipe &= ~Bit(ivc);
    due.clear();
  }
  lane.pipes_cleared = now;
}

// Up to 8 ports of 2^kVshift VCs of 2^kDshift flits, 1-cycle links: with the layout as
// constants, the inlined stages need no shift loads and fewer registers. Instantiated for
// the spec's router (4 VCs of 8 flits), 4 VCs of 16 flits (the gateway benchmark) and 5-8
// VCs of 64 flits (experiments/gateway/group24.toml). The port count too for a 2-D (5
// ports) and a 3-D torus (7). kBooksim: BookSim2's VC allocators (Hot::booksim_va) on the
// common BookSim2 router (4 VCs of 8 flits), whatever its channel latency.
template <int kVshift, int kDshift, bool kBooksim>
void Fabric::EvaluateFixed(const Hot& base, const int32_t* routers, size_t count, int64_t now,
                           Scratch& s) {
  static_assert(3 + kVshift <= 6, "a router's input VCs fit one Masks word");
  Hot h = base;
  h.pshift = 3;
  h.vshift = kVshift;
  h.dshift = kDshift;
  h.mshift = 3 + kVshift;
  h.link = kBooksim ? base.link : 1;
  h.slot_mask = (1u << kDshift) - 1;
  h.extras = false;  // compiles forks, store-and-forward and the rest out of this path
  h.booksim_va = kBooksim;
  h.counted_arrived = kBooksim && base.counted_arrived;  // deferred arrivals: booksim only
  h.link_port = nullptr;
  if (base.ports == 5) {
    h.ports = 5;
    h.pe = 4;
    for (size_t i = 0; i < count; ++i) EvaluateRouter(h, routers[i], now, s);
  } else if (base.ports == 7) {
    h.ports = 7;
    h.pe = 6;
    for (size_t i = 0; i < count; ++i) EvaluateRouter(h, routers[i], now, s);
  } else {
    for (size_t i = 0; i < count; ++i) EvaluateRouter(h, routers[i], now, s);
  }
}

UKAI_INLINE void Fabric::EvaluateRouter(const Hot& h, int32_t r, int64_t now, Scratch& s) {
  const int wshift = h.pshift + h.vshift - h.mshift;
  // With BookSim2's allocators, a router whose only flits are heads in their hop pipeline
  // has nothing to do this cycle: such a VC's front is visible and owns no output VC, so the
  // scan would neither mark it nor nominate it, and the head loop skips it (Masks::pipe).
  // (ukai's model keeps the plain test: its case (a) mispredicted more with this one.)
  const uint64_t piped = h.booksim_va ? ~uint64_t{0} : 0;
  uint64_t any = 0;
  for (int w = 0; w < (1 << wshift); ++w) {
    const Masks& mk = h.masks[(r << wshift) + w];
    any |= mk.nonempty & ~(mk.pipe & piped);
  }
  if (any == 0) return;
  const int32_t rpi = r << h.pshift;
  s.nva = 0;
  s.nominated = 0;
  s.table_used = 0;
  s.out_mask = 0;
  ScanRouter(h, r, rpi, now, s);
  if (h.booksim_va && !AllocateLone(h, r, rpi, s)) MatchBooksim(h, r, s);
  if (s.nva > 0) AllocateVcs(h, r, rpi, s);
  for (uint32_t om = s.out_mask; om != 0; om &= om - 1) GrantOutput(h, r, rpi, Ctz(om), now, s);
}

// Over all input VCs of router r, bit by bit: marks the VCs whose front flit has arrived;
// then each input port nominates one of its VCs that may bid for the switch (own an output
// VC with a credit); then the heads at the front without an output VC go to HandleHead(),
// in VC index order. (The stages touch disjoint state, so this equals doing all three port
// by port.)
UKAI_INLINE void Fabric::ScanRouter(const Hot& h, int32_t r, int32_t rpi, int64_t now, Scratch& s) {
  const int wshift = h.pshift + h.vshift - h.mshift;
  const int32_t w0 = r << wshift;
  const uint32_t pmask = (1u << h.pshift) - 1;
  const uint32_t vmask = (1u << h.vshift) - 1;
  const uint64_t vfull = (uint64_t{1} << (1 << h.vshift)) - 1;
  for (int32_t w = w0; w < w0 + (1 << wshift); ++w) {
    Masks& mk = h.masks[w];
    uint64_t vis = mk.visible;
    for (uint64_t m = mk.nonempty & ~vis; m != 0; m &= m - 1) {
      const int32_t ivc = (w << h.mshift) | Ctz64(m);
      if (h.buf[(static_cast<size_t>(ivc) << h.dshift) + h.in[ivc].head].ArrivedBy(now)) {
        vis |= uint64_t{1} << Ctz64(m);
      }
    }
    mk.visible = vis;
    for (uint64_t cand = vis & mk.credit; cand != 0;) {
      const int first = Ctz64(cand) & ~static_cast<int>(vmask);  // VC 0 of its port
      const int ip =
          static_cast<int>((static_cast<uint32_t>(w << h.mshift | first) >> h.vshift) & pmask);
      Nominate(h, rpi, ip, static_cast<uint32_t>((cand >> first) & vfull), s);
      cand &= ~(vfull << first);
    }
  }
  if (__builtin_expect(h.shared_headers, false)) {
    HandleHeadsShared(h, r, rpi, now, s);
    return;
  }
  for (int32_t w = w0; w < w0 + (1 << wshift); ++w) {
    const Masks& mk = h.masks[w];
    for (uint64_t m = mk.visible & ~mk.active & ~mk.pipe; m != 0; m &= m - 1) {
      HandleHead(h, r, (w << h.mshift) | Ctz64(m), now, s);
    }
  }
}

// The head loop with one header unit per input port: per port, its heads without an
// output VC in round-robin order from header_rr_; a new head is routed only once the
// unit is free (header_free_), and only the first VC-allocation request of the port
// this cycle is kept.
__attribute__((noinline)) void Fabric::HandleHeadsShared(const Hot& h, int32_t r, int32_t rpi,
                                                         int64_t now, Scratch& s) {
  const int nv = 1 << h.vshift;
  const uint64_t vfull = (uint64_t{1} << nv) - 1;
  for (int ip = 0; ip < h.ports; ++ip) {
    const int32_t pi = rpi + ip;
    const int32_t ivc0 = pi << h.vshift;
    const Masks& mk = h.masks[ivc0 >> h.mshift];
    const int shift = ivc0 & ((1 << h.mshift) - 1);
    const uint64_t heads = ((mk.visible & ~mk.active) >> shift) & vfull;
    bool requested = false;
    const int start = header_rr_[pi];
    for (int i = 0; i < nv && heads != 0; ++i) {
      const int v = (start + i) & (nv - 1);
      if (((heads >> v) & 1u) == 0) continue;
      InVc& q = h.in[ivc0 | v];
      const bool fresh = q.state == kIdle;
      if (fresh && now < header_free_[pi]) continue;  // the unit is busy with another head
      if (requested && !fresh) continue;              // one arbitration per port and cycle
      const int nva = s.nva;
      HandleHead(h, r, ivc0 | v, now, s);
      if (fresh && q.state != kIdle) header_free_[pi] = q.ready;
      if (s.nva > nva) {
        if (requested) {
          --s.nva;
        } else {
          requested = true;
          header_rr_[pi] = static_cast<uint8_t>((v + 1) & (nv - 1));
        }
      }
    }
  }
}

// Switch allocation, input side: input port ip nominates one of the VCs in `cand`
// (round-robin) as a request to that VC's output port.
UKAI_INLINE void Fabric::Nominate(const Hot& h, int32_t rpi, int ip, uint32_t cand, Scratch& s) {
  // No single-candidate shortcut: PickRoundRobin() is branch-free, and the random traffic
  // makes a test for one candidate a frequent mispredict.
  const int v = PickRoundRobin(cand, h.rr[rpi + ip].in);
  const int op = (h.in[((rpi + ip) << h.vshift) | v].out >> h.vshift) & ((1 << h.pshift) - 1);
  s.nom_v[ip] = static_cast<uint8_t>(v);
  s.nom_op[ip] = static_cast<uint8_t>(op);
  s.nominated |= 1u << ip;
  const uint32_t obit = 1u << op;
  s.out_req[op] |= 1u << ip;  // zero unless op is in out_mask (see Scratch)
  s.out_mask |= obit;
}

// Switch allocation, output side: output port op grants one requesting input port
// (round-robin), whose nominated flit traverses.
UKAI_INLINE void Fabric::GrantOutput(const Hot& h, int32_t r, int32_t rpi, int op, int64_t now,
                                     Scratch& s) {
  const uint32_t req = s.out_req[op];
  s.out_req[op] = 0;  // keeps out_req all zero between routers
  if (__builtin_expect(h.grant_options, false)) {
    GrantWithOptions(h, r, rpi, op, req, now, s);
    return;
  }
  const int ip = PickRoundRobin(req, h.rr[rpi + op].out);
  const int v = s.nom_v[ip];
  h.rr[rpi + op].out = static_cast<uint8_t>(ip + 1);
  h.rr[rpi + ip].in = static_cast<uint8_t>(v + 1);
  Traverse(h, r, rpi + ip, ip, v, op, now, s);
}

// GrantOutput() with the router options: up to eject_flits_ grants at the ejection port;
// with a bubble, while the port has sent within the last bubble_cycles_ cycles only the
// message it sent last may continue (the ejection port with eject_flits_ > 1 has none);
// with in-band flow control a network port sends only when the rule lets it
// (InBandRefuses()).
__attribute__((noinline)) void Fabric::GrantWithOptions(const Hot& h, int32_t r, int32_t rpi,
                                                        int op, uint32_t req, int64_t now,
                                                        Scratch& s) {
  const bool wide = op == h.pe && eject_flits_ > 1;
  const bool bubble = bubble_cycles_ > 0 && !wide;
  LastSent* last = bubble ? &last_sent_[rpi + op] : nullptr;
  auto front_msg = [&](int ip) {
    const int32_t ivc = ((rpi + ip) << h.vshift) | s.nom_v[ip];
    return (*messages_)[h.buf[(static_cast<size_t>(ivc) << h.dshift) + h.in[ivc].head].msg()].uid();
  };
  for (int grants = wide ? eject_flits_ : 1; grants > 0 && req != 0; --grants) {
    int ip = PickRoundRobin(req, h.rr[rpi + op].out);
    if (bubble && now <= last->cycle + bubble_cycles_ && front_msg(ip) != last->uid) {
      ip = -1;  // within the bubble: only the last message may go on
      for (uint32_t m = req; m != 0; m &= m - 1) {
        if (front_msg(Ctz(m)) == last->uid) ip = Ctz(m);
      }
      if (ip < 0) return;
    }
    const int32_t ivc = ((rpi + ip) << h.vshift) | s.nom_v[ip];
    if (in_band_ && (op != h.pe || (forking_ && fork_n_[ivc] > 1))) {
      if (InBandRefuses(rpi, op, ivc, now)) {
        req &= ~(1u << ip);  // another requester of a wide ejection may still go
        continue;
      }
      InBandSends(rpi, op, ivc, now);  // before Traverse(): a fork's tail releases its branches
    }
    if (bubble) *last = {front_msg(ip), now};
    req &= ~(1u << ip);
    const int v = s.nom_v[ip];
    h.rr[rpi + op].out = static_cast<uint8_t>(ip + 1);
    h.rr[rpi + ip].in = static_cast<uint8_t>(v + 1);
    Traverse(h, r, rpi + ip, ip, v, op, now, s);
  }
}

// A visible head without an output VC: route it if new, then (once its hop pipeline is
// over) ask the selection for an output VC and queue a VC-allocation request.
UKAI_INLINE void Fabric::HandleHead(const Hot& h, int32_t r, int32_t ivc, int64_t now, Scratch& s) {
  InVc& q = h.in[ivc];
  if (q.state == kRouted && q.ready > now) return;  // still in its hop pipeline
  const int ip = (ivc >> h.vshift) & ((1 << h.pshift) - 1);
  const int v = ivc & ((1 << h.vshift) - 1);
  if (q.state == kBlocked) {
    // Nothing freed since the last failed selection: it would fail again.
    if (q.aux == static_cast<int32_t>(h.epoch[r])) return;
  } else {
    const Flit& f = h.buf[(static_cast<size_t>(ivc) << h.dshift) + q.head];
    if (q.state == kIdle && !RouteFromCache(h, r, ivc, f, now) &&
        !RouteFast(h, r, ip, v, ivc, f, now) && RouteHead(r, ip, v, ivc, f, now, h.route) &&
        h.table_ports != 0) {
      const uint32_t port = 1u << (v % h.table_ports);
      if ((s.table_used & port) != 0) {  // the VC group's table port is taken: next cycle
        q.state = kIdle;
        return;
      }
      s.table_used |= port;
    }
    if (q.ready > now) {  // just routed: the head loop skips it until its ready cycle
      if (q.ready - now < kPipeSlots) {
        h.masks[ivc >> h.mshift].pipe |= uint64_t{1} << (ivc & ((1 << h.mshift) - 1));
        h.pipe_ring[q.ready & (kPipeSlots - 1)].push_back(ivc);
      }
      return;
    }
  }
  if (__builtin_expect(h.extras, false) && saf_ != 0 && !MaySelect(r, ivc, now)) return;
  if (__builtin_expect(h.extras, false) && forking_ && fork_n_[ivc] != 0) {
    ForkAcquire(r, ivc);
    return;
  }
  if (h.booksim_va) {
    RequestBooksim(h, r, ivc, now, s);
    return;
  }
  const Flit& f = h.buf[(static_cast<size_t>(ivc) << h.dshift) + q.head];
  const int32_t ovc = SelectOutput(h, r, ivc, f, now);
  if (ovc >= 0) {
    s.va[s.nva++] = {ivc, ovc, ip, v};
    return;
  }
  if (max_credit_ && !reroute_) {
    q.state = kBlocked;
    q.aux = static_cast<int32_t>(h.epoch[r]);
  }
  if (__builtin_expect(h.extras, false) && saf_ != 0) StoreAfterFailure(r, ivc);
}

// RouteHead() for a head whose PureRoute() answer is kept: one candidate, no table, no
// fork (RouteHead() handles the head at its destination, to a dead node or at a terminal).
UKAI_INLINE bool Fabric::RouteFromCache(const Hot& h, int32_t r, int32_t ivc, const Flit& f,
                                        int64_t now) {
  if (!cache_routes_) return false;
  const int32_t dst = (*messages_)[f.msg()].dst;
  if (dst == r) return RouteToSink(h, r, ivc, now);
  if (dst < 0 || dead_[dst] != 0 || !terminal_.empty()) return false;
  const uint64_t c = route_cache_[static_cast<size_t>(r) * nodes_ + dst];
  if (c == 0) return false;
  InVc& q = h.in[ivc];
  q.cand_count = 1;
  q.cand_port = static_cast<uint8_t>((c & 0xffff) - 1);
  q.cand_mask = static_cast<uint32_t>(c >> 32);
  q.ready = now + hop_cycles_ - 1;
  q.state = kRouted;
  return true;
}

// RouteHead() for a head at its destination (sink_fast_): the ejection port's VCs, no table.
UKAI_INLINE bool Fabric::RouteToSink(const Hot& h, int32_t r, int32_t ivc, int64_t now) {
  if (!sink_fast_ || !terminal_.empty()) return false;
  InVc& q = h.in[ivc];
  q.cand_count = 1;
  q.cand_port = static_cast<uint8_t>(h.pe);
  q.cand_mask = valid_vcs_[(r << h.pshift) | h.pe];
  q.ready = now + hop_cycles_ - 1;
  q.state = kRouted;
  return true;
}

// RouteHead() for a head whose routing answers through RouteOne() (route_one_): the same
// one candidate, no table, no fork; false (nothing changed but the message's routing state,
// which Route() sets alike) where RouteHead() must route it: at its destination, to a
// dead node, at a terminal, or with no live candidate.
UKAI_INLINE bool Fabric::RouteFast(const Hot& h, int32_t r, int ip, int v, int32_t ivc,
                                   const Flit& f, int64_t now) {
  if (!route_one_) return false;
  Message& m = (*messages_)[f.msg()];
  const int32_t dst = m.dst;
  if (dst == r) return RouteToSink(h, r, ivc, now);
  if (dst < 0 || dead_[dst] != 0 || !terminal_.empty()) return false;
  const uint64_t c = routing_->RouteOne(r, ip, v, m.src, dst, now, &m.routing_state);
  const int port = static_cast<int>(c & 0xffffu) - 1;
  if (port < 0 || port >= h.pe) return false;
  const uint32_t mask = static_cast<uint32_t>(c >> 32) & valid_vcs_[(r << h.pshift) | port];
  if (mask == 0) return false;
  InVc& q = h.in[ivc];
  q.cand_count = 1;
  q.cand_port = static_cast<uint8_t>(port);
  q.cand_mask = mask;
  q.ready = now + hop_cycles_ - 1;
  q.state = kRouted;
  return true;
}

void Fabric::CountArrivals(Lane& lane, const std::vector<int32_t>& due, int64_t now,
                           uint8_t* active) {
  const Hot& h = hot_;
  const int rshift = h.pshift + h.vshift;
  const int64_t next = now + 1;  // the cycle they arrive in
  // The pipe ring must be cleared up to `now` (ClearPipes() of the next cycle then clears
  // only slot `next`) and the routing must need neither the cycle's table ports nor a free
  // header unit.
  const bool route = (cache_routes_ || route_one_) && h.table_ports == 0 && !h.shared_headers &&
                     lane.pipes_cleared == now;
  for (const int32_t d : due) {
    InVc& q = h.in[d];
    Masks& mk = h.masks[d >> h.mshift];
    const uint64_t bit = uint64_t{1} << (d & ((1 << h.mshift) - 1));
    mk.nonempty |= bit;
    mk.visible |= bit;
    active[d >> rshift] = 1;
    // Evaluate() already wrote the flit into its slot; it is the front if the VC was empty.
    if (q.count++ != 0 || !route || q.state != kIdle || ((mk.active | mk.pipe) & bit) != 0) {
      continue;
    }
    const int32_t r = d >> rshift;
    const Flit& f = h.buf[(static_cast<size_t>(d) << h.dshift) + q.head];
    const int ip = (d >> h.vshift) & ((1 << h.pshift) - 1);
    const int v = d & ((1 << h.vshift) - 1);
    // Else the head loop routes it (again: both give the same answer for the same cycle).
    if (!RouteFromCache(h, r, d, f, next) && !RouteFast(h, r, ip, v, d, f, next)) continue;
    if (q.ready > next && q.ready - next < kPipeSlots) {
      mk.pipe |= bit;
      lane.pipe_ring[static_cast<size_t>(q.ready & (kPipeSlots - 1))].push_back(d);
    }
  }
}

// BookSim2's VC allocators, a head's requests: inline for one candidate on a simple router
// (fabric.h: booksim_simple_), else RequestBooksimVcs(). The same free VCs: not owned and
// not freed too recently (no credits needed on wormhole VCs that are not atomic).
UKAI_INLINE void Fabric::RequestBooksim(const Hot& h, int32_t r, int32_t ivc, int64_t now,
                                        Scratch& s) {
  InVc& q = h.in[ivc];
  if (!booksim_simple_ || q.cand_count != 1) {
    s.bs_generic = true;  // it may request several candidates
    RequestBooksimVcs(h.lane, r, ivc, now);
    return;
  }
  const int32_t local = q.cand_port << h.vshift;  // router-local index of its port's VC 0
  const int32_t port_base = (r << (h.pshift + h.vshift)) + local;
  const Masks& mk = h.masks[port_base >> h.mshift];
  const int shift = port_base & ((1 << h.mshift) - 1);
  // (A mask, not a branch: whether a VC was freed lately follows the traffic.)
  const uint64_t recent = mk.freed & (uint64_t{0} - static_cast<uint64_t>(mk.freed_at + 2 > now));
  const auto unowned = static_cast<uint32_t>(~mk.owned >> shift) & q.cand_mask;
  const uint32_t free = unowned & ~static_cast<uint32_t>(recent >> shift);
  // A VC freed too recently: try again next cycle.
  const bool freeing = (unowned & static_cast<uint32_t>(recent >> shift)) != 0;
  if (free != 0) {
    const int ip = (ivc >> h.vshift) & ((1 << h.pshift) - 1);
    const int v = ivc & ((1 << h.vshift) - 1);
    h.bs_req->push_back({ivc, static_cast<int16_t>(ip), static_cast<int16_t>(v), 0,
                         static_cast<int16_t>(q.cand_port), free});
    const uint64_t named = uint64_t{free} << (local & 63);  // meaningful up to 64 VCs
    s.bs_multi |= s.bs_any & named;
    s.bs_any |= named;
  } else if (!freeing) {
    q.state = kBlocked;
    q.aux = static_cast<int32_t>(h.epoch[r]);
  }
}

// The requests of router r: none, one (its input VC gets the VC nearest its pointer, as
// from both allocators) or more (MatchBooksimVcs()).
// With several requests, one per input VC (none came through RequestBooksimVcs()) on a
// router of up to 64 VCs, and, for islip, no output VC named by two of them, each input VC
// also gets its nearest VC from both allocators (MatchBooksimVcs() finds the same).
UKAI_INLINE void Fabric::MatchBooksim(const Hot& h, int32_t r, Scratch& s) {
  std::vector<BsReq>& req = *h.bs_req;
  const bool generic = s.bs_generic || h.generic_match;
  const uint64_t multi = h.va_unique ? s.bs_multi : 0;
  s.bs_any = s.bs_multi = 0;
  s.bs_generic = false;
  if (req.empty()) return;
  const int32_t rbase = r << (h.pshift + h.vshift);
  if (req.size() > 1) {
    if (generic || h.pshift + h.vshift > 6) {
      MatchBooksimVcs(h.lane, r, s);
      return;
    }
    if (multi != 0) {
      MatchIslipContested(h.lane, r, multi, s);
      return;
    }
    for (const BsReq& q : req) {
      const int32_t port_base = q.port << h.vshift;
      const int32_t lo = port_base + NearestVc(q.mask, port_base, va_accept_[q.ivc], h.vshift);
      s.va[s.nva++] = {q.ivc, rbase + lo, q.ip, q.v};
    }
    req.clear();
    return;
  }
  const BsReq& q = req[0];
  const int32_t port_base = q.port << h.vshift;
  const int32_t lo = port_base + NearestVc(q.mask, port_base, va_accept_[q.ivc], h.vshift);
  s.va[s.nva++] = {q.ivc, rbase + lo, q.ip, q.v};
  req.clear();
}

// The head of `ivc` (network input port, not for the ejection port) waits for its whole
// message once it is stored: its tail is at offset length - 1 and has arrived. The
// injection port (the source's own buffer) and heads leaving by the ejection port (the
// destination takes the flits as they come) never store.
__attribute__((noinline)) bool Fabric::MaySelect(int32_t r, int32_t ivc, int64_t now) {
  const Hot& h = hot_;
  InVc& q = h.in[ivc];
  const int ip = (ivc >> h.vshift) & ((1 << h.pshift) - 1);
  if (ip == h.pe || (q.cand_count == 1 && q.cand_port == h.pe)) return true;
  if (q.stored == 0) {
    if (saf_ != kSafAlways) return true;  // vct-saf: a first try to cut through
    q.stored = 1;
    ++stored_count_[r];
  }
  const Flit* vb = h.buf + (static_cast<size_t>(ivc) << h.dshift);
  const int32_t length = (*messages_)[vb[q.head].msg()].length;
  if (q.count < length) return false;
  return vb[(q.head + length - 1) & h.slot_mask].ArrivedBy(now);
}

// vct-saf: a head whose first selection failed is stored whole before it goes on.
__attribute__((noinline)) void Fabric::StoreAfterFailure(int32_t r, int32_t ivc) {
  const Hot& h = hot_;
  InVc& q = h.in[ivc];
  const int ip = (ivc >> h.vshift) & ((1 << h.pshift) - 1);
  if (q.stored != 0 || ip == h.pe || (q.cand_count == 1 && q.cand_port == h.pe)) return;
  q.stored = 1;
  ++stored_count_[r];
}

// The output VC (global index) the selection picks for the routed head `f` of input VC
// `ivc`, or -1 if none of its candidates is free. A routing that asks to see every blocked
// cycle is called again first.
UKAI_INLINE int32_t Fabric::SelectOutput(const Hot& h, int32_t r, int32_t ivc, const Flit& f,
                                         int64_t now) {
  const Message& m = (*messages_)[f.msg()];
  // A head that must first pay a table delay selects nothing (no early return: it would
  // bloat the inlined hot path).
  bool go = true;
  if (reroute_ && now > h.in[ivc].ready && m.dst != r) {
    go = ReRouteBlocked(h, r, (ivc >> h.vshift) & ((1 << h.pshift) - 1),
                        ivc & ((1 << h.vshift) - 1), ivc, f, now);
  }
  const int32_t base = r << (h.pshift + h.vshift);
  const OutputVcView view{h.out + base, 1 << h.vshift, atomic_vcs_, depth_};
  const InVc& q = h.in[ivc];
  const int count = go ? q.cand_count : 0;
  const RouteCandidate one{q.cand_port, 0, q.cand_mask};
  const RouteCandidate* cands = count == 1 ? &one : &cand_[static_cast<size_t>(ivc) * cand_stride_];
  const int32_t needed = vct_ ? m.length : 0;
  int32_t local;
  if (!max_credit_) {
    local = selection_->Select(cands, count, view, needed);
  } else if (atomic_vcs_ != 0) {
    local = SelectMaxCredit<true>(cands, count, view, needed);
  } else {
    local = SelectMaxCredit<false>(cands, count, view, needed);
  }
  return local < 0 ? -1 : base + local;
}

// Re-routes a blocked head with the time blocked so far (keeps the ready time). A re-route
// that changes the message's state (e.g. starts deadlock recovery) and reads a table pays
// the table delay again; otherwise the ready time stands. False: the head must wait for
// that delay before it selects. Not inlined: it keeps SelectOutput() small for the
// routings that never re-route.
__attribute__((noinline)) bool Fabric::ReRouteBlocked(const Hot& h, int32_t r, int ip, int v,
                                                      int32_t ivc, const Flit& f, int64_t now) {
  const Message& m = (*messages_)[f.msg()];
  const int64_t ready = in_[ivc].ready;
  const uint32_t state = m.routing_state;
  RouteHead(r, ip, v, ivc, f, now, h.route);
  const bool new_lookup = h.route->table_lookup() && m.routing_state != state;
  in_[ivc].ready = new_lookup ? now + table_lookup_cycles_ : ready;
  return !(new_lookup && table_lookup_cycles_ > 0);
}

// VC allocation: per output VC, round-robin among the input VCs that chose it. A port
// whose granted VC can bid for the switch at once nominates again.
UKAI_INLINE void Fabric::AllocateVcs(const Hot& h, int32_t r, int32_t rpi, Scratch& s) {
  const int rshift = h.pshift + h.vshift;
  const int32_t rbase = r << rshift;
  const int32_t lmask = (1 << rshift) - 1;
  uint32_t renominate = 0;
  for (int i = 0; i < s.nva; ++i) {
    const VaReq& q = s.va[i];
    // Granted to a competitor earlier in this loop (islip's matching names distinct free
    // output VCs: never).
    if (!h.va_unique && h.out[q.ovc].owner >= 0) continue;
    if (!h.va_unique) {
      const int32_t rr = va_rr_[q.ovc];
      const int32_t prio = (q.ivc - rbase - rr) & lmask;
      bool wins = true;
      for (int j = 0; j < s.nva && wins; ++j) {
        if (j == i || s.va[j].ovc != q.ovc) continue;
        wins = ((s.va[j].ivc - rbase - rr) & lmask) > prio;
      }
      if (!wins) continue;
    }
    if (GrantVc(h, r, rpi, q)) renominate |= 1u << q.ip;
  }
  for (; renominate != 0; renominate &= renominate - 1) {
    const int ip = Ctz(renominate);
    if ((s.nominated >> ip) & 1u) {  // withdraw the port's earlier request
      const int op = s.nom_op[ip];
      s.out_req[op] &= ~(1u << ip);
      if (s.out_req[op] == 0) s.out_mask &= ~(1u << op);
    }
    const int32_t ivc0 = (rpi + ip) << h.vshift;
    const Masks& mk = h.masks[ivc0 >> h.mshift];
    const uint64_t bits = (mk.visible & mk.credit) >> (ivc0 & ((1 << h.mshift) - 1));
    Nominate(h, rpi, ip, static_cast<uint32_t>(bits & ((uint64_t{1} << (1 << h.vshift)) - 1)), s);
  }
}

// Output VC q.ovc to input VC q.ivc (AllocateVcs()); true when the VC has a credit (the
// input VC may bid for the switch at once).
UKAI_INLINE bool Fabric::GrantVc(const Hot& h, int32_t r, int32_t rpi, const VaReq& q) {
  const int rshift = h.pshift + h.vshift;
  const int32_t rbase = r << rshift;
  const int32_t lmask = (1 << rshift) - 1;
  const uint32_t vmask = (1u << h.vshift) - 1;
  InVc& in = h.in[q.ivc];
  h.out[q.ovc].owner = q.ivc;
  h.masks[q.ovc >> h.mshift].owned |= uint64_t{1} << (q.ovc & ((1 << h.mshift) - 1));
  in.out = q.ovc;
  if (__builtin_expect(h.extras, false)) in.stored = 0;
  const int op = (q.ovc - rbase) >> h.vshift;
  // Both values read, then one chosen (a select: ejection or not follows the traffic).
  const int32_t down = h.down_ivc[rpi | op] + static_cast<int32_t>(q.ovc & vmask);
  in.aux = op == h.pe ? r : down;
  in.remote = 0;
  if (__builtin_expect(h.partitioned, false)) in.remote = h.remote[rpi | op] | h.remote[rpi | q.ip];
  in.state = kRouted;
  Masks& mk = h.masks[q.ivc >> h.mshift];
  const uint64_t bit = uint64_t{1} << (q.ivc & ((1 << h.mshift) - 1));
  mk.active |= bit;
  va_rr_[q.ovc] = (q.ivc - rbase + 1) & lmask;
  if (h.booksim_va) {
    va_accept_[q.ivc] = (q.ovc - rbase + 1) & lmask;
  }
  if (h.out[q.ovc].credits > 0) {
    mk.credit |= bit;
    return true;
  }
  return false;
}

// BookSim2's VC allocators, a router whose one request (one candidate) comes from an input
// port that nominated nothing, for an output port no input port nominated, and whose VC has
// a credit: both allocators give it its nearest VC (MatchBooksim()), and the switch
// nomination AllocateVcs() would make is its own (the port's only VC with a credit). Made
// here directly; false (nothing changed) when the router is not such a case.
UKAI_INLINE bool Fabric::AllocateLone(const Hot& h, int32_t r, int32_t rpi, Scratch& s) {
  std::vector<BsReq>& req = *h.bs_req;
  if (req.size() != 1 || s.bs_generic || h.generic_match) return false;
  const BsReq& b = req[0];
  if (((s.nominated >> b.ip) & 1u) != 0 || s.out_req[b.port] != 0) return false;
  const int32_t port_base = b.port << h.vshift;
  const int32_t ovc = (r << (h.pshift + h.vshift)) + port_base +
                      NearestVc(b.mask, port_base, va_accept_[b.ivc], h.vshift);
  if (h.out[ovc].credits <= 0) return false;
  const int ip = b.ip, v = b.v, op = b.port;
  GrantVc(h, r, rpi, {b.ivc, ovc, ip, v});
  req.clear();
  s.bs_any = s.bs_multi = 0;
  s.nom_v[ip] = static_cast<uint8_t>(v);
  s.nom_op[ip] = static_cast<uint8_t>(op);
  s.nominated |= 1u << ip;
  s.out_req[op] = 1u << ip;
  s.out_mask |= 1u << op;
  return true;
}

// Moves the front flit of input VC (ip, v) through the switch to output port op: writes
// it into its downstream slot (or stages the ejection) with the credit it frees upstream,
// updates the VC, and releases the output VC after a tail.
UKAI_INLINE void Fabric::Traverse(const Hot& h, int32_t r, int32_t pi, int ip, int v, int op,
                                  int64_t now, Scratch& s) {
  const int32_t ivc = (pi << h.vshift) | v;
  InVc& q = h.in[ivc];
  Masks& mk = h.masks[ivc >> h.mshift];
  Flit* vb = h.buf + (static_cast<size_t>(ivc) << h.dshift);
  const Flit* src = vb + q.head;
  const bool head = src->head(), tail = src->tail();
  const int32_t credit = q.up;  // negative for the injection port
  OutputVcState& o = h.out[q.out];
  const uint64_t bit = uint64_t{1} << (ivc & ((1 << h.mshift) - 1));
  // Copy the flit whole, then set its arrival (keeps it one 16-byte move).
  if (__builtin_expect(h.extras, false) && op == h.pe && !eject_bounded_.empty() &&
      eject_bounded_[r] != 0 && --o.credits == 0) {
    mk.credit &= ~bit;
  }
  if (__builtin_expect(q.remote != 0, 0)) {  // the flit or its credit crosses a boundary
    Flit f = *src;
    if (op == h.pe) {
      f.set_arrival(now + 1);
      StageBoundary(h, s, r, -1, 0, f, credit);
    } else {
      f.set_arrival(now + 1 +
                    (__builtin_expect(h.extras, false) && h.link_port != nullptr
                         ? h.link_port[(r << h.pshift) | op]
                         : h.link));
      StageBoundary(h, s, r, q.aux, o.tail, f, credit);  // writes f into its slot or stages it
      o.tail = static_cast<int32_t>((static_cast<uint32_t>(o.tail) + 1) & h.slot_mask);
      if (--o.credits == 0) mk.credit &= ~bit;
      if (head) ++(*messages_)[f.msg()].hops;
    }
  } else if (op == h.pe) {
    Ejected& e = h.ej[s.nej++];
    e.flit = *src;
    e.flit.set_arrival(now + 1);
    e.node = r;
    e.credit = credit;
  } else {
    Flit& d = h.buf[(static_cast<size_t>(q.aux) << h.dshift) + o.tail];
    d = *src;
    d.set_arrival(now + 1 +
                  (__builtin_expect(h.extras, false) && h.link_port != nullptr
                       ? h.link_port[(r << h.pshift) | op]
                       : h.link));
    o.tail = static_cast<int32_t>((static_cast<uint32_t>(o.tail) + 1) & h.slot_mask);
    if (--o.credits == 0) mk.credit &= ~bit;
    h.tx[s.ntx++] = {q.aux, credit};
    if (head) ++(*messages_)[d.msg()].hops;
  }
  if (head && observer_)
    observer_({now, vb[q.head].msg(), r, ip, v, op, q.out & ((1 << h.vshift) - 1)});
  if (__builtin_expect(h.extras, false) && forking_ && fork_n_[ivc] != 0) {
    const uint64_t counts = CopyToBranches(r, ivc, *src, now, s.ntx, s.nej, h.lane);
    s.ntx = static_cast<int>(counts >> 32);
    s.nej = static_cast<int>(counts & 0xffffffffu);
  }
  q.head = static_cast<uint16_t>((q.head + 1) & h.slot_mask);
  if (--q.count == 0) {
    mk.nonempty &= ~bit;
    mk.visible &= ~bit;
  } else if (!h.counted_arrived && !vb[q.head].ArrivedBy(now + 1)) {
    mk.visible &= ~bit;  // the next flit is still on its way
  }
  if (tail) {
    o.owner = -1;
    Masks& om = h.masks[q.out >> h.mshift];
    const uint64_t obit = uint64_t{1} << (q.out & ((1 << h.mshift) - 1));
    om.owned &= ~obit;
    // BookSim2's VC allocators: a terminal (BookSim2's source) reuses its VC at once; a
    // router a cycle later.
    if (h.booksim_va && (terminal_.empty() || terminal_[static_cast<size_t>(r)] == 0)) {
      // The mask of cycle `now` (cleared first when it was another cycle's), without a branch.
      om.freed = (om.freed & (uint64_t{0} - static_cast<uint64_t>(om.freed_at == now))) | obit;
      om.freed_at = now;
    }
    if (__builtin_expect(h.extras, false) && forking_ && fork_n_[ivc] != 0) ReleaseFork(r, ivc);
    q.state = kIdle;
    mk.active &= ~bit;
    mk.credit &= ~bit;
    ++h.epoch[r];  // an output VC is free again
  }
}

// Stages a flit whose downstream VC (`dst`; ejection when negative) or whose credit (the
// upstream output VC `credit`) belongs to another partition: each part goes to its own
// partition's list, this lane's or an outbox.
__attribute__((noinline)) void Fabric::StageBoundary(const Hot& h, Scratch& s, int32_t router,
                                                     int32_t dst, int32_t slot, const Flit& flit,
                                                     int32_t credit) {
  Lane& lane = lanes_[static_cast<size_t>(h.lane)];
  auto stage = [&](int32_t part, const BoundaryEntry& e) {
    std::vector<BoundaryEntry>& box = lane.out[static_cast<size_t>(part)];
    if (box.empty()) lane.out_used.push_back(part);
    box.push_back(e);
  };
  const bool credit_out = credit >= 0 && owner_[credit >> rshift_] != lane.part;
  const int32_t local_credit = credit_out ? -1 : credit;
  if (credit_out) stage(owner_[credit >> rshift_], {-1, credit, 0, Flit{}});
  if (dst < 0) {
    Ejected& e = h.ej[s.nej++];
    e.flit = flit;
    e.node = router;
    e.credit = local_credit;
  } else if (owner_[dst >> rshift_] != lane.part) {
    // Only the entry: the commit of the partition holding `dst` writes the flit into its
    // slot. Written here, the slot's cache line (which that partition's thread reads every
    // cycle) would move between the cores twice per boundary flit.
    stage(owner_[dst >> rshift_], {dst, -1, slot, flit});
    ++lane.boundary_flits;
    if (local_credit >= 0) stage(lane.part, {-1, local_credit, 0, Flit{}});
  } else {
    h.buf[(static_cast<size_t>(dst) << h.dshift) + slot] = flit;
    h.tx[s.ntx++] = {dst, local_credit};
  }
}

}  // namespace ukai::sim
