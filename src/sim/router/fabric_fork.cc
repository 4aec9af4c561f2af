// Forks: a head whose routing answers RouteResult::Fork() is copied to every candidate
// port (hierarchical multicast: the switch copies a packet to several outputs).
//
// - Acquisition: the branches are taken in candidate order, one port at a time, each whole:
//   every VC of the port must be free (no other message holds one), and one VC of the
//   candidate's mask must have room for the whole message (virtual cut-through); the fork
//   then owns every VC of the port, so no other input sends on it while the fork does. A
//   branch taken is kept while the next ones are awaited. The routing orders the branches
//   so that this hold-and-wait closes no cycle (source routing: the ejection first, then
//   the up channels, then the down channels by the up*/down* order of their far end).
// - Once every branch is held, the input VC is active on the first branch like any routed
//   head; each flit that traverses is written to the other branches in the same cycle (room
//   was reserved, and no one else uses those ports), each copy counted in flits_copied().
// - After the tail every branch's VCs are released.
// These run in Evaluate() of the fork's own router and touch only its state and staging.
#include "sim/router/fabric.h"

namespace ukai::sim {

void Fabric::ForkAcquire(int32_t r, int32_t ivc) {
  const Hot& h = hot_;
  InVc& q = h.in[ivc];
  const int n = fork_n_[ivc];
  const RouteCandidate* cands = &cand_[static_cast<size_t>(ivc) * cand_stride_];
  const Flit& f = h.buf[(static_cast<size_t>(ivc) << h.dshift) + q.head];
  const int32_t needed = (*messages_)[f.msg()].length;
  const int32_t base = r << (h.pshift + h.vshift);
  ForkBranch* branches = &fork_[static_cast<size_t>(ivc) * kMaxBranches];
  int got = fork_got_[ivc];
  while (got < n) {
    const RouteCandidate& c = cands[got];
    const int32_t pbase = base + (c.port << h.vshift);
    const uint32_t valid = valid_vcs_[Pi(r, c.port)];
    bool idle = true;
    for (uint32_t m = valid; m != 0 && idle; m &= m - 1) {
      idle = h.out[pbase + __builtin_ctz(m)].owner < 0;
    }
    int best = -1;
    for (uint32_t m = idle ? (c.vc_mask & valid) : 0u; m != 0; m &= m - 1) {
      const int v = __builtin_ctz(m);
      if (h.out[pbase + v].credits >= needed &&
          (best < 0 || h.out[pbase + v].credits > h.out[pbase + best].credits)) {
        best = v;
      }
    }
    if (best < 0) break;
    for (uint32_t m = valid; m != 0; m &= m - 1) SetOwner(pbase + __builtin_ctz(m), ivc);
    branches[got] = {pbase + best, c.port == h.pe ? r : h.down_ivc[Pi(r, c.port)] + best};
    ++got;
  }
  fork_got_[ivc] = static_cast<uint8_t>(got);
  if (got < n) {
    if (max_credit_ && !reroute_) {
      q.state = kBlocked;
      q.aux = static_cast<int32_t>(h.epoch[r]);
    }
    if (saf_ != 0) StoreAfterFailure(r, ivc);
    return;
  }
  q.out = branches[0].ovc;
  q.aux = branches[0].aux;
  q.state = kRouted;
  q.stored = 0;
  Masks& mk = h.masks[ivc >> h.mshift];
  const uint64_t bit = uint64_t{1} << (ivc & ((1 << h.mshift) - 1));
  mk.active |= bit;
  if (h.out[q.out].credits > 0) mk.credit |= bit;
}

uint64_t Fabric::CopyToBranches(int32_t r, int32_t ivc, Flit f, int64_t now, int ntx, int nej,
                                int lane) {
  const Hot& h = hot_;
  // Forks need a Fabric of one partition (Network::CheckPartitionable()): every branch's
  // downstream router is this lane's.
  Transfer* tx = lanes_[static_cast<size_t>(lane)].tx.data();
  Ejected* ej = lanes_[static_cast<size_t>(lane)].ej.data();
  const ForkBranch* branches = &fork_[static_cast<size_t>(ivc) * kMaxBranches];
  const int n = fork_n_[ivc];
  const uint32_t pmask = (1u << h.pshift) - 1;
  for (int i = 1; i < n; ++i) {
    const ForkBranch& b = branches[i];
    const int op = static_cast<int>((static_cast<uint32_t>(b.ovc) >> h.vshift) & pmask);
    if (op == h.pe) {
      Ejected& e = ej[nej++];
      e.flit = f;
      e.flit.set_arrival(now + 1);
      e.node = r;
      e.credit = -1;
    } else {
      OutputVcState& o = h.out[b.ovc];
      Flit& d = h.buf[(static_cast<size_t>(b.aux) << h.dshift) + o.tail];
      d = f;
      d.set_arrival(now + 1 +
                    (h.link_port == nullptr ? h.link : h.link_port[(r << h.pshift) | op]));
      o.tail = static_cast<int32_t>((static_cast<uint32_t>(o.tail) + 1) & h.slot_mask);
      --o.credits;
      tx[ntx++] = {b.aux, -1};
      if (f.head()) ++(*messages_)[f.msg()].hops;
    }
    if (f.head() && observer_) {
      const int ip = static_cast<int>((static_cast<uint32_t>(ivc) >> h.vshift) & pmask);
      observer_(
          {now, f.msg(), r, ip, ivc & ((1 << h.vshift) - 1), op, b.ovc & ((1 << h.vshift) - 1)});
    }
  }
  copied_count_[r] += n - 1;
  return static_cast<uint64_t>(ntx) << 32 | static_cast<uint32_t>(nej);
}

void Fabric::ReleaseFork(int32_t r, int32_t ivc) {
  const Hot& h = hot_;
  const ForkBranch* branches = &fork_[static_cast<size_t>(ivc) * kMaxBranches];
  const int32_t base = r << (h.pshift + h.vshift);
  const uint32_t pmask = (1u << h.pshift) - 1;
  for (int i = 0; i < fork_got_[ivc]; ++i) {
    const int port = static_cast<int>((static_cast<uint32_t>(branches[i].ovc) >> h.vshift) & pmask);
    const int32_t pbase = base + (port << h.vshift);
    for (uint32_t m = valid_vcs_[Pi(r, port)]; m != 0; m &= m - 1) {
      ClearOwner(pbase + __builtin_ctz(m));
    }
  }
  fork_n_[ivc] = 0;
  fork_got_[ivc] = 0;
}

bool Fabric::ForkHolds(int32_t ivc, int32_t ovc) const {
  if (!forking_) return false;
  const ForkBranch* branches = &fork_[static_cast<size_t>(ivc) * kMaxBranches];
  for (int i = 0; i < fork_got_[ivc]; ++i) {
    if ((branches[i].ovc >> vshift_) == (ovc >> vshift_)) return true;  // the same port
  }
  return false;
}

}  // namespace ukai::sim
