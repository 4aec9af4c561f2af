#include "sim/topology/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace ukai::sim {
namespace {

Status Bad(const GraphSpec& spec, const std::string& what) {
  return Status::InvalidArgument(fmt::format("{}: {}", spec.origin, what));
}

std::string At(const GraphLinkSpec& l) { return l.where.empty() ? "" : " " + l.where; }

}  // namespace

Result<std::unique_ptr<GraphTopology>> GraphTopology::Create(const GraphSpec& spec) {
  std::unique_ptr<GraphTopology> g(new GraphTopology());
  g->terminals_ = static_cast<int>(spec.terminals.size());
  if (g->terminals_ < 2) {
    return Bad(spec, fmt::format("needs at least 2 end nodes (has {})", g->terminals_));
  }
  for (const auto* list : {&spec.terminals, &spec.switches}) {
    for (const std::string& name : *list) {
      if (name.empty()) return Bad(spec, "a node has an empty name");
      if (!g->index_.emplace(name, static_cast<int>(g->names_.size())).second) {
        return Bad(spec, fmt::format("node '{}' is declared twice", name));
      }
      g->names_.push_back(name);
    }
  }
  const int n = g->NumNodes();
  g->adj_.resize(n);
  std::map<std::pair<int, int>, const GraphLinkSpec*> seen;
  for (const GraphLinkSpec& l : spec.links) {
    const int a = g->Find(l.a), b = g->Find(l.b);
    for (const auto& [id, name] : {std::pair{a, &l.a}, std::pair{b, &l.b}}) {
      if (id < 0) {
        return Bad(spec, fmt::format("link {} - {}{}: unknown node '{}'", l.a, l.b, At(l), *name));
      }
    }
    if (a == b)
      return Bad(spec, fmt::format("link {} - {}{} joins a node to itself", l.a, l.b, At(l)));
    if (l.channels < 1) {
      return Bad(spec, fmt::format("link {} - {}{}: channels must be >= 1", l.a, l.b, At(l)));
    }
    const auto key = std::minmax(a, b);
    if (auto [it, fresh] = seen.emplace(key, &l); !fresh) {
      return Bad(spec, fmt::format("duplicate link {} - {}{} (first{}; give one link "
                                   "`channels` for parallel channels)",
                                   l.a, l.b, At(l), At(*it->second)));
    }
    for (int c = 0; c < l.channels; ++c) {
      const int pa = static_cast<int>(g->adj_[a].size());
      const int pb = static_cast<int>(g->adj_[b].size());
      g->adj_[a].push_back({{b, pb}, l.latency_ab});
      g->adj_[b].push_back({{a, pa}, l.latency_ba});
    }
  }
  for (int v = 0; v < n; ++v) {
    if (g->adj_[v].empty()) return Bad(spec, fmt::format("node '{}' has no link", g->names_[v]));
    if (g->Degree(v) > kMaxPorts) {
      return Bad(spec, fmt::format("node '{}' has {} ports; a router has at most {}", g->names_[v],
                                   g->Degree(v), kMaxPorts));
    }
    g->ports_ = std::max(g->ports_, g->Degree(v));
  }
  // Connected as a graph, then end node to end node through switches only.
  std::vector<uint8_t> seen_node(n, 0);
  std::vector<int> queue{0};
  seen_node[0] = 1;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    if (v != 0 && !g->Forwards(v)) continue;  // reached, but it does not pass messages on
    for (const Port& p : g->adj_[v]) {
      if (!seen_node[p.far.node]) seen_node[p.far.node] = 1, queue.push_back(p.far.node);
    }
  }
  for (int v = 0; v < n; ++v) {
    if (seen_node[v]) continue;
    // Reachable at all (through end nodes)? Then it is the no-forwarding rule.
    std::vector<uint8_t> any(n, 0);
    std::vector<int> q2{0};
    any[0] = 1;
    for (size_t i = 0; i < q2.size(); ++i) {
      for (const Port& p : g->adj_[q2[i]]) {
        if (!any[p.far.node]) any[p.far.node] = 1, q2.push_back(p.far.node);
      }
    }
    if (!any[v]) {
      return Bad(spec, fmt::format("the network is disconnected: node '{}' cannot be reached "
                                   "from '{}'",
                                   g->names_[v], g->names_[0]));
    }
    return Bad(spec, fmt::format("node '{}' can be reached from '{}' only through end nodes, "
                                 "which do not forward packets",
                                 g->names_[v], g->names_[0]));
  }
  g->describe_ = fmt::format("graph of {} end nodes and {} switches ({})", g->terminals_,
                             g->NumSwitches(), spec.origin);
  return g;
}

PortRef GraphTopology::Neighbor(int node, int port) const {
  if (port < 0 || port >= Degree(node)) return {};
  return adj_[node][port].far;
}

int GraphTopology::LinkCycles(int node, int port) const {
  if (port < 0 || port >= Degree(node)) return -1;
  return adj_[node][port].latency;
}

bool GraphTopology::UpperChannel(int node, int port) const {
  const PortRef far = Neighbor(node, port);
  return far.valid() && IsSwitch(node) && IsSwitch(far.node);
}

int GraphTopology::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

Result<int> GraphTopology::ParseNode(const NodeRef& ref) const {
  if (ref.form == NodeRef::Form::kNumber) return Topology::ParseNode(ref);
  const int node = Find(ref.name);
  if (node >= 0) return node;
  return Status::InvalidArgument(
      fmt::format("node {} {}: no such node in the {}", ref.text, ref.where, Describe()));
}

Result<GraphSpec> TreeSpec(int arity, int levels, int upper_channels) {
  if (arity < 2 || arity > GraphTopology::kMaxPorts - 1) {
    return Status::InvalidArgument(fmt::format("network.tree_arity: must be in [2, {}] (got {})",
                                               GraphTopology::kMaxPorts - 1, arity))
        .WithKey("network.tree_arity");
  }
  if (levels < 1) {
    return Status::InvalidArgument(
               fmt::format("network.tree_levels: must be >= 1 (got {})", levels))
        .WithKey("network.tree_levels");
  }
  if (upper_channels < 1 || arity + upper_channels > GraphTopology::kMaxPorts) {
    return Status::InvalidArgument(fmt::format("network.tree_upper_bandwidth: must be in [1, {}] "
                                               "with network.tree_arity = {} (a "
                                               "switch has at most {} ports; got {})",
                                               GraphTopology::kMaxPorts - arity, arity,
                                               GraphTopology::kMaxPorts, upper_channels))
        .WithKey("network.tree_upper_bandwidth");
  }
  int64_t ends = 1;
  for (int l = 0; l < levels; ++l) {
    ends *= arity;
    if (ends > (int64_t{1} << 20)) {
      return Status::InvalidArgument(
                 fmt::format(
                     "network.tree_levels: {} levels of arity {} give more than 2^20 end nodes",
                     levels, arity))
          .WithKey("network.tree_levels");
    }
  }
  GraphSpec spec;
  spec.origin = fmt::format(
      "tree of {} levels of arity {}{}", levels, arity,
      upper_channels > 1 ? fmt::format(", upper links x{}", upper_channels) : std::string());
  for (int64_t i = 0; i < ends; ++i) spec.terminals.push_back(fmt::format("n{}", i));
  // Switches level by level from the lowest; level l has ends / arity^l switches.
  int64_t count = ends;
  for (int l = 1; l <= levels; ++l) {
    count /= arity;
    for (int64_t j = 0; j < count; ++j) spec.switches.push_back(fmt::format("s{}.{}", l, j));
  }
  // Links bottom up: a switch's links to its children come before the link to its parent,
  // so its ports are children first.
  count = ends;
  for (int l = 1; l <= levels; ++l) {
    const int64_t parents = count / arity;
    for (int64_t j = 0; j < parents; ++j) {
      for (int c = 0; c < arity; ++c) {
        const int64_t child = j * arity + c;
        GraphLinkSpec link;
        link.a = fmt::format("s{}.{}", l, j);
        link.b = l == 1 ? fmt::format("n{}", child) : fmt::format("s{}.{}", l - 1, child);
        link.channels = l == 1 ? 1 : upper_channels;
        spec.links.push_back(std::move(link));
      }
    }
    count = parents;
  }
  return spec;
}

}  // namespace ukai::sim
