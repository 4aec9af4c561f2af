#include "sim/nic/sss_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace ukai::sim {

int SwitchesOn(const Topology& t, const std::vector<RouteHop>& hops, int dst) {
  int n = 0;
  for (const RouteHop& h : hops) n += t.Forwards(h.node) ? 1 : 0;
  return n + (dst >= 0 && t.Forwards(dst) ? 1 : 0);
}

namespace {

// A place a tree must reach: a member NIC, or a switch whose unit takes a copy.
struct Target {
  int node;
  int unit;  // -1 for a member until its unit is made
  std::vector<RouteHop> path;
};

class Builder {
 public:
  Builder(const Topology& t, const SourceRouteTable& r, const SssConfig& c,
          const std::vector<uint8_t>& copy)
      : t_(t), routes_(r), c_(c), copy_(copy), acks_(c.acks) {}

  McastPlan plan;

  Status Naive(int src, const std::vector<int>& members) {
    for (int m : members) {
      McastTx tx;
      tx.kind = SssPacketKind::kWrite;
      tx.table = true;
      tx.path = routes_.PathFrom(t_, src, m);
      tx.dst = m;
      tx.to_unit = NewUnit(m, true);
      tx.switches = SwitchesOn(t_, tx.path, m);
      tx.extra = acks_ ? c_.ack_bytes : 0;
      if (acks_) plan.units[tx.to_unit].ack_to = kPlanSource;
      plan.source_sends.push_back(Add(std::move(tx)));
    }
    plan.source_acks = acks_ ? static_cast<int>(members.size()) : 0;
    return Status::Ok();
  }

  Status Chained(int src, const std::vector<int>& members) {
    const std::vector<int> order = ChainOrder(src, members);
    if (c_.multicast_convert) {
      const std::vector<RouteHop> path = routes_.PathFrom(t_, src, order[0]);
      for (size_t i = 1; i < path.size(); ++i) {
        const int x = path[i].node;
        if (!Copies(x)) continue;
        // The source's chained packet goes to the switch that converts it (its member list
        // in the header), which sends it on as a tree.
        const std::vector<RouteHop> prefix(path.begin(), path.begin() + static_cast<long>(i));
        McastTx tx;
        tx.kind = SssPacketKind::kConverted;
        tx.path = prefix;
        tx.dst = x;
        tx.to_unit = NewUnit(x, false);
        tx.switches = SwitchesOn(t_, prefix, x);
        tx.extra = int64_t{c_.node_id_bytes} * static_cast<int64_t>(members.size()) +
                   (acks_ ? c_.ack_bytes : 0);
        const int unit = tx.to_unit;
        plan.source_sends.push_back(Add(std::move(tx)));
        // A unit root adds its Tx to its own sends and counts its acks itself.
        std::vector<int> unused;
        Trees(unit, x, members, &unused);
        if (acks_) {
          plan.units[unit].ack_to = kPlanSource;
          plan.units[unit].ack_path = Reverse(prefix, x);
          plan.source_acks = 1;
        }
        return Status::Ok();
      }
    }
    plan.source_sends.push_back(Chain(kPlanSource, src, order));
    plan.source_acks = acks_ ? 1 : 0;
    return Status::Ok();
  }

  Status Hierarchical(int src, const std::vector<int>& members) {
    const int acks = Trees(kPlanSource, src, members, &plan.source_sends);
    plan.source_acks = acks_ ? acks : 0;
    return Status::Ok();
  }

 private:
  bool Copies(int node) const { return t_.Forwards(node) && copy_[node] != 0; }

  int NewUnit(int node, bool member) {
    McastUnit u;
    u.node = node;
    u.member = member;
    plan.units.push_back(std::move(u));
    return static_cast<int>(plan.units.size()) - 1;
  }
  int Add(McastTx tx) {
    plan.txs.push_back(std::move(tx));
    return static_cast<int>(plan.txs.size()) - 1;
  }

  // The route back along `hops` (which start at some node and end at `end`): from `end`
  // to the node the hops start at.
  std::vector<RouteHop> Reverse(const std::vector<RouteHop>& hops, int end) const {
    std::vector<RouteHop> back;
    int at = end;
    for (size_t i = hops.size(); i-- > 0;) {
      const PortRef far = t_.Neighbor(hops[i].node, hops[i].port);
      back.push_back({at, far.port});
      at = hops[i].node;
    }
    return back;
  }

  // Members by node number, starting after `origin` (on a tree: left to right from it).
  std::vector<int> ChainOrder(int origin, std::vector<int> members) const {
    std::sort(members.begin(), members.end());
    auto after = std::upper_bound(members.begin(), members.end(), origin);
    std::rotate(members.begin(), after, members.end());
    return members;
  }

  // A chain over `members` (in order) started by `origin` (a unit, or the source) at
  // `origin_node`; returns its first Tx. With acks the last member answers the origin.
  int Chain(int origin, int origin_node, const std::vector<int>& members) {
    const int g = static_cast<int>(members.size());
    std::vector<RouteHop> back;  // the last member's route back to a switch origin
    int64_t kept = 0;
    if (acks_ && origin != kPlanSource) {
      back = Reverse(routes_.PathFrom(t_, origin_node, members.back()), members.back());
      kept = int64_t{c_.per_switch_bytes} * SwitchesOn(t_, back, origin_node);
    }
    int prev = origin, prev_node = origin_node, first = -1;
    for (int i = 0; i < g; ++i) {
      McastTx tx;
      tx.from = prev;
      tx.kind = SssPacketKind::kMulticastChain;
      tx.path = routes_.PathFrom(t_, prev_node, members[i]);
      tx.table = !t_.Forwards(prev_node);
      tx.dst = members[i];
      tx.to_unit = NewUnit(members[i], true);
      tx.switches = SwitchesOn(t_, tx.path, members[i]);
      tx.extra = int64_t{c_.node_id_bytes} * (g - i - 1) + (acks_ ? c_.ack_bytes : 0) + kept;
      const int unit = tx.to_unit;
      const int id = Add(std::move(tx));
      if (prev == origin) {
        first = id;
        if (origin != kPlanSource) plan.units[origin].sends.push_back(id);
      } else {
        plan.units[prev].sends.push_back(id);
      }
      prev = unit;
      prev_node = members[i];
    }
    if (acks_) {
      plan.units[prev].ack_to = origin;
      plan.units[prev].ack_path = back;
      if (origin != kPlanSource) ++plan.units[origin].acks_expected;
    }
    return first;
  }

  // Trees from `root` (a unit, or the source) at `root_node` over `members`: their first
  // Tx go to `starts`; returns the acks the root receives from them.
  int Trees(int root, int root_node, const std::vector<int>& members, std::vector<int>* starts) {
    // Members whose routes enter a node by another channel than the tree's go to another tree.
    std::vector<std::vector<Target>> groups;
    std::vector<std::map<int, std::pair<int, int>>> entries;  // node -> (from, port)
    for (int m : members) {
      Target target{m, -1, routes_.PathFrom(t_, root_node, m)};
      size_t g = 0;
      for (; g < groups.size(); ++g) {
        if (Fits(entries[g], target.path, root_node)) break;
      }
      if (g == groups.size()) {
        groups.emplace_back();
        entries.emplace_back();
      }
      Enter(&entries[g], target.path);
      groups[g].push_back(std::move(target));
    }
    int acks = 0;
    for (std::vector<Target>& group : groups) acks += OneTree(root, root_node, group, starts);
    return acks;
  }

  bool Fits(const std::map<int, std::pair<int, int>>& entry, const std::vector<RouteHop>& path,
            int root_node) const {
    for (const RouteHop& h : path) {
      const int w = t_.Neighbor(h.node, h.port).node;
      auto it = entry.find(w);
      if (it != entry.end() && it->second != std::pair{h.node, h.port}) return false;
      // An end node (the source) sends a packet one way only.
      if (h.node == root_node && !t_.Forwards(root_node)) {
        for (const auto& [node, from] : entry) {
          if (from.first == root_node && from.second != h.port) return false;
        }
      }
    }
    return true;
  }
  void Enter(std::map<int, std::pair<int, int>>* entry, const std::vector<RouteHop>& path) const {
    for (const RouteHop& h : path) (*entry)[t_.Neighbor(h.node, h.port).node] = {h.node, h.port};
  }

  struct Shape {
    std::map<int, std::vector<int>> out;  // node -> ports (network)
    std::map<int, int> parent;            // node -> node it is entered from
    std::map<int, int> parent_port;       // node -> that node's port to it
  };
  Shape ShapeOf(const std::vector<Target>& targets) const {
    Shape s;
    for (const Target& tg : targets) {
      for (const RouteHop& h : tg.path) {
        std::vector<int>& ports = s.out[h.node];
        if (std::find(ports.begin(), ports.end(), h.port) == ports.end()) ports.push_back(h.port);
        const int w = t_.Neighbor(h.node, h.port).node;
        s.parent[w] = h.node;
        s.parent_port[w] = h.port;
      }
    }
    return s;
  }

  // The first node (nearest the root) that must branch but cannot copy, or -1.
  int NonCopyBranch(const Shape& s, int root_node) const {
    std::vector<int> queue{root_node};
    for (size_t i = 0; i < queue.size(); ++i) {
      const int v = queue[i];
      auto it = s.out.find(v);
      if (it == s.out.end()) continue;
      if (v != root_node && it->second.size() > 1 && !Copies(v)) return v;
      for (int p : it->second) queue.push_back(t_.Neighbor(v, p).node);
    }
    return -1;
  }

  static bool Passes(const Target& tg, int node) {
    return std::any_of(tg.path.begin(), tg.path.end(),
                       [&](const RouteHop& h) { return h.node == node; });
  }

  int OneTree(int root, int root_node, std::vector<Target> targets, std::vector<int>* starts) {
    int root_acks = 0;
    for (;;) {
      const Shape shape = ShapeOf(targets);
      const int n = NonCopyBranch(shape, root_node);
      if (n < 0) break;
      // Members below n: a chain from the nearest switch above n that can copy, or from
      // the root when none can (hierarchical -> chained conversion).
      std::vector<int> below;
      std::vector<RouteHop> via;  // a route through n, for the prefix to the converter
      std::vector<Target> kept;
      for (Target& tg : targets) {
        if (tg.unit < 0 && Passes(tg, n)) {
          below.push_back(tg.node);
          via = tg.path;
        } else {
          kept.push_back(std::move(tg));
        }
      }
      int a = -1;
      for (int v = shape.parent.at(n);; v = shape.parent.at(v)) {
        if (Copies(v)) {
          a = v;
          break;
        }
        if (v == root_node) break;
      }
      targets = std::move(kept);
      const std::vector<int> order = ChainOrder(a >= 0 ? a : root_node, below);
      if (a < 0 || a == root_node) {
        const int tx = Chain(root, root_node, order);
        if (root == kPlanSource) starts->push_back(tx);
        if (acks_ && root == kPlanSource) ++root_acks;
        continue;
      }
      int unit = -1;
      for (const Target& tg : targets) {
        if (tg.node == a && tg.unit >= 0) unit = tg.unit;
      }
      if (unit < 0) {
        unit = NewUnit(a, false);
        std::vector<RouteHop> prefix;
        for (const RouteHop& h : via) {
          if (h.node == a) break;
          prefix.push_back(h);
        }
        targets.push_back({a, unit, std::move(prefix)});
      }
      Chain(unit, a, order);  // its first Tx is in the unit's sends; its ack counted there
    }
    if (targets.empty()) return root_acks;
    // Units for the members, the tree's routers and ports.
    for (Target& tg : targets) {
      if (tg.unit < 0) tg.unit = NewUnit(tg.node, true);
    }
    const Shape shape = ShapeOf(targets);
    McastTx tx;
    tx.from = root;
    tx.kind = SssPacketKind::kMulticastTree;
    tx.tree = true;
    std::map<int, std::vector<int>> ports = shape.out;
    for (const Target& tg : targets) ports[tg.node].push_back(RouteResult::kEjectPort);
    for (auto& [at, list] : ports) {
      const int node = at;  // a structured binding cannot be captured before C++20 in clang 14
      std::sort(list.begin(), list.end(), [&](int a, int b) {
        if (a == RouteResult::kEjectPort || b == RouteResult::kEjectPort) {
          return a == RouteResult::kEjectPort && b != RouteResult::kEjectPort;
        }
        return routes_.BranchOrder(node, t_.Neighbor(node, a).node) <
               routes_.BranchOrder(node, t_.Neighbor(node, b).node);
      });
      tx.nodes.push_back({node, list});
      tx.switches += t_.Forwards(node) ? 1 : 0;
    }
    for (const Target& tg : targets) tx.leaves.push_back(tg.unit);
    tx.extra = acks_ ? c_.ack_bytes : 0;
    const int id = Add(std::move(tx));
    if (root == kPlanSource) {
      starts->push_back(id);
    } else {
      plan.units[root].sends.push_back(id);
    }
    if (acks_) root_acks += AckTree(root, root_node, shape, targets);
    return root_acks;
  }

  // Ack combining in the tree: every switch where two or more branches (or its own unit)
  // hold ack senders combines them into one; each sender answers its nearest combining
  // switch above it, or the root. Returns the acks the root receives.
  int AckTree(int root, int root_node, const Shape& shape, const std::vector<Target>& targets) {
    std::map<int, int> senders_below;  // node -> ack senders in its subtree (itself included)
    std::map<int, int> unit_at;        // switch -> its unit among the targets
    for (const Target& tg : targets) {
      if (!plan.units[tg.unit].member) unit_at[tg.node] = tg.unit;
      for (int v = tg.node;; v = shape.parent.at(v)) {
        ++senders_below[v];
        if (v == root_node) break;
      }
    }
    auto combines = [&](int v) {
      if (v == root_node || !Copies(v)) return false;
      int branches = unit_at.count(v) ? 1 : 0;
      for (int p : shape.out.count(v) ? shape.out.at(v) : std::vector<int>{}) {
        branches += senders_below[t_.Neighbor(v, p).node] > 0 ? 1 : 0;
      }
      return branches >= 2;
    };
    // A unit at every combining switch.
    for (const auto& [v, count] : senders_below) {
      if (combines(v) && !unit_at.count(v)) unit_at[v] = NewUnit(v, false);
    }
    int root_acks = 0;
    auto answer = [&](int unit, int from) {
      std::vector<RouteHop> back;
      int v = from;
      int to = -1;
      while (v != root_node) {
        const int up = shape.parent.at(v);
        back.push_back({v, t_.Neighbor(up, shape.parent_port.at(v)).port});
        v = up;
        if (combines(v)) {
          to = unit_at.at(v);
          break;
        }
      }
      McastUnit& u = plan.units[unit];
      u.ack_path = std::move(back);
      if (to >= 0) {
        u.ack_to = to;
        ++plan.units[to].acks_expected;
      } else {
        u.ack_to = root;
        if (root == kPlanSource) {
          ++root_acks;
        } else {
          ++plan.units[root].acks_expected;
        }
      }
    };
    for (const Target& tg : targets) {
      if (plan.units[tg.unit].member) answer(tg.unit, tg.node);
    }
    for (const auto& [v, unit] : unit_at) answer(unit, v);
    return root == kPlanSource ? root_acks : 0;
  }

  const Topology& t_;
  const SourceRouteTable& routes_;
  const SssConfig& c_;
  const std::vector<uint8_t>& copy_;
  bool acks_;
};

}  // namespace

Result<McastPlan> BuildMulticastPlan(const Topology& t, const SourceRouteTable& routes,
                                     const SssConfig& c, const std::vector<uint8_t>& copy,
                                     MulticastKind kind, int src, const std::vector<int>& members) {
  if (members.empty()) return Status::InvalidArgument("multicast: empty group");
  for (size_t i = 0; i < members.size(); ++i) {
    const int m = members[i];
    if (m == src || m < 0 || m >= t.NumTerminals() ||
        std::count(members.begin(), members.end(), m) > 1) {
      return Status::InvalidArgument(fmt::format(
          "multicast from {}: member {} is the source, no end node or listed twice",
          t.NodeName(src), m >= 0 && m < t.NumNodes() ? t.NodeName(m) : std::to_string(m)));
    }
  }
  Builder b(t, routes, c, copy);
  b.plan.members = static_cast<int>(members.size());
  switch (kind) {
    case MulticastKind::kNaive:
      UKAI_RETURN_IF_ERROR(b.Naive(src, members));
      break;
    case MulticastKind::kChained:
      UKAI_RETURN_IF_ERROR(b.Chained(src, members));
      break;
    case MulticastKind::kHierarchical:
      UKAI_RETURN_IF_ERROR(b.Hierarchical(src, members));
      break;
    case MulticastKind::kNone:
      return Status::InvalidArgument("multicast: traffic.multicast is none");
  }
  return std::move(b.plan);
}

}  // namespace ukai::sim
