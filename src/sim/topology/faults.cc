#include "sim/topology/faults.h"

#include <algorithm>
#include <deque>

#include "core/rng.h"

namespace ukai::sim {
namespace {

// The run seed's stream for fault draws (node streams are 0..N-1).
constexpr uint64_t kFaultStream = uint64_t{1} << 40;

Result<int> Resolve(const Topology& topology, const NodeRef& ref, const char* key) {
  Result<int> node = topology.ParseNode(ref);
  if (!node.ok())
    return Status::InvalidArgument(std::string(key) + ": " + node.status().message())
        .WithKey(std::string(key));
  return node;
}

struct Channel {
  int a, b;
};

Result<Channel> ResolveChannel(const Topology& topology, const ChannelRef& ref, const char* key) {
  Result<int> a = Resolve(topology, ref.a, key);
  if (!a.ok()) return a.status();
  Result<int> b = Resolve(topology, ref.b, key);
  if (!b.ok()) return b.status();
  if (PortsBetween(topology, *a, *b).empty()) {
    return Status::InvalidArgument(std::string(key) + ": nodes " + ref.a.text + " and " +
                                   ref.b.text + " " + ref.where +
                                   " are not neighbours (a channel joins two adjacent nodes)")
        .WithKey(std::string(key));
  }
  return Channel{*a, *b};
}

// Draws config.random_nodes nodes and config.random_channels channels into `state`
// (avoiding faults already there) until the healthy network is connected.
Status DrawRandom(const FaultConfig& config, uint64_t seed, FaultState* state) {
  const Topology& t = state->topology();
  std::vector<int> nodes;
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!state->NodeFaulty(v)) nodes.push_back(v);
  }
  if (config.random_nodes > static_cast<int>(nodes.size()) - 1) {
    return Status::InvalidArgument("faults.random_nodes: " + std::to_string(config.random_nodes) +
                                   " faulty nodes would leave fewer than 1 healthy node of " +
                                   std::to_string(t.NumNodes()))
        .WithKey("faults.random_nodes");
  }
  Rng rng = Rng::Stream(seed, kFaultStream);
  for (int attempt = 0; attempt < kMaxFaultDraws; ++attempt) {
    FaultState s = *state;
    std::vector<int> pool = nodes;
    for (int i = 0; i < config.random_nodes; ++i) {
      const size_t j = i + rng.Uniform(pool.size() - i);
      std::swap(pool[i], pool[j]);
      s.SetNodeFaulty(pool[i], true);
    }
    std::vector<std::pair<int, int>> chans;  // usable channels, each once
    for (int v = 0; v < t.NumNodes(); ++v) {
      for (int p = 0; p < t.NumNetworkPorts(); ++p) {
        const PortRef far = t.Neighbor(v, p);
        if (far.valid() && (v < far.node || (v == far.node && p < far.port)) &&
            s.ChannelUsable(v, p)) {
          chans.emplace_back(v, far.node);
        }
      }
    }
    if (config.random_channels > static_cast<int>(chans.size())) {
      return Status::InvalidArgument(
                 "faults.random_channels: " + std::to_string(config.random_channels) +
                 " faulty channels asked for but only " + std::to_string(chans.size()) +
                 " are usable")
          .WithKey("faults.random_channels");
    }
    for (int i = 0; i < config.random_channels; ++i) {
      const size_t j = i + rng.Uniform(chans.size() - i);
      std::swap(chans[i], chans[j]);
      s.SetChannelFaulty(chans[i].first, chans[i].second, true);
    }
    if (CheckConnected(s, "").ok()) {
      *state = std::move(s);
      return Status::Ok();
    }
  }
  const std::string key =
      config.random_nodes > 0 ? "faults.random_nodes" : "faults.random_channels";
  return Status::InvalidArgument(
             key + ": no placement of " + std::to_string(config.random_nodes) + " node and " +
             std::to_string(config.random_channels) + " channel fault(s) keeping the healthy " +
             t.Describe() + " connected was found in " + std::to_string(kMaxFaultDraws) + " draws")
      .WithKey(key);
}

Result<FaultEvent> ResolveEvent(const Topology& topology, const FaultEventSpec& spec) {
  FaultEvent e;
  e.cycle = spec.cycle;
  e.kind = spec.kind;
  e.where = spec.where;
  if (spec.kind == FaultEventSpec::Kind::kFailNode ||
      spec.kind == FaultEventSpec::Kind::kRepairNode) {
    Result<int> node = Resolve(topology, spec.node, "faults.events");
    if (!node.ok()) return node.status();
    e.node = *node;
  } else {
    Result<Channel> ch = ResolveChannel(topology, spec.channel, "faults.events");
    if (!ch.ok()) return ch.status();
    e.node = ch->a;
    e.other = ch->b;
  }
  return e;
}

}  // namespace

FaultState::FaultState(const Topology& topology)
    : topology_(&topology),
      node_faulty_(static_cast<size_t>(topology.NumNodes()), 0),
      chan_faulty_(static_cast<size_t>(topology.NumNodes()) * topology.NumNetworkPorts(), 0) {}

void FaultState::SetChannelFaulty(int a, int b, bool faulty) {
  for (int p : PortsBetween(*topology_, a, b)) {
    const PortRef far = topology_->Neighbor(a, p);
    chan_faulty_[Index(a, p)] = faulty ? 1 : 0;
    chan_faulty_[Index(far.node, far.port)] = faulty ? 1 : 0;
  }
}

bool FaultState::ChannelUsable(int node, int port) const {
  const PortRef far = topology_->Neighbor(node, port);
  return far.valid() && !ChannelFaulty(node, port) && !NodeFaulty(node) && !NodeFaulty(far.node);
}

void FaultState::ApplyTo(Topology* topology) const {
  for (int v = 0; v < topology->NumNodes(); ++v) {
    topology->SetNodeAlive(v, !NodeFaulty(v));
    for (int p = 0; p < topology->NumNetworkPorts(); ++p) {
      if (topology->Neighbor(v, p).valid()) topology->SetChannelAlive(v, p, ChannelUsable(v, p));
    }
  }
}

std::vector<int> FaultState::FaultyNodes() const {
  std::vector<int> out;
  for (int v = 0; v < static_cast<int>(node_faulty_.size()); ++v) {
    if (node_faulty_[v]) out.push_back(v);
  }
  return out;
}

std::vector<std::pair<int, int>> FaultState::FaultyChannels() const {
  std::vector<std::pair<int, int>> out;
  for (int v = 0; v < topology_->NumNodes(); ++v) {
    for (int p = 0; p < topology_->NumNetworkPorts(); ++p) {
      const PortRef far = topology_->Neighbor(v, p);
      if (far.valid() && ChannelFaulty(v, p) && (v < far.node || (v == far.node && p < far.port)))
        out.emplace_back(v, p);
    }
  }
  return out;
}

bool FaultState::any() const {
  return std::find(node_faulty_.begin(), node_faulty_.end(), 1) != node_faulty_.end() ||
         std::find(chan_faulty_.begin(), chan_faulty_.end(), 1) != chan_faulty_.end();
}

std::vector<int> PortsBetween(const Topology& topology, int a, int b) {
  std::vector<int> ports;
  for (int p = 0; p < topology.NumNetworkPorts(); ++p) {
    if (topology.Neighbor(a, p).node == b && a != b) ports.push_back(p);
  }
  return ports;
}

void ApplyFaultEvent(const FaultEvent& e, FaultState* state) {
  switch (e.kind) {
    case FaultEventSpec::Kind::kFailNode:
      state->SetNodeFaulty(e.node, true);
      break;
    case FaultEventSpec::Kind::kRepairNode:
      state->SetNodeFaulty(e.node, false);
      break;
    case FaultEventSpec::Kind::kFailChannel:
      state->SetChannelFaulty(e.node, e.other, true);
      break;
    case FaultEventSpec::Kind::kRepairChannel:
      state->SetChannelFaulty(e.node, e.other, false);
      break;
  }
}

Status CheckConnected(const FaultState& state, const std::string& what) {
  const Topology& t = state.topology();
  int first = -1;
  for (int v = 0; v < t.NumNodes() && first < 0; ++v) {
    if (!state.NodeFaulty(v)) first = v;
  }
  if (first < 0) return Status::InvalidArgument(what + ": every node is faulty");
  std::vector<uint8_t> seen(static_cast<size_t>(t.NumNodes()), 0);
  std::deque<int> queue{first};
  seen[first] = 1;
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      if (!state.ChannelUsable(v, p)) continue;
      const int w = t.Neighbor(v, p).node;
      if (!seen[w]) {
        seen[w] = 1;
        queue.push_back(w);
      }
    }
  }
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!seen[v] && !state.NodeFaulty(v)) {
      return Status::InvalidArgument(what + " disconnect the healthy network: node " +
                                     t.NodeName(v) + " cannot be reached from node " +
                                     t.NodeName(first));
    }
  }
  return Status::Ok();
}

Result<FaultPlan> PlanFaults(const Topology& topology, const FaultConfig& config, uint64_t seed) {
  FaultPlan plan{FaultState(topology), {}};
  for (const NodeRef& ref : config.nodes) {
    Result<int> node = Resolve(topology, ref, "faults.nodes");
    if (!node.ok()) return node.status();
    plan.initial.SetNodeFaulty(*node, true);
  }
  for (const ChannelRef& ref : config.channels) {
    Result<Channel> ch = ResolveChannel(topology, ref, "faults.channels");
    if (!ch.ok()) return ch.status();
    plan.initial.SetChannelFaulty(ch->a, ch->b, true);
  }
  if (!config.nodes.empty() || !config.channels.empty()) {
    UKAI_RETURN_IF_ERROR(
        CheckConnected(plan.initial, config.nodes.empty() ? "faults.channels" : "faults.nodes"));
  }
  if (config.random_nodes > 0 || config.random_channels > 0) {
    UKAI_RETURN_IF_ERROR(DrawRandom(config, seed, &plan.initial));
  }
  for (const FaultEventSpec& spec : config.events) {
    Result<FaultEvent> e = ResolveEvent(topology, spec);
    if (!e.ok()) return e.status();
    plan.events.push_back(std::move(*e));
  }
  std::stable_sort(plan.events.begin(), plan.events.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.cycle < b.cycle; });
  FaultState s = plan.initial;
  for (const FaultEvent& e : plan.events) {
    ApplyFaultEvent(e, &s);
    UKAI_RETURN_IF_ERROR(CheckConnected(s, "faults.events: the event at cycle " +
                                               std::to_string(e.cycle) + " " + e.where + " would"));
  }
  return plan;
}

std::vector<uint8_t> NodesWithin(const Topology& t, const std::vector<int>& ends, int distance) {
  std::vector<uint8_t> in(static_cast<size_t>(t.NumNodes()), 0);
  std::vector<int> level(static_cast<size_t>(t.NumNodes()), -1), queue;
  for (int v : ends) {
    if (t.NodeAlive(v) && level[v] < 0) {
      level[v] = 0;
      queue.push_back(v);
    }
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    in[v] = 1;
    if (level[v] + 1 >= distance) continue;
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && t.NodeAlive(far.node) && level[far.node] < 0) {
        level[far.node] = level[v] + 1;
        queue.push_back(far.node);
      }
    }
  }
  return in;
}

}  // namespace ukai::sim
