#include "sim/nic/sss_traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/nic/sss_packet.h"

namespace ukai::sim {

Result<std::unique_ptr<SssTraffic>> SssTraffic::Create(const SimConfig& config,
                                                       const SssMachine& machine) {
  std::unique_ptr<SssTraffic> t(new SssTraffic());
  t->config_ = config;
  const GraphTopology& topo = machine.topology();
  const SssConfig& c = config.sss;
  t->terminals_ = topo.NumTerminals();
  auto end_node = [&](const std::string& key, const std::string& name) -> Result<int> {
    const int node = topo.Find(name);
    if (node < 0 || node >= t->terminals_) {
      return Status::InvalidArgument(
                 fmt::format("{}: '{}' is not an end node of the {}", key, name, topo.Describe()))
          .WithKey(key);
    }
    return node;
  };
  for (const std::string& name : c.sources) {
    Result<int> node = end_node("traffic.sources", name);
    if (!node.ok()) return node.status();
    t->sources_.push_back(*node);
  }
  if (t->sources_.empty()) {
    for (int i = 0; i < t->terminals_; ++i) t->sources_.push_back(i);
  }
  for (const auto& group : c.multicast_groups) {
    std::vector<int> members;
    for (const std::string& name : group) {
      Result<int> node = end_node("traffic.multicast_groups", name);
      if (!node.ok()) return node.status();
      if (std::find(members.begin(), members.end(), *node) != members.end()) {
        return Status::InvalidArgument("traffic.multicast_groups: '" + name +
                                       "' appears twice in a group")
            .WithKey("traffic.multicast_groups");
      }
      members.push_back(*node);
    }
    t->groups_.push_back(std::move(members));
  }
  if (c.multicast != MulticastKind::kNone) {
    if (c.operation != RmaOperation::kWrite) {
      return Status::InvalidArgument(
                 "traffic.multicast: a multicast is a remote write (traffic.operation = \"write\")")
          .WithKey("traffic.multicast");
    }
    if (t->groups_.empty() && c.multicast_group_size > t->terminals_ - 1) {
      return Status::InvalidArgument(fmt::format("traffic.multicast_group_size: {} members, but a "
                                                 "source has only {} other end nodes",
                                                 c.multicast_group_size, t->terminals_ - 1))
          .WithKey("traffic.multicast_group_size");
    }
  } else {
    Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(topo, config.traffic);
    if (!pattern.ok()) return pattern.status();
    t->pattern_ = std::move(*pattern);
  }
  // F: the wire flits of one operation's data to one destination, on a route of the mean
  // number of switches.
  double switches = 0;
  int pairs = 0;
  for (int s = 0; s < t->terminals_; ++s) {
    for (int d = 0; d < t->terminals_; ++d) {
      if (s == d) continue;
      switches += static_cast<double>(machine.routing().table().Path(s, d, 0).size()) - 1;
      ++pairs;
    }
  }
  const int mean_switches = static_cast<int>(std::lround(switches / std::max(1, pairs)));
  int64_t flits = 0;
  for (const Piece& piece : SplitTransfer(config.traffic.message_bytes, c.page_offset,
                                          c.max_payload_bytes, c.page_bytes)) {
    flits += WireFlits(WireBytes(c, mean_switches, c.acks ? c.ack_bytes : 0, piece.bytes),
                       config.router.flit_bytes);
  }
  t->op_flits_ = static_cast<int>(std::min<int64_t>(flits, 1 << 30));
  Result<std::unique_ptr<InjectionProcess>> inj = MakeInjection(config.traffic, t->op_flits_);
  if (!inj.ok()) return inj.status();
  t->injection_ = std::move(*inj);
  t->rng_.reserve(t->terminals_);
  for (int i = 0; i < t->terminals_; ++i) t->rng_.push_back(Rng::Stream(config.seed, i));
  t->next_group_.assign(t->terminals_, 0);
  for (int s : t->sources_) {
    if (t->pattern_ != nullptr && t->pattern_->Idle(s)) continue;
    t->schedule_.Push(t->injection_->First(t->rng_[s]), s, 0);
  }
  t->offered_ = t->injection_->OfferedFlitsPerCycle() * static_cast<double>(t->sources_.size()) /
                t->terminals_;
  return t;
}

SssOp SssTraffic::Make(int src) {
  const SssConfig& c = config_.sss;
  Rng& rng = rng_[src];
  SssOp op;
  op.src = src;
  op.bytes = config_.traffic.message_bytes;
  op.page_offset = c.page_offset;
  op.ack = c.acks;
  if (c.multicast == MulticastKind::kNone) {
    op.kind = c.operation == RmaOperation::kRead ? SssOp::Kind::kRead : SssOp::Kind::kWrite;
    op.dst = pattern_->Destination(src, rng);
    return op;
  }
  op.kind = SssOp::Kind::kMulticast;
  op.multicast = c.multicast;
  if (!groups_.empty()) {
    for (size_t tries = 0; tries < groups_.size(); ++tries) {
      const std::vector<int>& g = groups_[next_group_[src]++ % groups_.size()];
      if (std::find(g.begin(), g.end(), src) == g.end()) {
        op.members = g;
        return op;
      }
    }
    return op;  // every group holds the source: an empty group, refused by Submit
  }
  // A partial Fisher-Yates draw of the members among the other end nodes.
  std::vector<int> others;
  for (int i = 0; i < terminals_; ++i) {
    if (i != src) others.push_back(i);
  }
  const int g = c.multicast_group_size;
  for (int i = 0; i < g; ++i) {
    const int j = i + static_cast<int>(rng.Uniform(static_cast<uint64_t>(others.size() - i)));
    std::swap(others[i], others[j]);
  }
  op.members.assign(others.begin(), others.begin() + g);
  std::sort(op.members.begin(), op.members.end());
  return op;
}

void SssTraffic::Due(int64_t now, std::vector<SssOp>* out) {
  if (schedule_.empty()) return;
  schedule_.PopDue(now, &due_);
  for (int32_t src : due_) {
    out->push_back(Make(src));
    schedule_.Push(injection_->Next(now, rng_[src]), src, now);
  }
}

int64_t SssTraffic::NextStart(int64_t now) const {
  return schedule_.empty() ? std::numeric_limits<int64_t>::max() : schedule_.Next(now);
}

}  // namespace ukai::sim
