// SssMachine: construction, the NIC's bus, buffers and receive ring, packets and the
// engine's events. Operations and multicast plans are in sss_ops.cc.
#include "sim/nic/sss_nic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/nic/sss_nic_internal.h"
#include "sim/traffic/pattern.h"
#include "wire/link_rate.h"

namespace ukai::sim {

SssMachine::~SssMachine() = default;

Result<std::unique_ptr<SssMachine>> SssMachine::Create(const SimConfig& config) {
  std::unique_ptr<SssMachine> m(new SssMachine());
  UKAI_RETURN_IF_ERROR(m->Init(config));
  return m;
}

namespace {

Status FitsBuffers(const SimConfig& config, int64_t wire, const char* what) {
  const int32_t flits = WireFlits(wire, config.router.flit_bytes);
  if (flits > config.router.vc_buffer_flits) {
    return Status::InvalidArgument(
               fmt::format(
                   "router.vc_buffer_flits: {} of {} bytes is {} flits of {} bytes, more than a VC "
                   "buffer holds ({}); raise router.vc_buffer_flits or lower "
                   "nic.max_payload_bytes",
                   what, wire, flits, config.router.flit_bytes, config.router.vc_buffer_flits))
        .WithKey("router.vc_buffer_flits");
  }
  if (flits > config.sss.receive_buffer_bytes / config.router.flit_bytes) {
    return Status::InvalidArgument(fmt::format("nic.receive_buffer_bytes: {} of {} bytes does not "
                                               "fit the receive ring ({} bytes)",
                                               what, wire, config.sss.receive_buffer_bytes))
        .WithKey("nic.receive_buffer_bytes");
  }
  return Status::Ok();
}

Status CheckNames(const GraphTopology& t, const SssConfig& c) {
  auto end_node = [&](const char* key, const std::string& name) {
    const int node = t.Find(name);
    return node >= 0 && node < t.NumTerminals()
               ? Status::Ok()
               : Status::InvalidArgument(
                     fmt::format("{}: '{}' is not an end node of the {}", key, name, t.Describe()))
                     .WithKey(key);
  };
  for (const std::string& name : c.copy_switches) {
    const int node = t.Find(name);
    if (node < 0 || !t.IsSwitch(node)) {
      return Status::InvalidArgument("network.copy_switches: '" + name +
                                     "' is not a switch of the " + t.Describe())
          .WithKey("network.copy_switches");
    }
  }
  for (const std::string& name : c.sources) {
    UKAI_RETURN_IF_ERROR(end_node("traffic.sources", name));
  }
  for (const auto& group : c.multicast_groups) {
    for (const std::string& name : group) {
      UKAI_RETURN_IF_ERROR(end_node("traffic.multicast_groups", name));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSssConfig(const SimConfig& config, const Topology& topology) {
  const SssConfig& c = config.sss;
  const auto* graph = dynamic_cast<const GraphTopology*>(&topology);
  if (graph == nullptr) {
    return Status::InvalidArgument(
               "traffic.operation: the SSS NIC model runs on network.topology = \"graph\" or "
               "\"tree\"")
        .WithKey("traffic.operation");
  }
  if (config.routing.algorithm != "source") {
    return Status::InvalidArgument(
               "routing.algorithm: the SSS NIC model needs 'source' (the NIC writes the route into "
               "the header), got '" +
               config.routing.algorithm + "'")
        .WithKey("routing.algorithm");
  }
  if (config.router.switching == Switching::kWormhole) {
    return Status::InvalidArgument(
               "router.switching: the SSS NIC model admits a packet only with room for all of it "
               "(virtual cut-through): use 'vct-saf', 'vct' or 'saf', not 'wormhole'")
        .WithKey("router.switching");
  }
  if (config.router.clock_mhz != 0) {
    return Status::InvalidArgument(
               "router.clock_mhz: the SSS NIC model derives the clock from link.raw_gbps and "
               "router.flit_bytes (one flit of data per cycle); leave it 0")
        .WithKey("router.clock_mhz");
  }
  if (config.measure.mode != MeasureMode::kMessages) {
    return Status::InvalidArgument(
               "measure.mode: the SSS NIC model measures operations (\"messages\" mode: "
               "measure.warmup_messages, measure.measure_messages)")
        .WithKey("measure.mode");
  }
  if (c.multicast != MulticastKind::kNone && c.operation != RmaOperation::kWrite) {
    return Status::InvalidArgument(
               "traffic.multicast: a multicast is a remote write (traffic.operation = \"write\")")
        .WithKey("traffic.multicast");
  }
  if (c.multicast != MulticastKind::kNone && c.multicast_groups.empty() &&
      c.multicast_group_size > topology.NumTerminals() - 1) {
    return Status::InvalidArgument(fmt::format("traffic.multicast_group_size: {} members, but a "
                                               "source has only {} other end nodes",
                                               c.multicast_group_size, topology.NumTerminals() - 1))
        .WithKey("traffic.multicast_group_size");
  }
  if (c.multicast == MulticastKind::kNone && config.traffic.message_bytes > (int64_t{1} << 30)) {
    return Status::InvalidArgument("traffic.message_bytes: at most 2^30 bytes per operation")
        .WithKey("traffic.message_bytes");
  }
  UKAI_RETURN_IF_ERROR(CheckNames(*graph, c));
  if (c.multicast == MulticastKind::kNone) {
    Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(topology, config.traffic);
    if (!pattern.ok()) return pattern.status();
  }
  Result<std::unique_ptr<SourceRouteTable>> table =
      SourceRouteTable::Build(topology, config.routing.source_routes, config.routing.root,
                              config.routing.in_order ? 1 : config.routing.source_paths);
  if (!table.ok()) return table.status();
  int max_switches = 0;
  for (int s = 0; s < topology.NumTerminals(); ++s) {
    for (int d = 0; d < topology.NumTerminals(); ++d) {
      for (int k = 0; s != d && k < (*table)->Paths(s, d); ++k) {
        max_switches = std::max(max_switches, static_cast<int>((*table)->Path(s, d, k).size()) - 1);
      }
    }
  }
  return FitsBuffers(config, WireBytes(c, max_switches, c.ack_bytes, c.max_payload_bytes),
                     "the largest unicast packet");
}

Status SssMachine::Init(const SimConfig& config) {
  config_ = config;
  const SssConfig& c = config.sss;
  Result<std::unique_ptr<Network>> net = Network::Create(config, {}, /*with_traffic=*/false);
  if (!net.ok()) return net.status();
  net_ = std::move(*net);
  UKAI_RETURN_IF_ERROR(CheckSssConfig(config, net_->topology()));
  Result<wire::LinkRates> rates =
      wire::ComputeLinkRates({c.raw_gbps, wire::LineCode::k8b10b, 0, 0});
  if (!rates.ok()) {
    return Status::InvalidArgument("link.raw_gbps: " + rates.status().message())
        .WithKey("link.raw_gbps");
  }
  clock_mhz_ = rates->data_rate_bps / (8.0 * config.router.flit_bytes) / 1e6;
  bus_per_cycle_ = c.bus_mbytes_per_s / clock_mhz_;
  sram_per_cycle_ = c.buffer_mbytes_per_s / clock_mhz_;
  topo_ = dynamic_cast<const GraphTopology*>(&net_->topology());
  routing_ = dynamic_cast<SourceRouting*>(const_cast<RoutingFunction*>(&net_->routing()));
  if (topo_ == nullptr || routing_ == nullptr) {
    return Status::Internal("SSS NIC model: the network is not a graph with source routing");
  }
  const int terminals = topo_->NumTerminals();
  ring_flits_ = static_cast<int32_t>(
      std::min<int64_t>(c.receive_buffer_bytes / config.router.flit_bytes, int64_t{1} << 30));
  copy_.assign(topo_->NumNodes(), c.copy_all ? 1 : 0);
  for (const std::string& name : c.copy_switches) copy_[topo_->Find(name)] = 1;
  nics_.resize(terminals);
  for (int t = 0; t < terminals; ++t) {
    nics_[t] = std::make_unique<Nic>();
    nics_[t]->sram = sram_per_cycle_;
    net_->SetEjectCredits(t, ring_flits_);
  }
  pair_turn_.assign(static_cast<size_t>(terminals) * terminals, 0);
  net_->SetPeGate(this);
  net_->WatchEjections(true);
  net_->SetHopObserver([this](const HopEvent& e) { OnHop(e); });
  return Status::Ok();
}

Status SssMachine::CheckFits(int64_t wire, const char* what) const {
  return FitsBuffers(config_, wire, what);
}

Result<int64_t> SssMachine::Submit(const SssOp& spec) {
  const int terminals = topo_->NumTerminals();
  auto end_node = [&](int n) { return n >= 0 && n < terminals; };
  if (!end_node(spec.src)) return Status::InvalidArgument("SSS operation: bad source node");
  if (spec.bytes < 0) return Status::InvalidArgument("SSS operation: negative size");
  const int64_t id = next_op_++;
  auto op = std::make_unique<Op>();
  op->spec = spec;
  op->started = now();
  op->measured = spec.measured;
  Op& o = *op;
  ops_[id] = std::move(op);
  Status st;
  switch (spec.kind) {
    case SssOp::Kind::kWrite:
      st = end_node(spec.dst) && spec.dst != spec.src
               ? StartWrite(id, spec)
               : Status::InvalidArgument("SSS write: the target must be another end node");
      break;
    case SssOp::Kind::kRead:
      st = end_node(spec.dst) && spec.dst != spec.src
               ? StartRead(id, spec)
               : Status::InvalidArgument("SSS read: the target must be another end node");
      break;
    case SssOp::Kind::kMulticast:
      st = StartMulticast(id, spec);
      break;
  }
  if (!st.ok()) {
    ops_.erase(id);
    return st;
  }
  (void)o;
  return id;
}

int64_t SssMachine::deliveries(int64_t op, int node) const {
  auto it = delivered_.find(op << 20 | node);
  return it == delivered_.end() ? 0 : it->second;
}

bool SssMachine::Idle() const {
  return dma_active_.empty() && outbox_.empty() && net_->flits_in_network() == 0 &&
         net_->backlog() == 0 && net_->active_nodes() == 0;
}

void SssMachine::SkipTo(int64_t cycle) {
  if (Idle()) net_->AdvanceIdle(cycle);
}

void SssMachine::Step() {
  completions_.clear();
  Flush();  // what Submit() sent
  net_->Step();
  for (const Ejection& e : net_->ejected_flits()) OnEjected(e);
  for (const Delivery& d : net_->deliveries()) OnDelivered(d);
  for (int64_t tag : net_->undeliverable_tags()) {
    ++counters_.packets_dropped;
    (void)tag;
  }
  // The buses move what the buffers allow after the links (DmaDone may queue more work).
  const std::vector<int> nodes = dma_active_;
  for (int node : nodes) AdvanceDma(node);
  dma_active_.erase(std::remove_if(dma_active_.begin(), dma_active_.end(),
                                   [this](int n) {
                                     if (!nics_[n]->Idle()) return false;
                                     nics_[n]->listed = false;
                                     return true;
                                   }),
                    dma_active_.end());
  Flush();
}

// ---- bus and buffers ----

void SssMachine::Refill(Nic& nic, int64_t now) {
  if (now <= nic.sram_cycle) return;
  const double cap = sram_per_cycle_ + config_.router.flit_bytes;
  nic.sram = std::min(cap, nic.sram + static_cast<double>(now - nic.sram_cycle) * sram_per_cycle_);
  nic.sram_cycle = now;
}

bool SssMachine::TryInject(int32_t node, int64_t now, bool head) {
  if (node >= static_cast<int32_t>(nics_.size())) return true;  // a switch's unit
  Nic& nic = *nics_[node];
  Refill(nic, now);
  if (head && nic.sram < config_.router.flit_bytes) return false;
  nic.sram -= config_.router.flit_bytes;
  return true;
}

void SssMachine::QueueDma(int node, bool send, int64_t bytes, int64_t packet) {
  Nic& nic = *nics_[node];
  nic.Queue({send, bytes, packet, -1});
  if (packet >= 0) ++packets_[packet]->pending;
  if (!nic.listed) {
    nic.listed = true;
    dma_active_.push_back(node);
  }
}

void SssMachine::AdvanceDma(int node) {
  Nic& nic = *nics_[node];
  Refill(nic, now());
  double budget = std::min(bus_per_cycle_, std::max(0.0, nic.sram));
  for (;;) {
    if (!nic.busy) {
      if (nic.receive.empty() && nic.send.empty()) break;
      std::deque<Nic::Dma>& q = nic.receive.empty() ? nic.send : nic.receive;
      nic.current = q.front();
      q.pop_front();
      nic.busy = true;
      nic.moved = 0;
    }
    const Nic::Dma job = nic.current;
    const double use = std::min(static_cast<double>(job.bytes) - nic.moved, budget);
    nic.moved += use;
    budget -= use;
    nic.sram -= use;
    counters_.dma_bytes += static_cast<int64_t>(std::llround(use));
    if (nic.moved + 1e-9 < static_cast<double>(job.bytes)) break;
    nic.busy = false;
    if (job.run >= 0) {
      for (int tx : runs_[job.run]->plan.source_sends) StartTx(job.run, tx, -1, -1);
    } else {
      DmaDone(node, job.send, job.packet);
    }
  }
}

void SssMachine::DmaDone(int node, bool send, int64_t packet) {
  Packet& p = *packets_[packet];
  if (send) {
    Send(packet, p.route, p.copies);
  } else {
    Nic& nic = *nics_[node];
    nic.ring_bytes -= p.wire;
    net_->ReturnEjectCredits(node, p.flits);
    if (p.kind == SssPacketKind::kAck) {
      AckArrived(packet);
    } else {
      PacketInMemory(packet, node);
    }
  }
  Release(packet);
}

void SssMachine::Release(int64_t packet) {
  Packet& p = *packets_[packet];
  if (--p.pending > 0) return;
  if (p.dynamic >= 0) routing_->Remove(p.dynamic);
  free_packets_.push_back(packet);
}

// ---- packets ----

int64_t SssMachine::NewPacket(int64_t op, SssPacketKind kind, int src, int dst, int64_t payload) {
  int64_t id;
  if (!free_packets_.empty()) {
    id = free_packets_.back();
    free_packets_.pop_back();
    *packets_[id] = Packet();
  } else {
    id = static_cast<int64_t>(packets_.size());
    packets_.push_back(std::make_unique<Packet>());
  }
  Packet& p = *packets_[id];
  p.op = op;
  p.kind = kind;
  p.src = src;
  p.dst = dst;
  p.payload = payload;
  auto it = ops_.find(op);
  p.measured = it != ops_.end() && it->second->measured;
  return id;
}

void SssMachine::Send(int64_t packet, int route, int copies) {
  Packet& p = *packets_[packet];
  p.route = route;
  p.copies = copies;
  p.flits = WireFlits(p.wire, config_.router.flit_bytes);
  p.pending += copies;
  outbox_.push_back(packet);
}

void SssMachine::Flush() {
  for (int64_t packet : outbox_) {
    Packet& p = *packets_[packet];
    NewMessage m;
    m.src = p.src;
    m.dst = p.dst;
    m.flits = p.flits;
    m.tag = packet;
    m.route = p.route;
    m.copies = p.copies;
    m.urgent = p.urgent;
    Packet::Feed* feed = nullptr;
    if (p.feeder >= 0) {
      auto it = packets_[p.feeder]->feeds.find(p.feeder_node);
      if (it != packets_[p.feeder]->feeds.end()) feed = &it->second;  // else: all arrived
    }
    if (feed != nullptr) {
      m.gated = true;
      m.available = feed->received;
    }
    if (config_.routing.in_order && p.dst >= 0) m.inject_vc = p.dst % config_.router.pe_vcs;
    p.msg = net_->CreateMessage(m);
    msg_packet_[p.msg] = packet;
    if (feed != nullptr) feed->fed.push_back({p.msg, p.flits});
    if (p.measured) {
      counters_.payload_bytes += p.payload;
      counters_.wire_bytes += p.wire;
      ++counters_.packets_sent;
      if (p.kind == SssPacketKind::kAck) ++counters_.ack_packets;
    }
  }
  outbox_.clear();
}

void SssMachine::SendUnicast(int64_t packet, int src, int dst, const std::vector<RouteHop>* path) {
  Packet& p = *packets_[packet];
  const int terminals = topo_->NumTerminals();
  int route = -1;
  if (path != nullptr && !path->empty() && (src >= terminals || dst >= terminals)) {
    p.dynamic = routing_->AddPath(*path);
    route = p.dynamic;
  } else if (path != nullptr && !path->empty()) {
    p.dynamic = routing_->AddPath(*path);
    route = p.dynamic;
  } else {
    // A pair of end nodes: the pair's table routes in turn (route 0 only in order).
    uint8_t& turn = pair_turn_[static_cast<size_t>(src) * terminals + dst];
    const int paths = routing_->table().Paths(src, dst);
    route = config_.routing.in_order || paths == 0 ? 0 : turn % paths;
    turn = static_cast<uint8_t>((turn + 1) % 15);
  }
  p.route = route;
}

void SssMachine::OnHop(const HopEvent& e) {
  if (e.out_port >= topo_->NumNetworkPorts() || !topo_->UpperChannel(e.node, e.out_port)) return;
  auto it = msg_packet_.find(e.msg);
  if (it == msg_packet_.end()) return;
  const Packet& p = *packets_[it->second];
  if (!p.measured) return;
  counters_.upper_link_bytes += p.wire;
  ++counters_.upper_link_packets;
}

void SssMachine::OnEjected(const Ejection& e) {
  if (e.node < static_cast<int32_t>(nics_.size())) {  // a NIC: the receive side takes the SRAM
    Nic& nic = *nics_[e.node];
    Refill(nic, e.cycle - 1);
    nic.sram -= config_.router.flit_bytes;
  }
  auto it = msg_packet_.find(e.flit.msg());
  if (it == msg_packet_.end()) return;
  Packet& p = *packets_[it->second];
  if (e.flit.head() && p.run >= 0) {
    const int unit = UnitAt(p, e.node);
    if (unit >= 0 && !runs_[p.run]->plan.units[unit].sends.empty()) {
      AtUnitHead(p.run, unit, e.flit.msg());
    }
  }
  auto feed = p.feeds.find(e.node);
  if (feed == p.feeds.end()) return;
  Packet::Feed& f = feed->second;
  ++f.received;
  for (auto& [msg, flits] : f.fed) {
    if (flits > 0) net_->SetAvailable(msg, e.flit.tail() ? -1 : f.received);
    if (e.flit.tail() || f.received >= flits) flits = 0;  // done: never touch it again
  }
  if (e.flit.tail()) p.feeds.erase(feed);
}

void SssMachine::OnDelivered(const Delivery& d) {
  if (d.tag < 0 || d.tag >= static_cast<int64_t>(packets_.size())) return;
  const int64_t packet = d.tag;
  Packet& p = *packets_[packet];
  const int node = d.dst;
  ++counters_.packets_delivered;
  if (p.measured) {
    ++counters_.measured_packets_delivered;
    counters_.measured_packet_hops += d.hops;
    counters_.measured_packet_network_cycles += d.delivered - d.injected;
  }
  if (--p.copies == 0) msg_packet_.erase(p.msg);  // the engine has released its message
  // (Flush() creates no message before the cycle's events are done, so p.msg is still ours.)
  const bool nic = node < static_cast<int>(nics_.size());
  if (nic) {
    Nic& n = *nics_[node];
    n.ring_bytes += p.wire;
    counters_.receive_ring_peak_bytes = std::max(counters_.receive_ring_peak_bytes, n.ring_bytes);
  }
  switch (p.kind) {
    case SssPacketKind::kWrite:
    case SssPacketKind::kReadReply:
      if (p.run >= 0) {
        AtUnitTail(p.run, UnitAt(p, node), packet);
      } else {
        QueueDma(node, false, p.payload, packet);
      }
      break;
    case SssPacketKind::kReadRequest:
      nics_[node]->ring_bytes -= p.wire;
      net_->ReturnEjectCredits(node, p.flits);
      SendReplies(packet, node);
      break;
    case SssPacketKind::kAck:
      if (nic) {
        QueueDma(node, false, p.payload, packet);  // the SS-Wait flag is written to memory
      } else {
        AckArrived(packet);  // a switch's unit combines it
      }
      break;
    case SssPacketKind::kMulticastTree:
    case SssPacketKind::kMulticastChain:
    case SssPacketKind::kConverted:
      AtUnitTail(p.run, UnitAt(p, node), packet);
      break;
  }
  Release(packet);
}

}  // namespace ukai::sim
