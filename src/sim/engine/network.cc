#include "sim/engine/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "sim/engine/rank_exchange.h"
#include "sim/engine/rank_group.h"
#include "sim/engine/worker_pool.h"
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
  UKAI_RETURN_IF_ERROR(CheckSizeMix(c.traffic));
  const bool booksim_measure =
      c.measure.mode == MeasureMode::kBooksim || c.measure.mode == MeasureMode::kBooksimThroughput;
  if (!c.traffic.size_mix_flits.empty() && !booksim_measure) {
    return Status::InvalidArgument(
               "traffic.size_mix_flits: a mix of message sizes runs with BookSim2's measurement "
               "only (measure.mode = booksim or booksim_throughput): our own modes count "
               "traffic.message_bytes per message")
        .WithKey("traffic.size_mix_flits");
  }
  const int64_t flits =
      c.traffic.size_mix_flits.empty()
          ? (static_cast<int64_t>(c.traffic.message_bytes) + r.flit_bytes - 1) / r.flit_bytes
          : SizeMix(c.traffic).largest();
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
  // KaryNCube: coordinates and neighbours per node, the channel alive mask; the partition
  // plan's owner per node (twice: Network and Fabric).
  const double topology =
      nodes * (nc.n * sizeof(int32_t) + (ports - 1) * (sizeof(PortRef) + 1) + 2 * sizeof(int32_t));
  // Per node of this rank: PE, busy and active flags, active list, RNG stream, one
  // scheduled creation, a destination-table entry of the traffic pattern.
  const double per_node = sizeof(Pe) + 2 * sizeof(uint8_t) + sizeof(int32_t) + sizeof(int64_t) +
                          sizeof(Rng) + sizeof(std::pair<int64_t, int32_t>) + sizeof(int);
  const double fixed = 4096 * sizeof(Message) + 1024 * sizeof(std::vector<int32_t>);
  // Under MPI each rank holds its share of the routers and PEs (engine/partition.h).
  const int ranks =
      config.run.ranks == nullptr ? MpiJobSizeFromEnvironment() : config.run.ranks->size();
  const double share = std::max(1.0, nodes / ranks);
  const double routers = std::min(share, double(int64_t{1} << 40));
  return topology + share * per_node + fixed +
         Fabric::StateBytes(static_cast<int64_t>(routers), ports, config.router);
}

Network::~Network() = default;

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
  // router.model = booksim: the injection and ejection channels, and the switch traversal
  // of the last router, which the Fabric counts on the channel after it (router/fabric.h).
  net->endpoint_cycles_ = config.router.model == RouterModel::kBooksim
                              ? kBooksimEndpointCycles + BooksimTraversalCycles(config.router)
                              : 0;
  Result<std::unique_ptr<Topology>> topo = MakeTopology(config.network);
  if (!topo.ok()) return topo.status();
  net->topology_ = std::move(*topo);
  if (config.router.model == RouterModel::kBooksim) {
    // Terminal nodes (the indirect topologies) stand for BookSim2's sources and sinks: their
    // channels and their one cycle each are the injection and ejection (router/fabric.h).
    for (int r = 0; r < net->topology_->NumNodes(); ++r) {
      if (!net->topology_->Forwards(r)) net->endpoint_cycles_ = 0;
    }
  }
  const int nodes = net->topology_->NumNodes();
  net->sent_flits_.assign(static_cast<size_t>(nodes), 0);
  net->sent_packets_.assign(static_cast<size_t>(nodes), 0);
  if (nodes > Fabric::MaxRouters(net->topology_->NumNetworkPorts() + 1, config.router)) {
    return Status::InvalidArgument(
               "network.k: network too large for the router state index (" + std::to_string(nodes) +
               " nodes with router.vcs = " + std::to_string(config.router.vcs) +
               ", router.pe_vcs = " + std::to_string(config.router.pe_vcs) + ")")
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
  if (!config.traffic.size_mix_flits.empty()) {
    net->size_mix_ = std::make_unique<SizeMix>(config.traffic);
    net->message_flits_ = net->size_mix_->largest();
  }
  if (with_traffic) {
    Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(*net->topology_, config.traffic);
    if (!pattern.ok()) return pattern.status();
    net->pattern_ = std::move(*pattern);
    Result<std::unique_ptr<InjectionProcess>> inj = MakeInjection(
        config.traffic, net->size_mix_ ? net->size_mix_->mean() : net->message_flits_);
    if (!inj.ok()) return inj.status();
    net->injection_ = std::move(*inj);
  }
  UKAI_RETURN_IF_ERROR(net->SetUpPartitions());
  // Flits on their way count in their VCs from their arrival (router.model = booksim, one
  // partition; the same results), except where a reconfiguration may purge the VCs.
  net->fabric_->SetDeferredArrivals(config.faults.events.empty() && !config.sss.active());
  net->ApplyFaultState();
  if (with_traffic) {
    for (int i = 0; i < nodes; ++i) {
      if (net->pattern_->Idle(i)) continue;
      ++net->sending_nodes_;
      if (Part* part = net->PartOf(i))
        part->schedule.Push(net->injection_->First(net->rng_[i]), i, 0);
    }
    net->offered_ = net->injection_->OfferedFlitsPerCycle() * net->sending_nodes_ /
                    net->topology_->NumTerminals();  // averaged over the end nodes
  }
  UKAI_RETURN_IF_ERROR(net->ExchangeInitial());
  return net;
}

void Network::EnqueueMessage(Part& part, int32_t id) {
  Message& m = (*messages_)[id];
  Pe& pe = pe_[m.src];
  part.pe_busy[m.src] = 1;
  m.next = -1;
  m.seq = pe.created++;
  if (pe.queue_tail >= 0) {
    (*messages_)[pe.queue_tail].next = id;
  } else {
    pe.queue_head = id;
  }
  pe.queue_tail = id;
  ++pe.held;
  ++part.c.backlog;
  ++part.c.messages_created;
  part.active_flags[m.src] = 1;
}

void Network::CreateMessage(int src, int dst, int flits) { CreateMessage(src, dst, flits, {}, -1); }

int32_t Network::CreateMessage(int src, int dst, int flits, std::span<const int> via, int64_t tag) {
  // Every rank makes this call (the layers above run alike everywhere): the totals move on
  // all of them, the message is queued by the rank holding `src`.
  ++totals_.backlog;
  ++totals_.messages_created;
  totals_.inflight_flits += flits;
  totals_.inflight_created_sum += now_ * static_cast<int64_t>(flits);
  totals_.any_active = 1;
  Part* part = PartOf(src);
  if (part == nullptr) return -1;
  return QueueMessage(*part, src, dst, flits, via, tag, now_);
}

int32_t Network::QueueMessage(Part& part, int src, int dst, int flits, std::span<const int> via,
                              int64_t tag, int64_t created) {
  const int32_t id = messages_->Allocate(part.lane);
  Message& m = (*messages_)[id];
  m.src = src;
  m.dst = dst;
  m.length = flits;
  m.created = created;
  m.tag = tag;
  // BookSim2's in-flight count takes a message from the cycle it is queued (a resend too,
  // aged from its first creation, as its latency and its removal at delivery count it).
  part.c.inflight_flits += flits;
  part.c.inflight_created_sum += created * static_cast<int64_t>(flits);
  // routing.in_order: a pair's messages share one injection VC (and one route and VC).
  if (config_.routing.in_order) m.inject_vc = static_cast<int8_t>(dst % config_.router.pe_vcs);
  m.via_count = static_cast<int16_t>(std::min<size_t>(via.size(), Message::kMaxVia));
  std::copy_n(via.begin(), m.via_count, m.via);
  EnqueueMessage(part, id);
  return id;
}

void Network::CreateTrafficMessages(Part& part) {
  part.schedule.PopDue(now_, &part.due);
  const int bound = config_.traffic.source_queue;
  for (const int32_t node : part.due) {
    if (bound > 0 && pe_[node].held >= bound) {
      pe_[node].waiting = true;  // PeStep() creates it when a message leaves the PE
      continue;
    }
    CreateTrafficMessage(part, node);
  }
}

// One traffic message of `node` now (not generated when its source or destination is
// faulty), and its next creation.
void Network::CreateTrafficMessage(Part& part, int32_t node) {
  Rng& rng = rng_[node];
  const int dst = pattern_->Destination(node, rng);
  if (dst >= 0 && topology_->NodeAlive(node) && topology_->NodeAlive(dst)) {
    QueueMessage(part, node, dst, size_mix_ ? size_mix_->Draw(rng) : message_flits_, {}, -1, now_);
  } else if (dst >= 0) {
    ++part.c.not_generated;
  }
  part.schedule.Push(injection_->Next(now_, rng), node, now_);
}

// Starts the message at the front of the PE's source queue: picks the injection VC
// holding the fewest flits, scanning from a rotating start. False if the queue is empty.
bool Network::StartMessage(Part& part, int32_t node, Pe& pe) {
  if (pe.queue_head < 0 || Paused(node)) return false;
  pe.current = pe.queue_head;
  pe.queue_head = (*messages_)[pe.current].next;
  if (pe.queue_head < 0) pe.queue_tail = -1;
  --part.c.backlog;
  pe.seq = 0;
  pe.length = (*messages_)[pe.current].length;
  const int vcs = config_.router.pe_vcs;
  // From pe.rr (always in [0, vcs)) round the VCs without a division per step.
  int best = pe.rr;
  int best_count = fabric_->InjectionCount(node, best);
  for (int i = 1, v = pe.rr + 1; i < vcs; ++i, ++v) {
    if (v == vcs) v = 0;
    const int count = fabric_->InjectionCount(node, v);
    if (count < best_count) {
      best = v;
      best_count = count;
    }
  }
  const int fixed = (*messages_)[pe.current].inject_vc;
  pe.vc = fixed >= 0 ? fixed % vcs : best;
  pe.rr = pe.rr + 1 == vcs ? 0 : pe.rr + 1;
  return true;
}

// Inlined into EvaluatePart() (its only caller: it runs for every busy PE every cycle).
__attribute__((always_inline)) inline void Network::PeStep(Part& part, int32_t node, Pe& pe) {
  if (pe.current < 0 && !StartMessage(part, node, pe)) return;
  if (fabric_->InjectionFree(node, pe.vc) <= 0) return;
  if (__builtin_expect(gates_, false) && !MayPush(node, pe)) return;
  const bool head = pe.seq == 0;
  if (head && Paused(node)) return;  // no message enters a node paused by a reconfiguration
  const Flit f = Flit::Make(now_ + 1, pe.current, head, pe.seq == pe.length - 1);
  fabric_->Inject(node, pe.vc, f);
  Message& injected = (*messages_)[pe.current];
  if (head) injected.injected = now_ + 1;
  injected.injection_wait_sum = static_cast<int32_t>(std::min<int64_t>(
      INT32_MAX, int64_t{injected.injection_wait_sum} + (now_ + 1 - injected.created)));
  part.c.messages_injected += head;
  ++sent_flits_[node];
  sent_packets_[node] += head;
  ++part.c.flits_injected;
  part.c.last_progress = now_;
  if (++pe.seq == pe.length) {
    if (__builtin_expect(gates_, false) && (*messages_)[pe.current].gated) {
      (*messages_)[pe.current].gated = false;
      available_.erase(pe.current);
    }
    pe.current = -1;
    --pe.held;
    if (pe.waiting) {  // only with a bounded source queue
      pe.waiting = false;
      CreateTrafficMessage(part, node);
    }
    part.pe_busy[node] = pe.queue_head >= 0 ? 1 : 0;
  }
}

// One partition's share of a cycle before the exchange (network_parallel.cc runs it).
void Network::EvaluatePart(Part& part) {
  if (injection_ != nullptr && !traffic_stopped_) CreateTrafficMessages(part);
  // A message source needs a network of one partition (SetMessageSource).
  if (source_ != nullptr) source_->CreateMessages(now_, this);
  CollectActive(part);
  fabric_->Evaluate(part.lane, part.active.data(), static_cast<size_t>(part.num_active), now_);
  // Run the PEs and keep only busy nodes active (Commit() then adds the ones that receive
  // flits). Every router first, then every PE: a PE only touches its own router's
  // injection VCs, which no other router's evaluation reads, so this is the same as
  // router + PE per node.
  int32_t kept = 0;
  for (int32_t i = 0; i < part.num_active; ++i) {
    const int32_t node = part.active[static_cast<size_t>(i)];
    if (part.pe_busy[node]) {
      PeStep(part, node, pe_[node]);
    } else if (!fabric_->HasFlits(node)) {
      part.active_flags[node] = 0;  // nothing left to do (a busy PE keeps the node active)
    }
    kept += part.active_flags[node];
  }
  part.c.any_active = kept > 0 || fabric_->Received(part.lane);
  CollectDeliveries(part);
}

// The flits this partition's ejection ports handed to PEs, their tails as deliveries in
// node order (a router's ejections are consecutive, routers in ascending order).
void Network::CollectDeliveries(Part& part) {
  part.deliveries.clear();
  part.tags.clear();
  for (const EjectedFlit& e : fabric_->Ejections(part.lane)) {
    Message& m = (*messages_)[e.flit.msg()];  // for BookSim2's flit latency, fragmentation
    if (e.flit.head()) m.head_arrival = now_ + 1;
    m.arrival_sum += now_ + 1;
    if (watch_) watched_.push_back({e.node, now_ + 1, e.flit});  // one partition (the NICs)
    if (e.flit.tail()) Eject(part, e);
  }
}

// The tail of a message reached the PE of `e.node`: a delivery (a multicast's copy: once
// per node its routing ejects it at) or, drained by a router, an undeliverable message.
void Network::Eject(Part& part, const EjectedFlit& e) {
  const int32_t id = e.flit.msg();
  Message& m = (*messages_)[id];
  if (m.undeliverable || (m.dst >= 0 && e.node != m.dst) || !topology_->NodeAlive(e.node)) {
    ++part.c.undeliverable;
    if (m.tag >= 0) part.tags.push_back({e.node, m.tag});
  } else {
    const int64_t end = endpoint_cycles_;  // router.model = booksim: the PE channels
    part.deliveries.push_back(
        {m.src, e.node, m.length, m.hops, m.created, m.injected, now_ + 1 + end, m.routing_state,
         m.tag, m.head_arrival + end,
         m.arrival_sum - (m.created * m.length + m.injection_wait_sum) + end * m.length});
    ++part.c.messages_delivered;
    if (m.copies > 1) {  // not the last copy: the message stays in the network
      --m.copies;
      return;
    }
  }
  if (--m.copies > 0) return;
  part.c.inflight_flits -= m.length;
  part.c.inflight_created_sum -= m.created * m.length;
  messages_->Release(id, part.lane);
}

// The topology's liveness into the routers: every node's (a head checks its destination's)
// and the ports of this process's routers.
void Network::ApplyFaultState() {
  for (int r = 0; r < topology_->NumNodes(); ++r) fabric_->SetNodeAlive(r, topology_->NodeAlive(r));
  for (const NodeRun& run : fabric_->local_routers()) {
    for (int r = run.begin; r < run.end; ++r) {
      for (int p = 0; p < topology_->NumNetworkPorts(); ++p) {
        fabric_->SetPortAlive(r, p, topology_->ChannelAlive(r, p));
      }
    }
  }
}

// A failed node's queued messages (not yet started) are undeliverable.
void Network::DropQueue(int32_t node) {
  if (PartOf(node) == nullptr) return;  // another rank's
  Pe& pe = pe_[node];
  while (pe.queue_head >= 0) {
    const int32_t id = pe.queue_head;
    const Message& m = (*messages_)[id];
    pe.queue_head = m.next;
    if (m.tag >= 0) serial_tags_.push_back({static_cast<int64_t>(next_event_), m.tag});
    serial_.inflight_flits -= m.length;  // BookSim2's in-flight count: it left the network
    serial_.inflight_created_sum -= m.created * m.length;
    messages_->Release(id, PartOf(node)->lane);
    --serial_.backlog;
    --pe.held;
    ++serial_.undeliverable;
  }
  pe.queue_tail = -1;
  SetPeBusy(node, pe.current >= 0);
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
  ActivateNodesWithFlits();  // re-route heads waiting at dead ports
}

void Network::ActivateNodesWithFlits() {
  for (const NodeRun& run : fabric_->local_routers()) {
    for (int r = run.begin; r < run.end; ++r) {
      if (fabric_->HasFlits(r)) Activate(r);
    }
  }
}

void Network::Step() {
  deliveries_.clear();
  watched_.clear();
  undeliverable_tags_.clear();
  serial_tags_.clear();
  if (next_event_ < events_.size() && events_[next_event_].cycle <= now_) ApplyDueEvents();
  if (reconfiguring_) AdvanceReconfiguration();
  if (now_ >= next_rebase_) {
    fabric_->RebaseArrivals(now_);
    next_rebase_ = now_ + Fabric::kRebaseInterval;
  }
  RunParts();  // network_parallel.cc
  if (source_ != nullptr) source_->Delivered(deliveries_, undeliverable_tags_, now_);
  ++now_;
}

// The active nodes of `part` in index order (memory order: the hardware prefetchers
// follow it).
void Network::CollectActive(Part& part) {
  int32_t* out = part.active.data();
  const uint8_t* flags = part.active_flags.data();
  int32_t n = 0;
  for (const NodeRun& run : part.runs) {
    int32_t i = run.begin;
    for (; i < run.end && (i & 7) != 0; ++i) {
      out[n] = i;
      n += flags[i];
    }
    for (; i + 8 <= run.end; i += 8) {
      uint64_t w;
      std::memcpy(&w, flags + i, 8);  // eight flags at a time (each 0 or 1)
      if (w == 0) continue;
      for (int32_t j = 0; j < 8; ++j) {  // branch-free compaction
        out[n] = i + j;
        n += flags[i + j];
      }
    }
    for (; i < run.end; ++i) {
      out[n] = i;
      n += flags[i];
    }
  }
  part.num_active = n;
}

int Network::active_nodes() const {
  int n = 0;
  for (const Part& part : parts_) {
    for (const NodeRun& run : part.runs) {
      for (int r = run.begin; r < run.end; ++r) n += part.active_flags[static_cast<size_t>(r)];
    }
  }
  return n;
}

bool Network::SkipIdle(int64_t limit) {
  if ((!totals_.scheduled && source_ == nullptr) || totals_.any_active || reconfiguring_) {
    return false;
  }
  int64_t next = std::min(totals_.scheduled ? totals_.next_creation : MessageSource::kNever, limit);
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
  return flits_in_network() > 0 && now_ - 1 - totals_.last_progress >= cycles + PipelineCycles();
}

void Network::SetHopObserver(std::function<void(const HopEvent&)> observer) {
  if (partitions_ > 1) {
    std::fprintf(stderr, "ukai sim: a hop observer needs a network of one partition\n");
    std::abort();
  }
  fabric_->SetHopObserver(std::move(observer));
}

}  // namespace ukai::sim
