#include "sim/engine/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "sim/routing/registry.h"
#include "sim/topology/factory.h"

namespace ukai::sim {
namespace {

Status Range(const char* key, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return Status::InvalidArgument(std::string(key) + ": must be in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "] (got " + std::to_string(value) + ")")
      .WithKey(std::string(key));
}

}  // namespace

Status ValidateConfig(const SimConfig& c) {
  const RouterConfig& r = c.router;
  UKAI_RETURN_IF_ERROR(Range("router.vcs", r.vcs, 1, 32));
  UKAI_RETURN_IF_ERROR(Range("router.pe_vcs", r.pe_vcs, 1, 32));
  UKAI_RETURN_IF_ERROR(Range("router.vc_buffer_flits", r.vc_buffer_flits, 1, 4096));
  UKAI_RETURN_IF_ERROR(Range("router.hop_cycles", r.hop_cycles, 1, 1000000));
  UKAI_RETURN_IF_ERROR(Range("router.link_cycles", r.link_cycles, 0, 1000000));
  UKAI_RETURN_IF_ERROR(Range("router.table_lookup_cycles", r.table_lookup_cycles, 0, 1000000));
  UKAI_RETURN_IF_ERROR(Range("router.flit_bytes", r.flit_bytes, 1, 1 << 20));
  UKAI_RETURN_IF_ERROR(Range("router.eject_flits", r.eject_flits, 1, 32));
  UKAI_RETURN_IF_ERROR(Range("router.switch_bubble_cycles", r.switch_bubble_cycles, 0, 1000000));
  UKAI_RETURN_IF_ERROR(Range("router.table_read_ports", r.table_read_ports, 0, 32));
  if (!(r.clock_mhz >= 0.0)) {
    return Status::InvalidArgument("router.clock_mhz: must be >= 0 (0: the routing default)")
        .WithKey("router.clock_mhz");
  }
  UKAI_RETURN_IF_ERROR(Range("traffic.message_bytes", c.traffic.message_bytes, 1, 1 << 30));
  UKAI_RETURN_IF_ERROR(Range("traffic.source_queue", c.traffic.source_queue, 0, INT32_MAX));
  // The SSS NIC model splits its operations into packets and checks those (nic/sss_nic.h).
  if (c.sss.active()) return ValidateMeasure(c.measure);
  const int64_t flits =
      (static_cast<int64_t>(c.traffic.message_bytes) + r.flit_bytes - 1) / r.flit_bytes;
  if (flits > 32767) {
    return Status::InvalidArgument(
               "traffic.message_bytes: at most 32767 flits per message (" + std::to_string(flits) +
               " with router.flit_bytes = " + std::to_string(r.flit_bytes) + ")")
        .WithKey("traffic.message_bytes");
  }
  if (r.switching != Switching::kWormhole && flits > r.vc_buffer_flits) {
    return Status::InvalidArgument(
               "router.switching = 'vct', 'vct-saf' and 'saf' need a whole message in one VC "
               "buffer: traffic.message_bytes gives " +
               std::to_string(flits) +
               " flits but router.vc_buffer_flits = " + std::to_string(r.vc_buffer_flits))
        .WithKey("router.switching");
  }
  // With a bounded source queue (traffic.source_queue > 0) the sender waits for the PE, so
  // a shorter interval only means "as fast as the PE takes them" (the paper's waiting sender).
  if (c.traffic.injection == InjectionKind::kInterval && c.traffic.source_queue == 0 &&
      c.traffic.interval < flits) {
    return Status::InvalidArgument(
               "traffic.interval = " + std::to_string(c.traffic.interval) +
               " cycles between messages of " + std::to_string(flits) +
               " flits (traffic.message_bytes = " + std::to_string(c.traffic.message_bytes) +
               ", router.flit_bytes = " + std::to_string(r.flit_bytes) + ") offers " +
               fmt::format("{:g}",
                           static_cast<double>(flits) / static_cast<double>(c.traffic.interval)) +
               " flits/node/cycle, but a node injects at most 1 flit per cycle: set "
               "traffic.interval >= " +
               std::to_string(flits) +
               ", send shorter messages, or bound the sender with traffic.source_queue")
        .WithKey("traffic.interval");
  }
  return ValidateMeasure(c.measure);
}

Status ValidateMeasure(const MeasureConfig& m) {
  UKAI_RETURN_IF_ERROR(Range("measure.warmup_messages", m.warmup_messages, 0, int64_t{1} << 50));
  UKAI_RETURN_IF_ERROR(Range("measure.measure_messages", m.measure_messages, 1, int64_t{1} << 50));
  UKAI_RETURN_IF_ERROR(Range("measure.warmup_cycles", m.warmup_cycles, 0, int64_t{1} << 50));
  UKAI_RETURN_IF_ERROR(Range("measure.sample_cycles", m.sample_cycles, 1, int64_t{1} << 50));
  UKAI_RETURN_IF_ERROR(Range("measure.max_cycles", m.max_cycles, 1, int64_t{1} << 50));
  UKAI_RETURN_IF_ERROR(Range("measure.watchdog_cycles", m.watchdog_cycles, 1, int64_t{1} << 50));
  if (!(m.convergence > 0.0 && m.convergence < 1.0)) {
    return Status::InvalidArgument("measure.convergence: must be in (0, 1)")
        .WithKey("measure.convergence");
  }
  return Status::Ok();
}

double Network::StateBytes(const SimConfig& config) {
  const NetworkConfig& nc = config.network;
  if (nc.topology == TopologyKind::kGraph || nc.topology == TopologyKind::kTree) {
    return GraphStateBytes(config);
  }
  double nodes = 1;
  int net_ports = 2 * nc.n;
  if (const TopologyEntry* entry = FindTopology(nc.topology); entry && entry->size) {
    entry->size(nc, &nodes, &net_ports);
  }
  const int ports = net_ports + 1;
  // The topology: coordinates and neighbours per node, the channel alive mask.
  const double topology = nodes * (nc.n * sizeof(int32_t) + (ports - 1) * (sizeof(PortRef) + 1));
  // Per node: PE, busy and active flags, active list, RNG stream, one scheduled creation,
  // a destination-table entry of the traffic pattern.
  const double per_node = sizeof(Pe) + 2 * sizeof(uint8_t) + 2 * sizeof(int32_t) + sizeof(Rng) +
                          sizeof(std::pair<int64_t, int32_t>) + sizeof(int);
  const double fixed = 1024 * sizeof(Message) + 1024 * sizeof(std::vector<int32_t>);
  const double routers = std::min(nodes, double(int64_t{1} << 40));
  return topology + nodes * per_node + fixed +
         Fabric::StateBytes(static_cast<int64_t>(routers), ports, config.router);
}

// The graph topologies (topology/graph.h): the same items for the built topology (0 when it
// cannot be built: that error is reported where the network is made).
double Network::GraphStateBytes(const SimConfig& config) {
  Result<std::unique_ptr<Topology>> t = MakeTopology(config.network);
  if (!t.ok()) return 0;
  const double nodes = (*t)->NumNodes();
  const int ports = (*t)->NumNetworkPorts() + 1;
  const double per_node = sizeof(Pe) + 2 * sizeof(uint8_t) + 2 * sizeof(int32_t) + sizeof(Rng) +
                          sizeof(std::pair<int64_t, int32_t>) + sizeof(int) +
                          (ports - 1) * (sizeof(PortRef) + sizeof(int) + 1);
  const double fixed = 1024 * sizeof(Message) + 1024 * sizeof(std::vector<int32_t>);
  return nodes * per_node + fixed +
         Fabric::StateBytes(static_cast<int64_t>(nodes), ports, config.router);
}

Result<std::unique_ptr<Network>> Network::Create(const SimConfig& config,
                                                 std::unique_ptr<RoutingFunction> routing,
                                                 bool with_traffic) {
  UKAI_RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<Network> net(new Network());
  net->config_ = config;
  net->endpoint_cycles_ = config.router.model == RouterModel::kBooksim ? kBooksimEndpointCycles : 0;
  Result<std::unique_ptr<Topology>> topo = MakeTopology(config.network);
  if (!topo.ok()) return topo.status();
  net->topology_ = std::move(*topo);
  net->sent_flits_.assign(net->topology_->NumNodes(), 0);
  net->sent_packets_.assign(net->topology_->NumNodes(), 0);
  if (net->topology_->NumNodes() >
      Fabric::MaxRouters(net->topology_->NumNetworkPorts() + 1, config.router)) {
    return Status::InvalidArgument("network.k: network too large for the router state index (" +
                                   std::to_string(net->topology_->NumNodes()) +
                                   " nodes with router.vcs = " + std::to_string(config.router.vcs) +
                                   ", router.pe_vcs = " + std::to_string(config.router.pe_vcs) +
                                   ")")
        .WithKey("network.k");
  }
  net->faults_ = std::make_unique<FaultState>(*net->topology_);
  if (config.faults.any()) {
    Result<FaultPlan> plan = PlanFaults(*net->topology_, config.faults, config.seed);
    if (!plan.ok()) return plan.status();
    *net->faults_ = plan->initial;
    net->events_ = std::move(plan->events);
    net->faults_->ApplyTo(net->topology_.get());
  }
  net->target_ = std::make_unique<FaultState>(*net->faults_);
  for (const NodeRef& ref : config.faults.reconfig.root_priority) {
    Result<int> node = net->topology_->ParseNode(ref);
    if (!node.ok())
      return Status::InvalidArgument("reconfig.root_priority: " + node.status().message())
          .WithKey("reconfig.root_priority");
    net->root_priority_.push_back(*node);
  }
  if (routing == nullptr) {
    Result<std::unique_ptr<RoutingFunction>> made = MakeRouting(*net->topology_, config);
    if (!made.ok()) return made.status();
    routing = std::move(*made);
  }
  net->routing_ = std::move(routing);
  net->selection_ = std::make_unique<MaxCreditSelection>();
  net->message_flits_ =
      (config.traffic.message_bytes + config.router.flit_bytes - 1) / config.router.flit_bytes;
  const int nodes = net->topology_->NumNodes();
  if (with_traffic) {
    Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(*net->topology_, config.traffic);
    if (!pattern.ok()) return pattern.status();
    net->pattern_ = std::move(*pattern);
    Result<std::unique_ptr<InjectionProcess>> inj =
        MakeInjection(config.traffic, net->message_flits_);
    if (!inj.ok()) return inj.status();
    net->injection_ = std::move(*inj);
  }
  net->fabric_ = std::make_unique<Fabric>(*net->topology_, config.router, net->routing_.get(),
                                          net->selection_.get(), &net->messages_);
  net->ApplyFaultState();
  net->pe_.resize(nodes);
  net->pe_busy_.assign(nodes, 0);
  net->paused_until_.assign(nodes, 0);
  net->active_flags_.assign((static_cast<size_t>(nodes) + 7) / 8 * 8, 0);
  net->active_.resize(net->active_flags_.size() + 1);  // CollectActive() writes one past
  net->rng_.reserve(nodes);
  for (int i = 0; i < nodes; ++i) net->rng_.push_back(Rng::Stream(config.seed, i));
  if (with_traffic) {
    for (int i = 0; i < nodes; ++i) {
      if (net->pattern_->Idle(i)) continue;
      ++net->sending_nodes_;
      net->schedule_.Push(net->injection_->First(net->rng_[i]), i, 0);
    }
    net->offered_ = net->injection_->OfferedFlitsPerCycle() * net->sending_nodes_ /
                    net->topology_->NumTerminals();  // averaged over the end nodes
  }
  return net;
}

void Network::EnqueueMessage(int32_t id) {
  Message& m = messages_[id];
  Pe& pe = pe_[m.src];
  pe_busy_[m.src] = 1;
  m.next = -1;
  if (pe.queue_tail >= 0) {
    messages_[pe.queue_tail].next = id;
  } else {
    pe.queue_head = id;
  }
  pe.queue_tail = id;
  ++pe.held;
  ++backlog_;
  ++messages_created_;
  Activate(m.src);
}

void Network::CreateMessage(int src, int dst, int flits) { CreateMessage(src, dst, flits, {}, -1); }

int32_t Network::CreateMessage(int src, int dst, int flits, std::span<const int> via, int64_t tag) {
  const int32_t id = messages_.Allocate();
  Message& m = messages_[id];
  m.src = src;
  m.dst = dst;
  m.length = flits;
  m.created = now_;
  m.tag = tag;
  inflight_flits_ += flits;
  inflight_created_sum_ += now_ * static_cast<int64_t>(flits);
  // routing.in_order: a pair's messages share one injection VC (and one route and VC).
  if (config_.routing.in_order) m.inject_vc = static_cast<int8_t>(dst % config_.router.pe_vcs);
  m.via_count = static_cast<int32_t>(std::min<size_t>(via.size(), Message::kMaxVia));
  std::copy_n(via.begin(), m.via_count, m.via);
  EnqueueMessage(id);
  return id;
}

void Network::CreateTrafficMessages() {
  schedule_.PopDue(now_, &due_);
  const int bound = config_.traffic.source_queue;
  for (const int32_t node : due_) {
    if (bound > 0 && pe_[node].held >= bound) {
      pe_[node].waiting = true;  // PeStep() creates it when a message leaves the PE
      continue;
    }
    CreateTrafficMessage(node);
  }
}

// One traffic message of `node` now (not generated when its source or destination is
// faulty), and its next creation.
void Network::CreateTrafficMessage(int32_t node) {
  Rng& rng = rng_[node];
  const int dst = pattern_->Destination(node, rng);
  if (dst >= 0 && topology_->NodeAlive(node) && topology_->NodeAlive(dst)) {
    CreateMessage(node, dst, message_flits_);
  } else if (dst >= 0) {
    ++messages_not_generated_;
  }
  schedule_.Push(injection_->Next(now_, rng), node, now_);
}

// Starts the message at the front of the PE's source queue: picks the injection VC
// holding the fewest flits, scanning from a rotating start. False if the queue is empty.
bool Network::StartMessage(int32_t node, Pe& pe) {
  if (pe.queue_head < 0 || Paused(node)) return false;
  pe.current = pe.queue_head;
  pe.queue_head = messages_[pe.current].next;
  if (pe.queue_head < 0) pe.queue_tail = -1;
  --backlog_;
  pe.seq = 0;
  pe.length = messages_[pe.current].length;
  const int vcs = config_.router.pe_vcs;
  int best = -1;
  for (int i = 0; i < vcs; ++i) {
    const int v = (pe.rr + i) % vcs;
    if (best < 0 || fabric_->InjectionCount(node, v) < fabric_->InjectionCount(node, best)) {
      best = v;
    }
  }
  const int fixed = messages_[pe.current].inject_vc;
  pe.vc = fixed >= 0 ? fixed % vcs : best;
  pe.rr = (pe.rr + 1) % vcs;
  return true;
}

// Inlined into Step() (its only caller: it runs for every busy PE every cycle).
__attribute__((always_inline)) inline void Network::PeStep(int32_t node, Pe& pe) {
  if (pe.current < 0 && !StartMessage(node, pe)) return;
  if (fabric_->InjectionFree(node, pe.vc) <= 0) return;
  if (__builtin_expect(gates_, false) && !MayPush(node, pe)) return;
  const bool head = pe.seq == 0;
  if (head && Paused(node)) return;  // no message enters a node paused by a reconfiguration
  const Flit f = Flit::Make(now_ + 1, pe.current, head, pe.seq == pe.length - 1);
  fabric_->Inject(node, pe.vc, f);
  if (head) messages_[pe.current].injected = now_ + 1;
  messages_injected_ += head;
  ++sent_flits_[node];
  sent_packets_[node] += head;
  ++flits_injected_;
  last_progress_ = now_;
  if (++pe.seq == pe.length) {
    if (__builtin_expect(gates_, false) && messages_[pe.current].gated) {
      messages_[pe.current].gated = false;
      available_.erase(pe.current);
    }
    pe.current = -1;
    --pe.held;
    if (pe.waiting) {  // only with a bounded source queue
      pe.waiting = false;
      CreateTrafficMessage(node);
    }
    pe_busy_[node] = pe.queue_head >= 0 ? 1 : 0;
  }
}

// The topology's liveness into the routers.
void Network::ApplyFaultState() {
  for (int r = 0; r < topology_->NumNodes(); ++r) {
    fabric_->SetNodeAlive(r, topology_->NodeAlive(r));
    for (int p = 0; p < topology_->NumNetworkPorts(); ++p) {
      fabric_->SetPortAlive(r, p, topology_->ChannelAlive(r, p));
    }
  }
}

// A failed node's queued messages (not yet started) are undeliverable.
void Network::DropQueue(int32_t node) {
  Pe& pe = pe_[node];
  while (pe.queue_head >= 0) {
    const int32_t id = pe.queue_head;
    pe.queue_head = messages_[id].next;
    if (messages_[id].tag >= 0) undeliverable_tags_.push_back(messages_[id].tag);
    messages_.Release(id);
    --backlog_;
    --pe.held;
    ++messages_undeliverable_;
  }
  pe.queue_tail = -1;
  pe_busy_[node] = pe.current >= 0 ? 1 : 0;
}

void Network::ApplyDueEvents() {
  const bool protocol = config_.faults.reconfig.mode == ReconfigConfig::Mode::kProtocol;
  if (reconfiguring_ && finished_) EndReconfiguration();  // after the restart: a new episode
  while (next_event_ < events_.size() && events_[next_event_].cycle <= now_) {
    const FaultEvent& e = events_[next_event_++];
    if (protocol) AddReconfigSite(e);
    ApplyFaultEvent(e, target_.get());
    const bool fail =
        e.kind == FaultEventSpec::Kind::kFailNode || e.kind == FaultEventSpec::Kind::kFailChannel;
    // With the protocol a repaired channel is used only once the tables know it.
    if (!protocol || fail) ApplyFaultEvent(e, faults_.get());
    if (e.kind == FaultEventSpec::Kind::kFailNode) DropQueue(e.node);
  }
  faults_->ApplyTo(topology_.get());
  ApplyFaultState();
  if (protocol) {
    ReplanReconfiguration();
  } else {
    routing_->TopologyChanged();
  }
  fabric_->ForgetRoutes();
  for (int r = 0; r < topology_->NumNodes(); ++r) {
    if (fabric_->HasFlits(r)) Activate(r);  // re-route heads waiting at dead ports
  }
}

void Network::Step() {
  deliveries_.clear();
  watched_.clear();
  undeliverable_tags_.clear();
  if (next_event_ < events_.size() && events_[next_event_].cycle <= now_) ApplyDueEvents();
  if (reconfiguring_) AdvanceReconfiguration();
  if (injection_ != nullptr && !traffic_stopped_) CreateTrafficMessages();
  if (source_ != nullptr) source_->CreateMessages(now_, this);
  // Every router first, then every PE: a PE only touches its own router's injection VCs,
  // which no other router's evaluation reads, so this is the same as router + PE per node.
  if (now_ >= next_rebase_) {
    fabric_->RebaseArrivals(now_);
    next_rebase_ = now_ + Fabric::kRebaseInterval;
  }
  CollectActive();
  fabric_->Evaluate(active_.data(), static_cast<size_t>(num_active_), now_);
  // Run the PEs and keep only busy nodes active (Commit() then adds the ones that receive
  // flits).
  for (int32_t i = 0; i < num_active_; ++i) {
    const int32_t node = active_[i];
    if (pe_busy_[node]) {
      PeStep(node, pe_[node]);
    } else if (!fabric_->HasFlits(node)) {
      active_flags_[node] = 0;  // nothing left to do (a busy PE keeps the node active)
    }
  }
  ejected_.clear();
  fabric_->Commit(now_, active_flags_.data(), &ejected_);  // tails only
  last_progress_ = std::max(last_progress_, fabric_->last_move_cycle());
  if (ejected_.size() > 1 &&
      !std::is_sorted(ejected_.begin(), ejected_.end(),
                      [](const Ejection& a, const Ejection& b) { return a.node < b.node; })) {
    std::sort(ejected_.begin(), ejected_.end(),
              [](const Ejection& a, const Ejection& b) { return a.node < b.node; });
  }
  for (const Ejection& e : ejected_) {
    Message& m = messages_[e.flit.msg()];
    // A multicast (dst -1) is delivered wherever its routing ejected it, once per copy.
    if (m.undeliverable || (m.dst >= 0 && e.node != m.dst) || !topology_->NodeAlive(e.node)) {
      ++messages_undeliverable_;
      if (m.tag >= 0) undeliverable_tags_.push_back(m.tag);
      if (--m.copies <= 0) {
        inflight_flits_ -= m.length;
        inflight_created_sum_ -= m.created * m.length;
        messages_.Release(e.flit.msg());
      }
      continue;
    }
    const int64_t end = endpoint_cycles_;  // router.model = booksim: the PE channels
    deliveries_.push_back({m.src, e.node, m.length, m.hops, m.created, m.injected, e.cycle + end,
                           m.routing_state, m.tag, m.head_arrival + end,
                           m.arrival_sum + end * m.length});
    if (m.copies == 1) {  // the last copy: the message leaves the network
      inflight_flits_ -= m.length;
      inflight_created_sum_ -= m.created * m.length;
    }
    ++messages_delivered_;
    if (--m.copies <= 0) messages_.Release(e.flit.msg());
  }
  if (source_ != nullptr) source_->Delivered(deliveries_, undeliverable_tags_, now_);
  ++now_;
}

// The active nodes in index order (memory order: the hardware prefetchers follow it).
void Network::CollectActive() {
  int32_t* out = active_.data();
  const uint8_t* flags = active_flags_.data();
  const int32_t size = static_cast<int32_t>(active_flags_.size());
  int32_t n = 0;
  for (int32_t base = 0; base < size; base += 8) {
    uint64_t w;
    std::memcpy(&w, flags + base, 8);  // eight flags at a time (each 0 or 1)
    if (w == 0) continue;
    for (int32_t j = 0; j < 8; ++j) {  // branch-free compaction
      out[n] = base + j;
      n += flags[base + j];
    }
  }
  num_active_ = n;
}

bool Network::AnyActive() const {
  for (uint8_t f : active_flags_) {
    if (f != 0) return true;
  }
  return false;
}

bool Network::SkipIdle(int64_t limit) {
  if ((schedule_.empty() && source_ == nullptr) || AnyActive() || reconfiguring_) return false;
  int64_t next = std::min(schedule_.empty() ? MessageSource::kNever : schedule_.Next(now_), limit);
  if (source_ != nullptr) next = std::min(next, source_->NextCycle(now_));
  if (next_event_ < events_.size()) next = std::min(next, events_[next_event_].cycle);
  if (next <= now_) return false;
  now_ = next;
  return true;
}

int64_t Network::PipelineCycles() const {
  const RouterConfig& r = config_.router;
  return int64_t{fabric_->max_link_cycles()} + r.hop_cycles + r.table_lookup_cycles + 1;
}

bool Network::Stalled(int64_t cycles) const {
  return flits_in_network() > 0 && now_ - 1 - last_progress_ >= cycles + PipelineCycles();
}

Status Network::DeadlockStatus(int64_t watchdog_cycles) const {
  std::string msg =
      std::to_string(flits_in_network()) + " flit(s) in the network and none moved for " +
      std::to_string(watchdog_cycles + PipelineCycles()) +
      " cycles (measure.watchdog_cycles = " + std::to_string(watchdog_cycles) + " plus the " +
      std::to_string(PipelineCycles()) + "-cycle link and hop pipeline), at cycle " +
      std::to_string(now_) + " on " + topology_->Describe() + " with routing '" +
      config_.routing.algorithm + "'; blocked channels:";
  for (const std::string& line : fabric_->DescribeBlocked(*topology_, 32)) msg += "\n  " + line;
  return Status::Deadlock(msg);
}

Status Network::CheckInvariants() const {
  const std::string err = fabric_->CheckInvariants();
  if (!err.empty()) return Status::Internal("cycle " + std::to_string(now_) + ": " + err);
  int64_t buffered = 0;
  for (int r = 0; r < topology_->NumNodes(); ++r) buffered += fabric_->buffered(r);
  if (buffered != flits_in_network()) {
    return Status::Internal("cycle " + std::to_string(now_) +
                            ": flit conservation: " + std::to_string(flits_injected_) +
                            " injected - " + std::to_string(flits_ejected()) +
                            " ejected != " + std::to_string(buffered) + " buffered");
  }
  return Status::Ok();
}

}  // namespace ukai::sim
