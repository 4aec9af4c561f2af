#include "sim/nic/gateway.h"

#include <algorithm>
#include <cctype>

#include "sim/nic/frame_source.h"
#include "sim/routing/detour.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {

namespace {

Result<int> ParseNodeName(const Topology& t, const std::string& key, const std::string& name) {
  NodeRef ref;
  const bool digits = !name.empty() && name.size() < 10 &&
                      name.find_first_not_of("0123456789") == std::string::npos;
  ref.form = digits ? NodeRef::Form::kNumber : NodeRef::Form::kName;
  if (digits) ref.number = std::stoll(name);
  ref.name = name;
  ref.text = "\"" + name + "\"";
  ref.where = "in " + key;
  Result<int> node = t.ParseNode(ref);
  if (!node.ok()) return Status::InvalidArgument(key + ": " + node.status().message()).WithKey(key);
  return node;
}

std::vector<uint32_t> ToWire(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// Default MACs 02:00:00:00:HH:LL, then nic.macs ("NODE=aa:bb:cc:dd:ee:ff") over them.
Status ResolveMacs(const Topology& t, const std::vector<std::string>& entries, NicNodes* out) {
  std::vector<Mac>& macs = out->macs;
  macs.resize(t.NumNodes());
  for (int i = 0; i < t.NumNodes(); ++i) macs[i] = 0x020000000000ULL | static_cast<Mac>(i);
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    Result<int> node = eq == std::string::npos ? Result<int>(Status::InvalidArgument("no '='"))
                                               : ParseNodeName(t, "nic.macs", entry.substr(0, eq));
    Mac mac = 0;
    int digits = 0;
    bool ok = node.ok();
    for (size_t i = eq + 1; ok && i < entry.size(); ++i) {
      const char ch = entry[i];
      if (std::isxdigit(static_cast<unsigned char>(ch)) && (i - eq) % 3 != 0) {
        mac = (mac << 4) | static_cast<Mac>(std::stoi(std::string(1, ch), nullptr, 16));
        ++digits;
      } else {
        ok = ch == ':' && (i - eq) % 3 == 0;
      }
    }
    if (!ok || digits != 12 || entry.size() - eq != 18) {
      return Status::InvalidArgument("nic.macs: \"" + entry + "\" is not NODE=aa:bb:cc:dd:ee:ff" +
                                     (node.ok() ? "" : " (" + node.status().message() + ")"))
          .WithKey("nic.macs");
    }
    macs[*node] = mac;
  }
  std::unordered_map<Mac, int> owner;
  for (int i = 0; i < t.NumNodes(); ++i) {
    if (!owner.emplace(macs[i], i).second) {
      return Status::InvalidArgument("nic.macs: nodes " + t.NodeName(owner[macs[i]]) + " and " +
                                     t.NodeName(i) + " have the same MAC")
          .WithKey("nic.macs");
    }
  }
  return Status::Ok();
}

// nic.jobs: each launch's nodes as NIC indices; NICs first enabled there join `all`.
Status ResolveJobs(const SimConfig& c, const Topology& t, NicNodes* out) {
  out->all = out->enabled;
  for (const NicJobLaunch& job : c.nic.jobs) {
    std::vector<int> nics;
    for (const std::string& name : job.enabled) {
      Result<int> node = ParseNodeName(t, "nic.jobs", name);
      if (!node.ok()) {
        return Status::InvalidArgument(node.status().message() + " " + job.where)
            .WithKey(node.status().key());
      }
      auto it = std::find(out->all.begin(), out->all.end(), *node);
      const int k = static_cast<int>(it - out->all.begin());
      if (it == out->all.end()) out->all.push_back(*node);
      if (std::find(nics.begin(), nics.end(), k) != nics.end()) {
        return Status::InvalidArgument("nic.jobs: node " + name + " listed twice " + job.where)
            .WithKey("nic.jobs");
      }
      nics.push_back(k);
    }
    out->jobs.emplace_back(job.cycle, std::move(nics));
  }
  return Status::Ok();
}

}  // namespace

Result<NicNodes> ResolveNicConfig(const SimConfig& c, const Topology& t) {
  if (c.routing.algorithm != "dor-detour") {
    return Status::InvalidArgument(
               "routing.algorithm: the gateway model (nic.*) needs 'dor-detour' (via-node "
               "detours), "
               "got '" +
               c.routing.algorithm + "'")
        .WithKey("routing.algorithm");
  }
  NicNodes out;
  if (c.nic.enabled.empty())
    return Status::InvalidArgument("nic.enabled: no NIC enabled").WithKey("nic.enabled");
  for (const std::string& name : c.nic.enabled) {
    Result<int> node = ParseNodeName(t, "nic.enabled", name);
    if (!node.ok()) return node.status();
    if (std::find(out.enabled.begin(), out.enabled.end(), *node) != out.enabled.end()) {
      return Status::InvalidArgument("nic.enabled: node " + name + " listed twice")
          .WithKey("nic.enabled");
    }
    out.enabled.push_back(*node);
  }
  UKAI_RETURN_IF_ERROR(ResolveJobs(c, t, &out));
  Result<int> mgmt = ParseNodeName(t, "nic.management_node", c.nic.management_node);
  if (!mgmt.ok()) return mgmt.status();
  out.management = *mgmt;
  UKAI_RETURN_IF_ERROR(ResolveMacs(t, c.nic.macs, &out));
  return out;
}

Result<std::unique_ptr<Gateway>> Gateway::Create(const SimConfig& config,
                                                 std::unique_ptr<FrameSource> source,
                                                 std::unique_ptr<FrameSink> sink) {
  std::unique_ptr<Gateway> g(new Gateway());
  g->source_ = std::move(source);
  g->sink_ = std::move(sink);
  UKAI_RETURN_IF_ERROR(g->Init(config));
  return g;
}

Status Gateway::Init(const SimConfig& config) {
  config_ = config;
  Result<std::unique_ptr<Network>> net = Network::Create(config, {}, config.nic.internal_traffic);
  if (!net.ok()) return net.status();
  net_ = std::move(*net);
  const Topology& t = net_->topology();
  planner_ = DorPlanner::For(t);
  Result<NicNodes> nodes = ResolveNicConfig(config, t);
  if (!nodes.ok()) return nodes.status();
  nic_nodes_ = nodes->all;
  for (int node : nic_nodes_) {
    nics_.push_back(
        std::make_unique<GatewayNic>(node, config.nic.detours == DetourPolicy::kLearned));
  }
  mgmt_ = nodes->management;
  macs_ = nodes->macs;
  const int n = t.NumNodes();
  for (int i = 0; i < n; ++i) owner_[macs_[i]] = i;
  known_faulty_.assign(n, 0);
  for (int i = 0; i < n; ++i) known_faulty_[i] = net_->faults().NodeFaulty(i) ? 1 : 0;
  for (size_t k = 0; k < nodes->enabled.size(); ++k) {
    if (known_faulty_[nic_nodes_[k]] != 0) {
      return Status::InvalidArgument("nic.enabled: I/O node " + t.NodeName(nic_nodes_[k]) +
                                     " is faulty at boot")
          .WithKey("nic.enabled");
    }
  }
  nic_queue_.resize(nic_nodes_.size());
  egress_cpu_queue_.resize(nic_nodes_.size());
  cpu_free_.assign(nic_nodes_.size(), 0);
  counters_.nic_frames.assign(nic_nodes_.size(), 0);
  counters_.cpu_busy.assign(nic_nodes_.size(), 0);
  rng_ = Rng::Stream(config.seed, uint64_t{1} << 42);
  events_seen_ = net_->fault_events_applied();
  InitManagement(*nodes);
  if (source_ == nullptr && config.nic.frames > 0) {
    std::vector<Mac> macs;
    for (int i = 0; i < n; ++i) macs.push_back(MacOf(i));
    source_ = MakeSyntheticSource(std::move(macs), config.nic.frames, config.nic.ingress_rate,
                                  config.nic.ingress_frame_bytes, config.nic.bad_fcs_fraction,
                                  config.seed);
  }
  if (source_ == nullptr) source_done_ = true;
  return Status::Ok();
}

int Gateway::MaxVia() const {
  const int classes = planner_->classes();
  const int layers = std::min(DetourRouting::kMaxLayers, config_.router.vcs / classes);
  return std::clamp(layers - 1, 1, 2);
}

int Gateway::Flits(size_t bytes) const {
  const size_t fb = static_cast<size_t>(config_.router.flit_bytes);
  return static_cast<int>(std::max<size_t>(1, (bytes + fb - 1) / fb));
}

int64_t Gateway::Tag(Tagged t) {
  const int64_t tag = next_tag_++;
  tagged_.emplace(tag, std::move(t));
  return tag;
}

// Frames whose arrival cycle has come reach the switch.
Status Gateway::PullIngress() {
  const int64_t now = net_->now();
  while (!source_done_) {
    if (!have_pending_) {
      Result<bool> got = source_->Next(&pending_);
      if (!got.ok()) return got.status();
      if (!*got) {
        source_done_ = true;
        break;
      }
      have_pending_ = true;
    }
    if (pending_.cycle > now) break;
    have_pending_ = false;
    InjectIngress(std::move(pending_));
  }
  while (!retries_.empty() && retries_.front().first <= now) {
    const int64_t id = retries_.front().second;
    retries_.pop_front();
    ++counters_.frames_retransmitted;
    AtSwitch(id);
  }
  return Status::Ok();
}

void Gateway::InjectIngress(IngressFrame frame) {
  const int64_t id = next_frame_++;
  Frame f;
  f.arrived = net_->now();
  if (frame.bytes.size() >= 6) {
    f.dst = ReadMac(frame.bytes.data());
    auto it = owner_.find(f.dst);
    if (it != owner_.end()) f.owner = it->second;
  }
  f.frame = std::move(frame);
  frames_.emplace(id, std::move(f));
  ++counters_.frames_in;
  if (counters_.first_arrival < 0) counters_.first_arrival = net_->now();
  counters_.last_arrival = net_->now();
  AtSwitch(id);
  counters_.backlog_at_last_arrival = counters_.frames_in - counters_.frames_settled;
}

// Fig. 1: the cycle a frame arriving now at NIC `k`'s I/O node leaves its CPU (one frame
// at a time); now when there is no CPU cost.
int64_t Gateway::CpuReady(int k) {
  const int64_t cost = config_.nic.cpu_cycles_per_frame;
  if (cost <= 0) return net_->now();
  cpu_free_[k] = std::max(net_->now(), cpu_free_[k]) + cost;
  counters_.cpu_busy[k] += cost;
  return cpu_free_[k];
}

// The external learning switch hands the frame to one NIC (its CPU first in Fig. 1).
void Gateway::AtSwitch(int64_t id) {
  const Frame& f = frames_.at(id);
  auto it = switch_table_.find(f.dst);
  if (ports_up_.empty()) {  // no NIC enabled at this moment (a job launch switching over)
    ++counters_.frames_dropped_disabled;
    Finish(id, false);
    return;
  }
  const int k = it != switch_table_.end() ? it->second
                                          : ports_up_[f.dst % static_cast<Mac>(ports_up_.size())];
  ++counters_.nic_frames[k];
  nic_queue_[k].emplace_back(CpuReady(k), id);
}

void Gateway::AtNic(int k, int64_t id) {
  Frame& f = frames_.at(id);
  InboundPacket& in = inbound_;
  nics_[k]->Receive(f.frame.bytes, f.frame.has_fcs, &in);
  if (in.discarded) {
    ++counters_.frames_fcs_discarded;
    if (!f.settled) ++counters_.frames_settled;
    frames_.erase(id);
    return;
  }
  if (in.broadcast) ++counters_.broadcasts;
  SendInbound(k, id, in);
}

// S24: the unicast packet, or one broadcast copy per live node.
void Gateway::SendInbound(int k, int64_t id, const InboundPacket& in) {
  const int io = nic_nodes_[k];
  const int flits = Flits(in.bytes.size());
  if (!in.broadcast) {
    Tagged t;
    t.frame = id;
    net_->CreateMessage(io, in.node, flits, in.detour, Tag(std::move(t)));
    return;
  }
  std::vector<std::vector<int>> detour_of(net_->topology().NumNodes());
  for (const AddressRow& r : nics_[k]->table().Rows()) detour_of[r.node] = r.detour;
  int copies = 0;
  for (int node = 0; node < net_->topology().NumNodes(); ++node) {
    if (net_->faults().NodeFaulty(node)) continue;
    Tagged t;
    t.kind = Tagged::kBroadcastCopy;
    t.frame = id;
    t.node = node;
    t.owner_copy = node == frames_.at(id).owner;
    net_->CreateMessage(io, node, flits, detour_of[node], Tag(std::move(t)));
    ++copies;
  }
  frames_.at(id).copies = copies;
  if (copies == 0) Finish(id, false);
}

// One broadcast copy arrived (`delivered`) or was lost; the owner's decides the frame,
// and a frame none of whose copies reached an owner ends when the last copy is done.
void Gateway::CopyDone(int64_t id, bool owner_copy, bool delivered) {
  if (!owner_copy && delivered) ++counters_.broadcast_copies_dropped;  // dropped there
  auto it = frames_.find(id);
  if (it == frames_.end()) return;  // already decided by the owner's copy
  if (owner_copy) {
    Finish(id, delivered);
  } else if (--it->second.copies == 0) {
    Finish(id, false);
  }
}

// Compute nodes send frames to the outside through their I/O node (Bernoulli per node).
void Gateway::GenerateEgress() {
  const NicConfig& c = config_.nic;
  if (c.egress_rate <= 0 || (c.egress_frames > 0 && egress_sent_ >= c.egress_frames)) return;
  for (int node = 0; node < net_->topology().NumNodes(); ++node) {
    if (net_->faults().NodeFaulty(node) || rng_.NextDouble() >= c.egress_rate) continue;
    const Mac dst = kExternalMacBase | (rng_.NextU64() & 0xFFFF);
    SendEgress(node, BuildFrame(dst, MacOf(node), static_cast<uint64_t>(egress_sent_),
                                c.egress_frame_bytes, false));
    if (c.egress_frames > 0 && egress_sent_ >= c.egress_frames) return;
  }
}

void Gateway::SendEgress(int node, std::span<const uint8_t> frame) {
  SendEgressTry(node, frame, 1);
  ++egress_sent_;
}

void Gateway::SendEgressTry(int node, std::span<const uint8_t> frame, int tries) {
  const int k = io_of_[node];
  const int io = nic_nodes_[k];
  wire::GatewayPacket p;
  p.to_nic = true;
  p.dst = static_cast<uint32_t>(io);
  p.has_command = true;
  p.command.src = static_cast<uint32_t>(node);
  p.command.dst = static_cast<uint32_t>(io);
  if (config_.nic.detours != DetourPolicy::kNone) {
    p.command.return_detour = ToWire(return_detour_[node]);
  }
  p.frame.assign(frame.begin(), frame.end());
  Tagged t;
  t.kind = Tagged::kEgress;
  t.nic = k;
  t.node = node;
  t.tries = tries;
  t.bytes = wire::EncodePacket(p).value();
  const int flits = Flits(t.bytes.size());
  net_->CreateMessage(node, io, flits, out_detour_[node], Tag(std::move(t)));
}

void Gateway::Finish(int64_t id, bool delivered) {
  auto it = frames_.find(id);
  if (it == frames_.end()) return;
  Frame& f = it->second;
  if (!f.settled) ++counters_.frames_settled;
  f.settled = true;
  if (delivered) {
    ++counters_.frames_delivered;
    counters_.latency.Add(net_->now() - f.arrived);
  } else if (f.owner < 0) {
    ++counters_.frames_no_owner;
  } else if (net_->faults().NodeFaulty(f.owner)) {
    ++counters_.frames_owner_faulty;
  } else if (config_.nic.retransmit && f.tries < config_.nic.retransmit_max) {
    ++f.tries;
    retries_.emplace_back(net_->now() + config_.nic.retransmit_timeout_cycles, id);
    return;
  } else {
    ++counters_.frames_lost;
  }
  frames_.erase(it);
}

Status Gateway::HandleDeliveries() {
  for (const Delivery& d : net_->deliveries()) {
    auto it = d.tag < 0 ? tagged_.end() : tagged_.find(d.tag);
    if (it == tagged_.end()) continue;
    Tagged t = std::move(it->second);
    tagged_.erase(it);
    switch (t.kind) {
      case Tagged::kIngress:
        Finish(t.frame, true);
        break;
      case Tagged::kBroadcastCopy:
        CopyDone(t.frame, t.owner_copy, true);
        break;
      case Tagged::kEgress: {
        if (nic_on_[t.nic] == 0) {  // the NIC was disabled meanwhile: the frame does not leave
          ++counters_.egress_dropped_disabled;
          EgressLost(std::move(t));
          break;
        }
        if (config_.nic.cpu_cycles_per_frame > 0 &&
            config_.nic.cpu_directions == CpuDirections::kBoth) {  // Fig. 1: the CPU first
          const int k = t.nic;
          egress_cpu_queue_[k].emplace_back(CpuReady(k), std::move(t));
          break;
        }
        UKAI_RETURN_IF_ERROR(TransmitEgress(std::move(t), d.delivered));
        break;
      }
      case Tagged::kUpdate:
        for (const AddressRow& r : t.rows) nics_[t.nic]->Set(r);
        counters_.table_rows_applied += static_cast<int64_t>(t.rows.size());
        break;
      case Tagged::kCommand:
        ApplyCommand(d.tag, true);
        break;
    }
  }
  return Status::Ok();
}

// S1-S3: the NIC sends an egress packet's frame to the outside at `cycle`.
Status Gateway::TransmitEgress(Tagged t, int64_t cycle) {
  Result<std::vector<uint8_t>> frame = nics_[t.nic]->Transmit(t.bytes);
  if (!frame.ok()) return frame.status();
  switch_table_[ReadMac(frame->data() + 6)] = t.nic;  // the switch learns
  ++counters_.nic_frames[t.nic];
  ++counters_.egress_frames;
  counters_.egress_bytes += static_cast<int64_t>(frame->size());
  if (sink_ != nullptr) UKAI_RETURN_IF_ERROR(sink_->Write(cycle, *frame));
  return Status::Ok();
}

// Undeliverable messages: a lost unicast loses its frame; a lost broadcast copy only if
// it was the owner's.
void Gateway::HandleLost() {
  for (int64_t tag : net_->undeliverable_tags()) {
    auto it = tagged_.find(tag);
    if (it == tagged_.end()) continue;
    Tagged t = std::move(it->second);
    tagged_.erase(it);
    if (t.kind == Tagged::kIngress) {
      Finish(t.frame, false);
    } else if (t.kind == Tagged::kBroadcastCopy) {
      CopyDone(t.frame, t.owner_copy, false);
    } else if (t.kind == Tagged::kEgress) {
      EgressLost(std::move(t));
    } else if (t.kind == Tagged::kUpdate) {
      UpdateLost(t);
    } else {
      ApplyCommand(tag, false);
    }
  }
}

Status Gateway::Step() {
  const int64_t now = net_->now();
  Notify(now);
  UKAI_RETURN_IF_ERROR(PullIngress());
  UKAI_RETURN_IF_ERROR(ResendEgress());
  for (size_t k = 0; k < nic_queue_.size(); ++k) {
    while (!nic_queue_[k].empty() && nic_queue_[k].front().first <= now) {
      const int64_t id = nic_queue_[k].front().second;
      nic_queue_[k].pop_front();
      AtNic(static_cast<int>(k), id);
    }
    while (!egress_cpu_queue_[k].empty() && egress_cpu_queue_[k].front().first <= now) {
      Tagged t = std::move(egress_cpu_queue_[k].front().second);
      egress_cpu_queue_[k].pop_front();
      UKAI_RETURN_IF_ERROR(TransmitEgress(std::move(t), now));
    }
  }
  GenerateEgress();
  net_->Step();
  UKAI_RETURN_IF_ERROR(HandleDeliveries());
  HandleLost();
  return Status::Ok();
}

bool Gateway::Done() const {
  const NicConfig& c = config_.nic;
  const bool egress_done =
      c.egress_rate <= 0 || (c.egress_frames > 0 && egress_sent_ >= c.egress_frames);
  const bool cpu_idle = std::all_of(egress_cpu_queue_.begin(), egress_cpu_queue_.end(),
                                    [](const auto& q) { return q.empty(); });
  return source_done_ && !have_pending_ && frames_.empty() && tagged_.empty() && retries_.empty() &&
         egress_retries_.empty() && egress_done && cpu_idle;
}

}  // namespace ukai::sim
