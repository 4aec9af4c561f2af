// Fabric construction, PE injection, head routing/selection and the commit phase.
// Evaluate() and its stages are in fabric_evaluate.cc, debug views in fabric_debug.cc.
#include "sim/router/fabric.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace ukai::sim {
namespace {

constexpr int32_t kEjectCredits = 1 << 30;  // the PE never back-pressures

uint32_t LowMask(int n) { return n >= 32 ? ~0u : ((1u << n) - 1); }

int Log2Ceil(int n) { return std::bit_width(static_cast<unsigned>(std::max(n, 1) - 1)); }

}  // namespace

int64_t Fabric::MaxRouters(int ports, const RouterConfig& config) {
  const int shift = Log2Ceil(ports) + Log2Ceil(std::max(config.vcs, config.pe_vcs));
  return (int64_t{1} << 31) >> shift;
}

double Fabric::StateBytes(int64_t routers, int ports, const RouterConfig& config) {
  const int pshift = Log2Ceil(ports);
  const int vshift = Log2Ceil(std::max(config.vcs, config.pe_vcs));
  const int words = 1 << (pshift + vshift - std::min(6, pshift + vshift));
  const double npi = static_cast<double>(routers) * (1 << pshift);
  const double nvc = npi * (1 << vshift);
  const double per_vc = sizeof(Flit) * double(1 << Log2Ceil(config.vc_buffer_flits)) +
                        sizeof(InVc) + 2.0 * ports * sizeof(RouteCandidate) +
                        sizeof(OutputVcState) + sizeof(int32_t);
  const double per_pi = sizeof(RoundRobin) + 2 * sizeof(uint32_t) + sizeof(Transfer) + 1;
  const double per_router =
      words * sizeof(Masks) + sizeof(uint32_t) + sizeof(Ejected) + sizeof(int64_t);
  return nvc * per_vc + npi * per_pi + static_cast<double>(routers) * per_router;
}

Fabric::Fabric(const Topology& topology, const RouterConfig& config, const RoutingFunction* routing,
               const SelectionFunction* selection, MessagePool* messages, const PartitionPlan* plan,
               int first_part, int lanes)
    : routing_(routing),
      selection_(selection),
      max_credit_(dynamic_cast<const MaxCreditSelection*>(selection) != nullptr),
      messages_(messages),
      nodes_(topology.NumNodes()),
      ports_(topology.NumNetworkPorts() + 1),
      vstride_(std::max(config.vcs, config.pe_vcs)),
      depth_(config.vc_buffer_flits),
      dshift_(Log2Ceil(config.vc_buffer_flits)),
      slot_mask_((1u << dshift_) - 1),
      pshift_(Log2Ceil(ports_)),
      vshift_(Log2Ceil(vstride_)),
      rshift_(pshift_ + vshift_),
      mshift_(std::min(6, rshift_)),
      words_(1 << (rshift_ - mshift_)),
      hop_cycles_(config.hop_cycles),
      link_cycles_(config.link_cycles),
      table_lookup_cycles_(config.table_lookup_cycles),
      vct_(config.switching != Switching::kWormhole),
      saf_(config.switching == Switching::kVctSaf            ? kSafFallback
           : config.switching == Switching::kStoreAndForward ? kSafAlways
                                                             : 0),
      reroute_(routing->ReRouteWhileBlocked()),
      atomic_vcs_(vct_ ? 0u : routing->AtomicVcMask()),
      needs_room_(vct_ || atomic_vcs_ != 0),
      cand_stride_(2 * ports_),
      eject_flits_(config.eject_flits),
      bubble_cycles_(config.switch_bubble_cycles),
      grant_options_(eject_flits_ > 1 || bubble_cycles_ > 0 ||
                     config.flow_control == FlowControl::kInBand),
      shared_headers_(config.header_units == HeaderUnits::kPerPort),
      table_ports_(config.table_read_ports),
      net_vc_mask_(LowMask(config.vcs)) {
  assert(nodes_ <= MaxRouters(ports_, config));
  const PartitionPlan single = plan == nullptr ? PartitionPlan::Single(nodes_) : PartitionPlan();
  if (plan == nullptr) {
    plan = &single;
    first_part = 0;
    lanes = 1;
  }
  owner_ = plan->owners();
  first_part_ = first_part;
  for (int l = 0; l < lanes; ++l) {
    for (const NodeRun& run : plan->runs(first_part + l)) local_.push_back(run);
  }
  std::sort(local_.begin(), local_.end(),
            [](const NodeRun& a, const NodeRun& b) { return a.begin < b.begin; });
  const size_t npi = static_cast<size_t>(nodes_) << pshift_;
  const size_t nvc = npi << vshift_;
  buf_.Reset(nvc << dshift_);
  in_.Reset(nvc);
  cand_.Reset(nvc * cand_stride_);
  out_.Reset(nvc);
  va_rr_.Reset(nvc);
  booksim_va_ =
      config.vc_allocator == VcAllocator::kAuto
          ? (config.model == RouterModel::kBooksim ? VcAllocator::kIslip : VcAllocator::kMaxCredit)
          : config.vc_allocator;
  if (booksim_va_ != VcAllocator::kMaxCredit) {
    va_accept_.Reset(nvc);
    booksim_simple_ = !reroute_ && !vct_ && atomic_vcs_ == 0;
  }
  rr_.Reset(npi);
  masks_.Reset(static_cast<size_t>(nodes_) * words_);
  valid_vcs_.Reset(npi);
  down_ivc_.Reset(npi);
  remote_.Reset(npi);
  epoch_.Reset(nodes_);
  dead_.Reset(nodes_);
  if (bubble_cycles_ > 0) last_sent_.Reset(npi);
  if (saf_ != 0) stored_count_.Reset(nodes_);
  if (routing->MayFork()) {
    forking_ = true;
    fork_n_.assign(nvc, 0);
    fork_got_.assign(nvc, 0);
    fork_.resize(nvc * kMaxBranches);
    copied_count_.assign(nodes_, 0);
  }
  SetRouteCache(true);
  if (shared_headers_) {
    header_free_.Reset(npi);
    header_rr_.Reset(npi);
  }
  lanes_.resize(static_cast<size_t>(lanes));
  for (int l = 0; l < lanes; ++l) {
    Lane& lane = lanes_[static_cast<size_t>(l)];
    lane.part = first_part + l;
    const int64_t routers = plan->NodesOf(first_part + l);
    lane.tx.resize(static_cast<size_t>(routers) << pshift_);
    lane.ej.resize(static_cast<size_t>(routers * eject_flits_));
    lane.out.resize(static_cast<size_t>(plan->count()));
    lane.pipe_ring.resize(kPipeSlots);
  }
  for (const NodeRun& run : local_) {
    const size_t v0 = static_cast<size_t>(run.begin) << rshift_;
    const size_t v1 = static_cast<size_t>(run.end) << rshift_;
    // `up` stays negative where no upstream feeds the VC (PE port, mesh edge).
    in_.Fill(v0, v1, InVc{0, 0, kIdle, 0, 0, 0, 0, 0, -1, -1, -1, 0});
    out_.Fill(v0, v1, OutputVcState{-1, 0, 0});
    down_ivc_.Fill(v0 >> vshift_, v1 >> vshift_, -1);
    if (bubble_cycles_ > 0)
      last_sent_.Fill(v0 >> vshift_, v1 >> vshift_, LastSent{~uint64_t{0}, INT64_MIN / 2});
  }
  for (const NodeRun& run : local_) {
    for (int r = run.begin; r < run.end; ++r) InitRouter(topology, config, r);
  }
  // Per-channel latencies (graph topologies): every router's, so that max_link_cycles() is
  // the network's on every rank.
  max_link_cycles_ = config.link_cycles;
  for (int r = 0; r < nodes_; ++r) {
    for (int p = 0; p < ports_ - 1; ++p) {
      const int own = topology.LinkCycles(r, p);
      if (own < 0 || own == config.link_cycles) continue;
      if (link_port_.empty()) link_port_.assign(npi, config.link_cycles);
      link_port_[Pi(r, p)] = own;
      max_link_cycles_ = std::max(max_link_cycles_, own);
    }
  }
  max_link_cycles_ = config.link_cycles;
  for (int32_t l : link_port_) max_link_cycles_ = std::max(max_link_cycles_, l);
  if (config.model == RouterModel::kBooksim) InitBooksimTiming(topology, config);
  if (config.flow_control == FlowControl::kInBand) InitInBand(topology);
  InitHot();
}

// router.model = booksim (fabric.h): the header pipeline without the switch traversal, which
// goes onto the channels; credit channels as long as the data channels. The terminal nodes
// of the indirect topologies (Topology::Forwards() false) stand for BookSim2's sources and
// sinks, which attach straight to a router: a terminal forwards a flit the cycle it sees
// it, over a channel of no latency, and the credit channel between it and its router takes
// 1 cycle (BookSim2's injection and ejection channels: Network counts their data cycles).
void Fabric::InitBooksimTiming(const Topology& topology, const RouterConfig& config) {
  traversal_cycles_ = BooksimTraversalCycles(config);
  hop_cycles_ = BooksimHopCycles(config) - traversal_cycles_;
  credit_delay_ = config.credit_delay;
  const size_t npi = static_cast<size_t>(nodes_) << pshift_;
  credit_port_.assign(npi, link_cycles_);
  for (size_t pi = 0; pi < link_port_.size(); ++pi) credit_port_[pi] = link_port_[pi];
  bool terminals = false;
  for (int r = 0; r < nodes_; ++r) terminals = terminals || !topology.Forwards(r);
  if (terminals) {
    if (link_port_.empty()) link_port_.assign(npi, link_cycles_);
    terminal_.assign(static_cast<size_t>(nodes_), 0);
    for (int r = 0; r < nodes_; ++r) {
      if (topology.Forwards(r)) continue;
      terminal_[static_cast<size_t>(r)] = 1;
      for (int p = 0; p < ports_ - 1; ++p) {
        const PortRef far = topology.Neighbor(r, p);
        if (!far.valid()) continue;
        // The traversal cycles added below are the far router's (none for the terminal).
        link_port_[Pi(r, p)] = -traversal_cycles_;
        link_port_[Pi(far.node, far.port)] = 0;
        credit_port_[Pi(r, p)] = 1;
        credit_port_[Pi(far.node, far.port)] = 1;
      }
    }
  }
  link_cycles_ += traversal_cycles_;
  for (int32_t& l : link_port_) l += traversal_cycles_;
  // A credit counts at most the longest credit channel + credit_delay cycles after it left.
  int longest = 0;
  for (int32_t l : credit_port_) longest = std::max(longest, l);
  // A power of two: the slot of a cycle is a mask away.
  const size_t slots = std::bit_ceil(static_cast<size_t>(longest + credit_delay_ + 2));
  for (Lane& l : lanes_) l.credit_ring.resize(slots);
  max_link_cycles_ += traversal_cycles_;
}

void Fabric::InitRouter(const Topology& topology, const RouterConfig& config, int32_t r) {
  for (int p = 0; p < ports_ - 1; ++p) {
    const PortRef far = topology.Neighbor(r, p);
    if (!far.valid()) continue;
    valid_vcs_[Pi(r, p)] = LowMask(config.vcs);
    down_ivc_[Pi(r, p)] = Ivc(far.node, far.port, 0);
    remote_[Pi(r, p)] = owner_[far.node] != owner_[r] ? 1 : 0;
    // Our input port p is fed by the neighbour's output port far.port.
    for (int v = 0; v < config.vcs; ++v) in_[Ivc(r, p, v)].up = Ivc(far.node, far.port, v);
    for (int v = 0; v < config.vcs; ++v) out_[Ivc(r, p, v)].credits = depth_;
  }
  valid_vcs_[Pi(r, pe_port())] = LowMask(config.pe_vcs);
  for (int v = 0; v < config.pe_vcs; ++v) out_[Ivc(r, pe_port(), v)].credits = kEjectCredits;
}

double Fabric::ReservedBytes() const {
  double bytes = 0;
  auto add = [&bytes](const auto& a) { bytes += static_cast<double>(a.size() * sizeof(a[0])); };
  add(buf_);
  add(in_);
  add(cand_);
  add(out_);
  add(va_rr_);
  add(va_accept_);
  add(rr_);
  add(valid_vcs_);
  add(down_ivc_);
  add(remote_);
  add(last_sent_);
  add(header_free_);
  add(header_rr_);
  add(dead_);
  add(masks_);
  add(epoch_);
  for (const Lane& l : lanes_) {
    bytes += static_cast<double>(l.tx.size() * sizeof(Transfer) + l.ej.size() * sizeof(Ejected));
  }
  return bytes;
}

void Fabric::SetEjectCredits(int32_t router, int32_t credits) {
  if (eject_bounded_.empty()) {
    eject_bounded_.assign(nodes_, 0);
    InitHot();  // hot_.extras
  }
  eject_bounded_[router] = 1;
  for (int v = 0; v < vstride_; ++v) {
    OutputVcState& o = out_[Ivc(router, pe_port(), v)];
    o.credits = v == 0 ? credits : 0;
    if (o.owner >= 0 && o.credits == 0) masks_[o.owner >> mshift_].credit &= ~Bit(o.owner);
  }
  ++epoch_[router];
}

void Fabric::ReturnEjectCredits(int32_t router, int32_t credits) {
  OutputVcState& o = out_[Ivc(router, pe_port(), 0)];
  if (o.credits == 0 && credits > 0 && o.owner >= 0)
    masks_[o.owner >> mshift_].credit |= Bit(o.owner);
  o.credits += credits;
  ++epoch_[router];  // a head waiting for room may now find it
}

int64_t Fabric::flits_copied() const {
  int64_t total = 0;
  for (int64_t n : copied_count_) total += n;
  return total;
}

int64_t Fabric::packets_stored() const {
  int64_t total = 0;
  if (saf_ == 0) return 0;
  for (const NodeRun& run : local_) {
    for (int r = run.begin; r < run.end; ++r) total += stored_count_[r];
  }
  return total;
}

void Fabric::SetPortAlive(int32_t router, int port, bool alive) {
  if (down_ivc_[Pi(router, port)] < 0) return;  // unconnected
  const uint32_t vcs = alive ? net_vc_mask_ : 0;
  if (valid_vcs_[Pi(router, port)] == vcs) return;
  valid_vcs_[Pi(router, port)] = vcs;
  // The kept routes were filtered by the old liveness.
  if (cache_routes_) route_cache_.Reset(static_cast<size_t>(nodes_) * nodes_);
}

void Fabric::SetRouteCache(bool on) {
  cache_routes_ = on && routing_->PureRoute() && !forking_ && nodes_ <= kRouteCacheNodes;
  route_one_ = on && routing_->HasRouteOne() && !forking_ && !cache_routes_;
  sink_fast_ = (cache_routes_ || route_one_) && !routing_->RoutesAtDestination();
  route_cache_.Reset(cache_routes_ ? static_cast<size_t>(nodes_) * nodes_ : 0);
}

void Fabric::ForgetRoutes() {
  // Liveness or tables changed: a PureRoute() routing may answer differently now.
  if (cache_routes_) route_cache_.Reset(static_cast<size_t>(nodes_) * nodes_);
  for (const NodeRun& run : local_) {
    for (int32_t ivc = run.begin << rshift_; ivc < run.end << rshift_; ++ivc) {
      const uint64_t bit = Bit(ivc);
      if (in_[ivc].state != kIdle && (masks_[ivc >> mshift_].active & bit) == 0) {
        in_[ivc].state = kIdle;
        masks_[ivc >> mshift_].pipe &= ~bit;
      }
    }
  }
}

void Fabric::InitHot() {
  Hot h{};
  h.buf = buf_.data();
  h.in = in_.data();
  h.out = out_.data();
  h.masks = masks_.data();
  h.rr = rr_.data();
  h.epoch = epoch_.data();
  h.down_ivc = down_ivc_.data();
  h.remote = remote_.data();
  h.tx = nullptr;  // the lane's, set by Evaluate()
  h.ej = nullptr;
  h.route = nullptr;
  h.bs_req = nullptr;
  h.pipe_ring = nullptr;
  h.lane = 0;
  h.link_port = link_port_.empty() ? nullptr : link_port_.data();
  h.ports = ports_;
  h.pe = ports_ - 1;
  h.pshift = pshift_;
  h.vshift = vshift_;
  h.dshift = dshift_;
  h.mshift = mshift_;
  h.link = link_cycles_;
  h.slot_mask = slot_mask_;
  h.grant_options = grant_options_;
  h.shared_headers = shared_headers_;
  h.table_ports = table_ports_;
  h.booksim_va = booksim_va_ != VcAllocator::kMaxCredit;
  h.va_unique = booksim_va_ == VcAllocator::kIslip;
  h.partitioned = std::any_of(owner_.begin(), owner_.end(), [](int32_t p) { return p != 0; });
  h.extras = forking_ || saf_ != 0 || !link_port_.empty() || !eject_bounded_.empty();
  hot_ = h;
  // Every channel then has the latency link_cycles_, so a Commit() puts all its flits in
  // one slot of the arrival ring, link_cycles_ ahead.
  defer_arrivals_ = defer_arrivals_wanted_ && credit_delay_ >= 0 && !h.extras && !h.partitioned &&
                    lanes_.size() == 1 && !in_band_ && !credit_port_.empty() &&
                    std::all_of(credit_port_.begin(), credit_port_.end(),
                                [this](int32_t l) { return l == credit_port_[0]; });
  defer_credit_cycles_ = defer_arrivals_ ? credit_port_[0] : 0;
  hot_.counted_arrived = defer_arrivals_;
  if (defer_arrivals_) {
    for (Lane& l : lanes_) {
      l.arrival_ring.resize(std::bit_ceil(static_cast<size_t>(link_cycles_) + 1));
    }
  }
}

void Fabric::SetDeferredArrivals(bool on) {
  defer_arrivals_wanted_ = on;
  InitHot();
}

int32_t Fabric::buffered(int32_t router) const {
  if (LaneOf(owner_[router]) < 0) return 0;  // another rank's router
  int32_t total = 0;
  for (int p = 0; p < ports_; ++p) {
    for (int v = 0; v < vstride_; ++v) {
      total += in_[Ivc(router, p, v)].count + ArrivalsPending(Ivc(router, p, v));
    }
  }
  return total;
}

bool Fabric::RouteHead(int32_t r, int ip, int v, int32_t ivc, const Flit& f, int64_t now,
                       RouteResult* result) {
  Message& m = (*messages_)[f.msg()];
  // One candidate goes into the InVc record; cand_ is written only when there are more.
  RouteCandidate* more = &cand_[static_cast<size_t>(ivc) * cand_stride_];
  RouteCandidate first;
  int n = 0;
  auto add = [&](const RouteCandidate& c) {
    if (n == 1) more[0] = first;
    (n == 0 ? first : more[n]) = c;
    ++n;
  };
  int extra = 0;
  bool read_table = false;
  bool fork = false;
  const auto sink = [&] {
    add({static_cast<int16_t>(pe_port()), 0, valid_vcs_[Pi(r, pe_port())]});
  };
  if (m.dst == r && ip == pe_port() && !terminal_.empty() && terminal_[static_cast<size_t>(r)]) {
    // router.model = booksim: a terminal's packet to itself goes through its router, as
    // BookSim2's source and sink are one router port.
    add({0, 0, valid_vcs_[Pi(r, 0)]});
  } else if ((m.dst == r && !routing_->RoutesAtDestination()) || (m.dst >= 0 && dead_[m.dst])) {
    if (m.dst != r) m.undeliverable = true;
    sink();
  } else if (cache_routes_ && route_cache_[static_cast<size_t>(r) * nodes_ + m.dst] != 0) {
    const uint64_t c = route_cache_[static_cast<size_t>(r) * nodes_ + m.dst];
    add({static_cast<int16_t>((c & 0xffff) - 1), 0, static_cast<uint32_t>(c >> 32)});
  } else {
    RouteRequest req;
    req.node = r;
    req.in_port = ip;
    req.in_vc = v;
    req.src = m.src;
    req.dst = m.dst;
    req.length_flits = m.length;
    req.now = now;
    // A re-route of a routed head (ReRouteWhileBlocked): how long it has waited so far.
    req.blocked_cycles = in_[ivc].state == kIdle ? 0 : std::max<int64_t>(0, now - in_[ivc].ready);
    req.message_state = &m.routing_state;
    req.via = m.via;
    req.via_count = m.via_count;
    req.created = m.created;
    req.out_vcs = &out_[Ivc(r, 0, 0)];
    req.out_vc_stride = 1 << vshift_;
    req.vc_depth = depth_;
    req.route = m.route;
    result->Clear();
    routing_->Route(req, result);
    assert(result->size() <= cand_stride_);
    for (int i = 0; i < result->size() && n < cand_stride_; ++i) {
      RouteCandidate c = (*result)[i];
      if (c.port == RouteResult::kEjectPort) {
        c.port = static_cast<int16_t>(pe_port());
      } else if (c.port < 0 || c.port >= ports_ - 1) {
        continue;
      }
      c.vc_mask &= valid_vcs_[Pi(r, c.port)];
      if (c.vc_mask != 0) add(c);
    }
    read_table = result->table_lookup();
    fork = result->fork();
    if (read_table) extra = table_lookup_cycles_;
    if (cache_routes_ && n == 1) {  // PureRoute(): the same answer for every head to m.dst
      route_cache_[static_cast<size_t>(r) * nodes_ + m.dst] =
          uint64_t{first.vc_mask} << 32 | static_cast<uint64_t>(first.port + 1);
    }
    if (n == 0 && !hold_unroutable_) {  // no live way on: drain it here (faults), never a hang
      m.undeliverable = true;
      sink();
    }
  }
  InVc& q = in_[ivc];
  if (forking_) {
    fork_n_[ivc] = static_cast<uint8_t>(n > 1 && fork ? n : 0);
    fork_got_[ivc] = 0;
  }
  q.cand_count = static_cast<uint8_t>(n);
  if (n == 1) {
    q.cand_port = static_cast<uint8_t>(first.port);
    q.cand_mask = first.vc_mask;
  }
  const int hop = terminal_.empty() || terminal_[static_cast<size_t>(r)] == 0 ? hop_cycles_ : 1;
  in_[ivc].ready = now + hop - 1 + extra;
  in_[ivc].state = kRouted;
  return read_table;
}

void Fabric::RebaseArrivals(int64_t now) {
  for (const NodeRun& run : local_) {
    for (size_t ivc = size_t(run.begin) << rshift_; ivc < size_t(run.end) << rshift_; ++ivc) {
      const InVc& q = in_[ivc];
      for (int k = 0; k < q.count; ++k) {
        Flit& f = buf_[(ivc << dshift_) + ((q.head + static_cast<uint32_t>(k)) & slot_mask_)];
        if (f.ArrivedBy(now)) f.set_arrival(now);
      }
    }
  }
}

void Fabric::Commit(int lane_index, int64_t now, uint8_t* active) {
  Lane& lane = lanes_[static_cast<size_t>(lane_index)];
  if (credit_delay_ >= 0) {
    CommitDelayed(lane, now, active);
    return;
  }
  // Entries of the other lanes of this process and of other ranks for this lane.
  // (The lane's own box for itself holds credits whose flit crossed out.)
  for (const Lane& other : lanes_) {
    if (!other.out[static_cast<size_t>(lane.part)].empty()) {
      CommitInbox(other.out[static_cast<size_t>(lane.part)], active);
    }
  }
  if (!lane.remote_in.empty()) {
    CommitInbox(lane.remote_in, active);
    lane.remote_in.clear();
  }
  if (lane.ntx == 0 && lane.nej == 0) return;
  // Shifts as constants for the spec's router (4 VCs) and 5-8 VCs, 8-port stride.
  const int layout = !constant_layouts_ || pshift_ != 3 ? 0 : vshift_;
  if (needs_room_) {
    if (layout == 2) {
      CommitStaged<true, 2, 3>(lane, active);
    } else if (layout == 3) {
      CommitStaged<true, 3, 3>(lane, active);
    } else {
      CommitStaged<true, -1, -1>(lane, active);
    }
  } else if (layout == 2) {
    CommitStaged<false, 2, 3>(lane, active);
  } else if (layout == 3) {
    CommitStaged<false, 3, 3>(lane, active);
  } else {
    CommitStaged<false, -1, -1>(lane, active);
  }
  lane.ntx = lane.nej = 0;
}

template <bool kRoom, int kVshift, int kPshift>
void Fabric::CommitStaged(const Lane& lane, uint8_t* __restrict active) {
  const int rshift = kVshift >= 0 && kPshift >= 0 ? kVshift + kPshift : rshift_;
  const int mshift = rshift < 6 ? rshift : 6;
  const uint32_t bmask = (1u << mshift) - 1;
  InVc* __restrict in = in_.data();
  OutputVcState* __restrict out = out_.data();
  Masks* __restrict masks = masks_.data();
  uint32_t* __restrict epoch = epoch_.data();
  // One credit back to upstream output VC `c`: its owner may bid for the switch again.
  auto credit = [&](int32_t c) {
    if (out[c].credits++ == 0 && out[c].owner >= 0) {
      const int32_t o = out[c].owner;
      masks[o >> mshift].credit |= uint64_t{1} << (static_cast<uint32_t>(o) & bmask);
    }
    if (kRoom) ++epoch[c >> rshift];  // a head waiting for room may now find it
  };
  const Transfer* tx = lane.tx.data();
  for (int i = 0, n = lane.ntx; i < n; ++i) {
    const Transfer t = tx[i];
    if (t.credit >= 0) credit(t.credit);
    const int32_t ivc = t.dst;
    ++in[ivc].count;  // Evaluate() already wrote the flit into its slot
    masks[ivc >> mshift].nonempty |= uint64_t{1} << (static_cast<uint32_t>(ivc) & bmask);
    active[ivc >> rshift] = 1;
  }
  const Ejected* ej = lane.ej.data();
  for (int i = 0, n = lane.nej; i < n; ++i) {
    if (ej[i].credit >= 0) credit(ej[i].credit);
  }
}

void Fabric::CommitInbox(const std::vector<BoundaryEntry>& entries, uint8_t* active, Lane* delayed,
                         int64_t now) {
  for (const BoundaryEntry& e : entries) {
    if (e.credit >= 0 && delayed != nullptr) {
      DeferCredit(*delayed, e.credit, now);
    } else if (e.credit >= 0) {
      OutputVcState& o = out_[e.credit];
      if (o.credits++ == 0 && o.owner >= 0) masks_[o.owner >> mshift_].credit |= Bit(o.owner);
      if (needs_room_) ++epoch_[e.credit >> rshift_];
    }
    if (e.dst >= 0) {
      buf_[(static_cast<size_t>(e.dst) << dshift_) + static_cast<size_t>(e.slot)] = e.flit;
      ++in_[e.dst].count;
      masks_[e.dst >> mshift_].nonempty |= Bit(e.dst);
      active[e.dst >> rshift_] = 1;
    }
  }
}

}  // namespace ukai::sim
