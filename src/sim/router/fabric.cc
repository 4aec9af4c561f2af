#include "sim/router/fabric.h"

#include <algorithm>
#include <bit>
#include <cassert>

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
  down_router_.assign(npi, -1);
  down_port_.assign(npi, -1);
  up_ovc_.assign(npi, -1);
  staged_.resize(npi);
  staged_credit_.assign(npi, -1);
  port_mask_.assign(nodes_, 0);
  buffered_.assign(nodes_, 0);
  staged_any_.assign(nodes_, 0);
  staged_routers_.reserve(nodes_);

  for (int r = 0; r < nodes_; ++r) {
    for (int p = 0; p < ports_ - 1; ++p) {
      const PortRef far = topology.Neighbor(r, p);
      if (!far.valid()) continue;
      valid_vcs_[Pi(r, p)] = LowMask(config.vcs);
      down_ivc_[Pi(r, p)] = Ivc(far.node, far.port, 0);
      down_router_[Pi(r, p)] = far.node;
      down_port_[Pi(r, p)] = far.port;
      // Our input port p is fed by the neighbour's output port far.port.
      up_ovc_[Pi(r, p)] = Ivc(far.node, far.port, 0);
      for (int v = 0; v < config.vcs; ++v) credits_[Ivc(r, p, v)] = depth_;
    }
    valid_vcs_[Pi(r, pe_port())] = LowMask(config.pe_vcs);
    down_ivc_[Pi(r, pe_port())] = -2;
    for (int v = 0; v < config.pe_vcs; ++v) credits_[Ivc(r, pe_port(), v)] = kEjectCredits;
  }
}

void Fabric::Inject(int32_t router, int vc, const Flit& flit) {
  PushFlit(Ivc(router, pe_port(), vc), router, pe_port(), vc, flit);
}

void Fabric::PushFlit(int32_t ivc, int32_t router, int port, int v, const Flit& f) {
  int slot = head_[ivc] + count_[ivc];
  if (slot >= depth_) slot -= depth_;
  buf_[static_cast<size_t>(ivc) * depth_ + slot] = f;
  ++count_[ivc];
  nonempty_[Pi(router, port)] |= 1u << v;
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

void Fabric::Evaluate(int32_t r, int64_t now) {
  uint32_t pmask = port_mask_[r];
  if (pmask == 0) return;
  uint32_t sa_cand[kMaxPorts];
  struct VaReq {
    int32_t ivc, ovc, local;
    int ip, v;
  };
  VaReq va[kMaxPorts * 32];
  int nva = 0;
  const int32_t rbase = r * ports_ * vstride_;

  // Pass 1: route fresh heads, collect VC-allocation requests and switch candidates.
  for (uint32_t pm = pmask; pm != 0; pm &= pm - 1) {
    const int ip = std::countr_zero(pm);
    const int32_t pi = Pi(r, ip);
    uint32_t cand = 0;
    for (uint32_t m = nonempty_[pi]; m != 0; m &= m - 1) {
      const int v = std::countr_zero(m);
      const int32_t ivc = pi * vstride_ + v;
      const Flit& f = buf_[static_cast<size_t>(ivc) * depth_ + head_[ivc]];
      if (f.arrival > now) continue;
      uint8_t st = state_[ivc];
      if (st == kIdle) {
        RouteHead(r, ip, v, ivc, f, now);
        st = kRouted;
      }
      if (st == kRouted) {
        if (ready_[ivc] > now) continue;
        const int32_t ovc = SelectOutput(r, ivc, f, now);
        if (ovc >= 0 && nva < kMaxPorts * 32) va[nva++] = {ivc, ovc, ivc - rbase, ip, v};
        continue;
      }
      if (credits_[out_[ivc]] > 0) cand |= 1u << v;
    }
    sa_cand[ip] = cand;
  }

  // VC allocation: per output VC, round-robin among the input VCs that chose it.
  const int32_t nlocal = ports_ * vstride_;
  for (int i = 0; i < nva; ++i) {
    const VaReq& q = va[i];
    if (owner_[q.ovc] >= 0) continue;  // granted to a competitor earlier in this loop
    const int32_t rr = va_rr_[q.ovc];
    const int32_t prio = (q.local - rr + nlocal) % nlocal;
    bool wins = true;
    for (int j = 0; j < nva && wins; ++j) {
      if (j == i || va[j].ovc != q.ovc) continue;
      wins = (va[j].local - rr + nlocal) % nlocal > prio;
    }
    if (!wins) continue;
    owner_[q.ovc] = q.ivc;
    out_[q.ivc] = q.ovc;
    out_port_[q.ivc] = static_cast<uint8_t>((q.ovc - rbase) / vstride_);
    state_[q.ivc] = kActive;
    va_rr_[q.ovc] = (q.local + 1) % nlocal;
    if (credits_[q.ovc] > 0) sa_cand[q.ip] |= 1u << q.v;
  }

  // Switch allocation: input ports nominate one VC each, output ports grant one input.
  uint32_t out_req[kMaxPorts] = {};
  uint8_t nominee[kMaxPorts];
  for (uint32_t pm = pmask; pm != 0; pm &= pm - 1) {
    const int ip = std::countr_zero(pm);
    if (sa_cand[ip] == 0) continue;
    const int v = PickRoundRobin(sa_cand[ip], sa_in_rr_[Pi(r, ip)]);
    nominee[ip] = static_cast<uint8_t>(v);
    out_req[out_port_[Pi(r, ip) * vstride_ + v]] |= 1u << ip;
  }
  for (int op = 0; op < ports_; ++op) {
    if (out_req[op] == 0) continue;
    const int ip = PickRoundRobin(out_req[op], sa_out_rr_[Pi(r, op)]);
    const int v = nominee[ip];
    sa_out_rr_[Pi(r, op)] = static_cast<uint8_t>((ip + 1) % ports_);
    sa_in_rr_[Pi(r, ip)] = static_cast<uint8_t>((v + 1) % vstride_);
    Traverse(r, ip, v, op, now);
  }
}

void Fabric::Traverse(int32_t r, int ip, int v, int op, int64_t now) {
  const int32_t pi = Pi(r, ip);
  const int32_t ivc = pi * vstride_ + v;
  Flit f = buf_[static_cast<size_t>(ivc) * depth_ + head_[ivc]];
  if (++head_[ivc] == depth_) head_[ivc] = 0;
  if (--count_[ivc] == 0) {
    nonempty_[pi] &= ~(1u << v);
    if (nonempty_[pi] == 0) port_mask_[r] &= ~(1u << ip);
  }
  --buffered_[r];
  const int32_t ovc = out_[ivc];
  const int ovc_v = ovc % vstride_;
  if (ip != pe_port()) staged_credit_[pi] = static_cast<int8_t>(v);
  Staged& s = staged_[Pi(r, op)];
  s.vc = ovc_v;
  if (op == pe_port()) {
    f.arrival = now + 1;
    s.dst_ivc = -2;
  } else {
    --credits_[ovc];
    f.arrival = now + 1 + link_cycles_;
    s.dst_ivc = down_ivc_[Pi(r, op)] + ovc_v;
    s.dst_router = down_router_[Pi(r, op)];
    s.dst_port = down_port_[Pi(r, op)];
    ++flit_hops_;
    if (f.head) ++(*messages_)[f.msg].hops;
  }
  s.flit = f;
  if (f.head && observer_) observer_({now, f.msg, r, ip, v, op, ovc_v});
  if (f.tail) {
    owner_[ovc] = -1;
    state_[ivc] = kIdle;
  }
  if (!staged_any_[r]) {
    staged_any_[r] = 1;
    staged_routers_.push_back(r);
  }
}

void Fabric::Commit(int64_t now, std::vector<int32_t>* woken, std::vector<Ejection>* ejected) {
  if (staged_routers_.empty()) return;
  for (int32_t r : staged_routers_) {
    staged_any_[r] = 0;
    for (int p = 0; p < ports_; ++p) {
      const int32_t pi = Pi(r, p);
      Staged& s = staged_[pi];
      if (s.dst_ivc != -1) {
        ++flits_moved_;
        if (s.dst_ivc == -2) {
          ejected->push_back({r, s.flit.arrival, s.flit});
        } else {
          PushFlit(s.dst_ivc, s.dst_router, s.dst_port, s.vc, s.flit);
          woken->push_back(s.dst_router);
        }
        s.dst_ivc = -1;
      }
      if (staged_credit_[pi] >= 0) {
        ++credits_[up_ovc_[pi] + staged_credit_[pi]];
        staged_credit_[pi] = -1;
      }
    }
  }
  staged_routers_.clear();
  last_move_cycle_ = now;
}

}  // namespace ukai::sim
