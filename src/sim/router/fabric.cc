#include "sim/router/fabric.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>

namespace ukai::sim {
namespace {

constexpr int32_t kEjectCredits = 1 << 30;  // the PE never back-pressures
constexpr int kMaxPorts = 32;

uint32_t LowMask(int n) { return n >= 32 ? ~0u : ((1u << n) - 1); }

// First set bit of `mask` at or after `start` (cyclically). `mask` != 0.
int PickRoundRobin(uint32_t mask, int start) {
  const uint32_t hi = start >= 32 ? 0u : (mask & (~0u << start));
  return std::countr_zero(hi != 0 ? hi : mask);
}

}  // namespace

Fabric::Fabric(const Topology& topology, const RouterConfig& config, const RoutingFunction* routing,
               const SelectionFunction* selection, MessagePool* messages)
    : routing_(routing),
      selection_(selection),
      messages_(messages),
      nodes_(topology.NumNodes()),
      ports_(topology.NumNetworkPorts() + 1),
      vstride_(std::max(config.vcs, config.pe_vcs)),
      depth_(config.vc_buffer_flits),
      hop_cycles_(config.hop_cycles),
      link_cycles_(config.link_cycles),
      table_lookup_cycles_(config.table_lookup_cycles),
      vct_(config.switching == Switching::kVirtualCutThrough),
      reroute_(routing->ReRouteWhileBlocked()),
      cand_stride_(2 * ports_) {
  const size_t nvc = static_cast<size_t>(nodes_) * ports_ * vstride_;
  const size_t npi = static_cast<size_t>(nodes_) * ports_;
  buf_.resize(nvc * depth_);
  head_.assign(nvc, 0);
  count_.assign(nvc, 0);
  state_.assign(nvc, kIdle);
  ready_.assign(nvc, 0);
  out_.assign(nvc, -1);
  out_port_.assign(nvc, 0);
  out_vc_.assign(nvc, 0);
  cand_count_.assign(nvc, 0);
  cand_.resize(nvc * cand_stride_);
  owner_.assign(nvc, -1);
  credits_.assign(nvc, 0);
  va_rr_.assign(nvc, 0);
  nonempty_.assign(npi, 0);
  valid_vcs_.assign(npi, 0);
  sa_in_rr_.assign(npi, 0);
  sa_out_rr_.assign(npi, 0);
  down_ivc_.assign(npi, -1);
  down_pi_.assign(npi, -1);
  down_router_.assign(npi, -1);
  down_port_.assign(npi, -1);
  up_ovc_.assign(npi, -1);
  port_mask_.assign(nodes_, 0);
  buffered_.assign(nodes_, 0);
  transfers_.reserve(npi);
  credit_returns_.reserve(npi);
  up_router_.assign(npi, -1);
  wake_.assign(nodes_, 0);

  for (int r = 0; r < nodes_; ++r) {
    for (int p = 0; p < ports_ - 1; ++p) {
      const PortRef far = topology.Neighbor(r, p);
      if (!far.valid()) continue;
      valid_vcs_[Pi(r, p)] = LowMask(config.vcs);
      down_ivc_[Pi(r, p)] = Ivc(far.node, far.port, 0);
      down_pi_[Pi(r, p)] = Pi(far.node, far.port);
      down_router_[Pi(r, p)] = far.node;
      down_port_[Pi(r, p)] = far.port;
      // Our input port p is fed by the neighbour's output port far.port.
      up_ovc_[Pi(r, p)] = Ivc(far.node, far.port, 0);
      up_router_[Pi(r, p)] = far.node;
      for (int v = 0; v < config.vcs; ++v) credits_[Ivc(r, p, v)] = depth_;
    }
    valid_vcs_[Pi(r, pe_port())] = LowMask(config.pe_vcs);
    down_ivc_[Pi(r, pe_port())] = -2;
    for (int v = 0; v < config.pe_vcs; ++v) credits_[Ivc(r, pe_port(), v)] = kEjectCredits;
  }
  InitHot();
}

void Fabric::InitHot() {
  hot_ = Hot{buf_.data(),      head_.data(),     count_.data(),       state_.data(),
             out_.data(),      out_port_.data(), out_vc_.data(),      owner_.data(),
             credits_.data(),  nonempty_.data(), port_mask_.data(),   buffered_.data(),
             down_ivc_.data(), down_pi_.data(),  down_router_.data(), down_port_.data(),
             up_ovc_.data(),   ports_,           ports_ - 1,          vstride_,
             depth_,           link_cycles_};
}

void Fabric::Inject(int32_t router, int vc, const Flit& flit) {
  PushFlit(Ivc(router, pe_port(), vc), Pi(router, pe_port()), router, pe_port(), vc, flit);
  wake_[router] = std::min(wake_[router], flit.arrival);
}

void Fabric::PushFlit(int32_t ivc, int32_t pi, int32_t router, int port, int v, const Flit& f) {
  const int depth = depth_;
  int slot = head_[ivc] + count_[ivc];
  if (slot >= depth) slot -= depth;
  buf_[static_cast<size_t>(ivc) * depth + slot] = f;
  ++count_[ivc];
  nonempty_[pi] |= 1u << v;
  port_mask_[router] |= 1u << port;
  ++buffered_[router];
}

void Fabric::RouteHead(int32_t r, int ip, int v, int32_t ivc, const Flit& f, int64_t now) {
  Message& m = (*messages_)[f.msg];
  RouteCandidate* out = &cand_[static_cast<size_t>(ivc) * cand_stride_];
  int n = 0;
  int extra = 0;
  if (m.dst == r) {
    out[n++] = {static_cast<int16_t>(pe_port()), 0, valid_vcs_[Pi(r, pe_port())]};
  } else {
    RouteRequest req;
    req.node = r;
    req.in_port = ip;
    req.in_vc = v;
    req.src = m.src;
    req.dst = m.dst;
    req.length_flits = m.length;
    req.now = now;
    req.blocked_cycles = 0;
    req.message_state = &m.routing_state;
    RouteResult result;
    result.Clear();
    routing_->Route(req, &result);
    assert(result.size() <= cand_stride_);
    for (int i = 0; i < result.size() && n < cand_stride_; ++i) {
      RouteCandidate c = result[i];
      if (c.port < 0 || c.port >= ports_ - 1) continue;
      c.vc_mask &= valid_vcs_[Pi(r, c.port)];
      if (c.vc_mask != 0) out[n++] = c;
    }
    if (result.table_lookup()) extra = table_lookup_cycles_;
  }
  cand_count_[ivc] = static_cast<uint8_t>(n);
  ready_[ivc] = now + hop_cycles_ - 1 + extra;
  state_[ivc] = kRouted;
}

int32_t Fabric::SelectOutput(int32_t r, int32_t ivc, const Flit& f, int64_t now) {
  const Message& m = (*messages_)[f.msg];
  if (routing_->ReRouteWhileBlocked() && now > ready_[ivc] && m.dst != r) {
    // Re-route with the time blocked so far (keeps the ready time).
    const int64_t ready = ready_[ivc];
    const int ip = (ivc / vstride_) % ports_;
    RouteHead(r, ip, ivc % vstride_, ivc, f, now);
    ready_[ivc] = ready;
  }
  const size_t base = static_cast<size_t>(r) * ports_ * vstride_;
  const OutputVcView view{&owner_[base], &credits_[base], vstride_};
  const int32_t local = selection_->Select(&cand_[static_cast<size_t>(ivc) * cand_stride_],
                                           cand_count_[ivc], view, vct_ ? m.length : 0);
  return local < 0 ? -1 : static_cast<int32_t>(base) + local;
}

__attribute__((always_inline)) inline void Fabric::Traverse(const Hot& h, int32_t r, int ip, int v,
                                                            int op, int64_t now) {
  const int32_t pi = r * h.ports + ip;
  const int32_t ivc = pi * h.vstride + v;
  Transfer& t = transfers_.emplace_back();
  t.flit = h.buf[static_cast<size_t>(ivc) * h.depth + h.head[ivc]];
  if (++h.head[ivc] == h.depth) h.head[ivc] = 0;
  if (--h.count[ivc] == 0) {
    h.nonempty[pi] &= ~(1u << v);
    if (h.nonempty[pi] == 0) h.port_mask[r] &= ~(1u << ip);
  }
  --h.buffered[r];
  const int32_t ovc = h.out[ivc];
  const int ovc_v = h.out_vc[ivc];
  if (ip != h.pe) credit_returns_.push_back({h.up_ovc[pi] + v, up_router_[pi]});
  const int32_t opi = r * h.ports + op;
  t.vc = static_cast<int16_t>(ovc_v);
  const bool head = t.flit.head;
  if (op == h.pe) {
    t.flit.arrival = now + 1;
    t.dst_ivc = -2;
    t.dst_router = r;
  } else {
    --h.credits[ovc];
    t.flit.arrival = now + 1 + h.link;
    t.dst_ivc = h.down_ivc[opi] + ovc_v;
    t.dst_pi = h.down_pi[opi];
    t.dst_router = h.down_router[opi];
    t.dst_port = static_cast<int16_t>(h.down_port[opi]);
    ++flit_hops_;
    if (head) ++(*messages_)[t.flit.msg].hops;
  }
  if (head && observer_) observer_({now, t.flit.msg, r, ip, v, op, ovc_v});
  if (t.flit.tail) {
    h.owner[ovc] = -1;
    h.state[ivc] = kIdle;
  }
}

void Fabric::Evaluate(int32_t r, int64_t now) {
  const uint32_t pmask = port_mask_[r];
  if (pmask == 0 || wake_[r] > now) return;
  const Hot h = hot_;
  // The earliest cycle this router can do anything without an outside event (a flit
  // arriving, a credit returning: Commit() and Inject() lower it for those).
  int64_t wake = std::numeric_limits<int64_t>::max();
  const int V = h.vstride;
  const int32_t rpi = r * h.ports;
  const int32_t rbase = rpi * V;
  uint32_t sa_cand[kMaxPorts];
  struct VaReq {
    int32_t ivc, ovc, local;
    int ip, v;
  };
  VaReq va[kMaxPorts * 32];
  int nva = 0;

  // Pass 1: route fresh heads, collect VC-allocation requests and switch candidates.
  for (uint32_t pm = pmask; pm != 0; pm &= pm - 1) {
    const int ip = std::countr_zero(pm);
    const int32_t pi = rpi + ip;
    uint32_t cand = 0;
    for (uint32_t m = h.nonempty[pi]; m != 0; m &= m - 1) {
      const int v = std::countr_zero(m);
      const int32_t ivc = pi * V + v;
      const Flit& f = h.buf[static_cast<size_t>(ivc) * h.depth + h.head[ivc]];
      if (f.arrival > now) {
        wake = std::min(wake, f.arrival);
        continue;
      }
      const uint8_t st = h.state[ivc];
      if (st == kActive) {
        if (h.credits[h.out[ivc]] > 0) cand |= 1u << v;
        continue;
      }
      if (st == kIdle) RouteHead(r, ip, v, ivc, f, now);
      if (ready_[ivc] > now) {
        wake = std::min(wake, ready_[ivc]);
        continue;
      }
      const int32_t ovc = SelectOutput(r, ivc, f, now);
      if (ovc >= 0) {
        va[nva++] = {ivc, ovc, ivc - rbase, ip, v};
      } else if (reroute_) {
        wake = now + 1;  // the routing wants to see every blocked cycle
      }
    }
    sa_cand[ip] = cand;
  }

  // VC allocation: per output VC, round-robin among the input VCs that chose it.
  if (nva > 0) {
    const int32_t nlocal = h.ports * V;
    for (int i = 0; i < nva; ++i) {
      const VaReq& q = va[i];
      if (h.owner[q.ovc] >= 0) continue;  // granted to a competitor earlier in this loop
      const int32_t rr = va_rr_[q.ovc];
      const int32_t prio = (q.local - rr + nlocal) % nlocal;
      bool wins = true;
      for (int j = 0; j < nva && wins; ++j) {
        if (j == i || va[j].ovc != q.ovc) continue;
        wins = (va[j].local - rr + nlocal) % nlocal > prio;
      }
      if (!wins) continue;
      h.owner[q.ovc] = q.ivc;
      h.out[q.ivc] = q.ovc;
      h.out_port[q.ivc] = static_cast<uint8_t>((q.ovc - rbase) / V);
      h.out_vc[q.ivc] = static_cast<uint8_t>((q.ovc - rbase) % V);
      h.state[q.ivc] = kActive;
      va_rr_[q.ovc] = (q.local + 1) % nlocal;
      if (h.credits[q.ovc] > 0) sa_cand[q.ip] |= 1u << q.v;
    }
  }

  // Switch allocation: input ports nominate one VC each, output ports grant one input.
  uint32_t out_req[kMaxPorts];
  uint32_t out_mask = 0;
  uint8_t nominee[kMaxPorts];
  for (uint32_t pm = pmask; pm != 0; pm &= pm - 1) {
    const int ip = std::countr_zero(pm);
    if (sa_cand[ip] == 0) continue;
    const int v = PickRoundRobin(sa_cand[ip], sa_in_rr_[rpi + ip]);
    nominee[ip] = static_cast<uint8_t>(v);
    const int op = h.out_port[(rpi + ip) * V + v];
    if ((out_mask >> op & 1u) == 0) {
      out_mask |= 1u << op;
      out_req[op] = 0;
    }
    out_req[op] |= 1u << ip;
  }
  for (uint32_t om = out_mask; om != 0; om &= om - 1) {
    const int op = std::countr_zero(om);
    const int ip = PickRoundRobin(out_req[op], sa_out_rr_[rpi + op]);
    const int v = nominee[ip];
    sa_out_rr_[rpi + op] = static_cast<uint8_t>(ip + 1 == h.ports ? 0 : ip + 1);
    sa_in_rr_[rpi + ip] = static_cast<uint8_t>(v + 1 == V ? 0 : v + 1);
    Traverse(h, r, ip, v, op, now);
  }
  // After a grant or a transfer the state changed: look again next cycle. Otherwise every
  // waiting VC waits for a time stamp (taken into `wake` above), a credit or an output VC
  // of this router being released (which only a transfer here can do).
  wake_[r] = (nva > 0 || out_mask != 0) ? now + 1 : wake;
}

void Fabric::Commit(int64_t now, uint8_t* in_active, std::vector<int32_t>* active,
                    std::vector<Ejection>* ejected) {
  if (transfers_.empty()) return;
  const int depth = depth_;
  Flit* __restrict buf = buf_.data();
  uint16_t* __restrict head = head_.data();
  uint16_t* __restrict count = count_.data();
  uint32_t* __restrict nonempty = nonempty_.data();
  uint32_t* __restrict port_mask = port_mask_.data();
  int32_t* __restrict buffered = buffered_.data();
  for (const Transfer& t : transfers_) {
    if (t.dst_ivc == -2) {
      ejected->push_back({t.dst_router, t.flit.arrival, t.flit});
      continue;
    }
    const int32_t ivc = t.dst_ivc;
    int slot = head[ivc] + count[ivc];
    if (slot >= depth) slot -= depth;
    buf[static_cast<size_t>(ivc) * depth + slot] = t.flit;
    ++count[ivc];
    nonempty[t.dst_pi] |= 1u << t.vc;
    port_mask[t.dst_router] |= 1u << t.dst_port;
    ++buffered[t.dst_router];
    wake_[t.dst_router] = std::min(wake_[t.dst_router], t.flit.arrival);
    if (!in_active[t.dst_router]) {
      in_active[t.dst_router] = 1;
      active->push_back(t.dst_router);
    }
  }
  flits_moved_ += static_cast<int64_t>(transfers_.size());
  transfers_.clear();
  int32_t* __restrict credits = credits_.data();
  for (const CreditReturn& c : credit_returns_) {
    ++credits[c.ovc];
    wake_[c.router] = std::min(wake_[c.router], now + 1);
  }
  credit_returns_.clear();
  last_move_cycle_ = now;
}

}  // namespace ukai::sim
