#include "sim/routing/cdg_check.h"

#include <algorithm>
#include <string_view>

#include "sim/routing/detour_nf.h"
#include "sim/routing/detour_ud.h"
#include "sim/routing/dimension_order.h"
#include "sim/routing/registry.h"
#include "sim/routing/updown.h"
#include "sim/topology/faults.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

void AddMask(int port, uint32_t mask, std::vector<EscapeHop>* out) {
  for (uint32_t m = mask; m != 0; m &= m - 1) out->push_back({port, __builtin_ctz(m)});
}

// Dimension order with dateline classes: on every VC of its class (dor) or on one escape
// VC per class (duato, detour-nf).
// For `dor` the configured routing.dor_dateline and routing.dor_tie apply (the shared
// dateline's mask depends on the input VC; with a tie rule other than "plus" both ways
// round a tie are next channels: the union of every message's choice).
class DorEscape final : public EscapeFunction {
 public:
  DorEscape(const KaryNCube& t, int vcs, bool escape_only,
            DorDateline dateline = DorDateline::kSplit, DorTieRule tie = DorTieRule::kPlus)
      : t_(t), vcs_(vcs), escape_(escape_only), dateline_(dateline), tie_(tie) {}
  std::string Describe() const override {
    return escape_ ? "dimension order with dateline on the escape VCs (VC 0/1 on a torus, 0 on a "
                     "mesh)"
                   : (dateline_ == DorDateline::kShared
                          ? "dimension order with the shared dateline on every VC"
                          : "dimension order with dateline classes on every VC");
  }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override {
    const DorHop hop = NextDorHop(t_, node, dst);
    if (hop.port < 0) return;
    Add(hop, node, in_port, in_vc, dst, out);
    if (!escape_ && tie_ != DorTieRule::kPlus && t_.torus() &&
        2 * t_.Offset(hop.dim, t_.Coord(node, hop.dim), t_.Coord(dst, hop.dim)) == t_.k(hop.dim)) {
      Add(NextDorHop(t_, node, dst, 1u << hop.dim), node, in_port, in_vc, dst, out);
    }
  }

 private:
  void Add(const DorHop& hop, int node, int in_port, int in_vc, int dst,
           std::vector<EscapeHop>* out) const {
    uint32_t mask;
    if (escape_) {
      mask = t_.torus() ? (hop.dateline_class == 0 ? 1u : 2u) : 1u;
    } else if (!t_.torus()) {
      mask = vcs_ >= 32 ? ~0u : (1u << vcs_) - 1;
    } else if (dateline_ == DorDateline::kShared) {
      mask = SharedDatelineMask(t_, hop, node, dst, in_port, in_vc, vcs_);
    } else {
      mask = ClassMask(0, vcs_, hop.dateline_class);
    }
    AddMask(hop.port, mask, out);
  }

  const KaryNCube& t_;
  int vcs_;
  bool escape_;
  DorDateline dateline_;
  DorTieRule tie_;
};

// up*/down* on the VCs of `mask` (every VC for updown, the UD-VC for detour-ud).
class UpDownEscape final : public EscapeFunction {
 public:
  UpDownEscape(const Topology& t, const UpDownTables& tables, uint32_t mask, std::string what)
      : t_(t), tables_(tables), mask_(mask), what_(std::move(what)) {}
  std::string Describe() const override { return what_; }
  void Next(int node, int in_port, int, int dst, std::vector<EscapeHop>* out) const override {
    bool down = false;
    if (in_port < t_.NumNetworkPorts()) {
      down = !tables_.IsUpChannel(t_.Neighbor(node, in_port).node, node);
    }
    for (uint32_t m = tables_.Ports(node, dst, down); m != 0; m &= m - 1) {
      AddMask(__builtin_ctz(m), mask_, out);
    }
  }

 private:
  const Topology& t_;
  const UpDownTables& tables_;
  uint32_t mask_;
  std::string what_;
};

// Detour-NF's escape: DOR where its path is intact, else (and once on it) the NF VC.
class DetourNfEscape final : public EscapeFunction {
 public:
  DetourNfEscape(const KaryNCube& t, const DetourNfRouting& r) : t_(t), r_(r), dor_(t, 4, true) {}
  std::string Describe() const override {
    return "dimension order with dateline on the escape VCs where its path is fault-free, "
           "else Negative-First on VC " +
           std::to_string(r_.nf_vc());
  }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override {
    const bool net_in = in_port < t_.NumNetworkPorts();
    const bool on_nf = net_in && in_vc == r_.nf_vc();
    if (!on_nf && r_.DorPathIntact(node, dst)) {
      dor_.Next(node, in_port, in_vc, dst, out);
      return;
    }
    const bool plus = on_nf && t_.Neighbor(node, in_port).port % 2 == 0;
    for (uint32_t m = r_.nf_table().Ports(node, dst, plus); m != 0; m &= m - 1) {
      out->push_back({__builtin_ctz(m), r_.nf_vc()});
    }
  }

 private:
  const KaryNCube& t_;
  const DetourNfRouting& r_;
  DorEscape dor_;
};

// What CheckDeadlockFreedom builds: the routing object the tables live in + its escape.
struct Built {
  std::unique_ptr<RoutingFunction> routing;
  std::unique_ptr<EscapeFunction> escape;
};

struct CheckerEntry {
  std::string_view algorithm;
  Built (*build)(const KaryNCube& t, const SimConfig& c);
};

constexpr CheckerEntry kCheckers[] = {
    {"dor",
     [](const KaryNCube& t, const SimConfig& c) {
       return Built{nullptr,
                    std::make_unique<DorEscape>(t, c.router.vcs, false, c.routing.dor_dateline,
                                                c.routing.dor_tie)};
     }},
    {"duato",
     [](const KaryNCube& t, const SimConfig& c) {
       return Built{nullptr, std::make_unique<DorEscape>(t, c.router.vcs, true)};
     }},
    {"detour-nf",
     [](const KaryNCube& t, const SimConfig& c) {
       auto r = std::make_unique<DetourNfRouting>(t, c.router.vcs);
       auto e = std::make_unique<DetourNfEscape>(t, *r);
       return Built{std::move(r), std::move(e)};
     }},
    {"updown",
     [](const KaryNCube& t, const SimConfig& c) {
       auto r = std::make_unique<UpDownRouting>(t, c.router.vcs, c.routing.root);
       const uint32_t all = c.router.vcs >= 32 ? ~0u : (1u << c.router.vcs) - 1;
       auto e = std::make_unique<UpDownEscape>(
           t, r->tables(), all,
           "up*/down* (root " + t.NodeName(r->tables().root()) + ") on every VC");
       return Built{std::move(r), std::move(e)};
     }},
    {"detour-ud",
     [](const KaryNCube& t, const SimConfig& c) {
       auto r = std::make_unique<DetourUdRouting>(t, c);
       auto e = std::make_unique<UpDownEscape>(t, r->updown(), 1u << r->ud_vc(),
                                               "the UD-VC (VC " + std::to_string(r->ud_vc()) +
                                                   ") with up*/down* (root " +
                                                   t.NodeName(r->updown().root()) + ")");
       return Built{std::move(r), std::move(e)};
     }},
};

std::string ChannelName(const Topology& t, int64_t c, int vcs) {
  const int vc = static_cast<int>(c % vcs);
  const int64_t np = c / vcs;
  const int node = static_cast<int>(np / t.NumNetworkPorts());
  const int port = static_cast<int>(np % t.NumNetworkPorts());
  return t.NodeName(node) + " " + t.PortName(port) + " vc " + std::to_string(vc);
}

// A cycle of `adj` as a list of vertices, or empty when acyclic (iterative DFS).
std::vector<int64_t> FindCycle(const std::vector<std::vector<int64_t>>& adj) {
  std::vector<uint8_t> color(adj.size(), 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<int64_t, size_t>> stack;
  for (size_t s = 0; s < adj.size(); ++s) {
    if (color[s] != 0 || adj[s].empty()) continue;
    stack.push_back({static_cast<int64_t>(s), 0});
    color[s] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i < adj[v].size()) {
        const int64_t w = adj[v][i++];
        if (color[w] == 1) {  // back edge: the cycle is w .. top of the stack
          std::vector<int64_t> cycle;
          size_t k = stack.size();
          while (k > 0 && stack[k - 1].first != w) --k;
          for (size_t j = k - 1; j < stack.size(); ++j) cycle.push_back(stack[j].first);
          return cycle;
        }
        if (color[w] == 0) {
          color[w] = 1;
          stack.push_back({w, 0});
        }
      } else {
        color[v] = 2;
        stack.pop_back();
      }
    }
  }
  return {};
}

}  // namespace

CdgReport CheckEscape(const Topology& t, int vcs, const EscapeFunction& escape) {
  CdgReport rep;
  const int P = t.NumNetworkPorts();
  const int64_t nch = static_cast<int64_t>(t.NumNodes()) * P * vcs;
  auto index = [&](int node, const EscapeHop& h) {
    return (static_cast<int64_t>(node) * P + h.port) * vcs + h.vc;
  };
  std::vector<std::vector<int64_t>> adj(static_cast<size_t>(nch));
  std::vector<uint8_t> used(static_cast<size_t>(nch), 0);
  std::vector<int> seen(static_cast<size_t>(nch), -1);  // destination that last visited it
  std::vector<int64_t> work;
  std::vector<EscapeHop> next;
  // Next channels from (node, in_port, in_vc) for dst; "" or the problem.
  auto expand = [&](int node, int in_port, int in_vc, int dst, int64_t from) -> std::string {
    next.clear();
    escape.Next(node, in_port, in_vc, dst, &next);
    const std::string where =
        from < 0 ? "entering at " + t.NodeName(node) : "after " + ChannelName(t, from, vcs);
    if (next.empty()) return "dead end " + where + " for destination " + t.NodeName(dst);
    for (const EscapeHop& h : next) {
      if (h.port < 0 || h.port >= P || h.vc < 0 || h.vc >= vcs || !t.ChannelAlive(node, h.port) ||
          !t.Neighbor(node, h.port).valid()) {
        return "uses a faulty or missing channel (" + t.NodeName(node) + " " + t.PortName(h.port) +
               ") " + where + " for destination " + t.NodeName(dst);
      }
      const int64_t c = index(node, h);
      if (from >= 0) adj[from].push_back(c);
      used[c] = 1;
      if (seen[c] != dst) {
        seen[c] = dst;
        work.push_back(c);
      }
    }
    return "";
  };
  for (int d = 0; d < t.NumNodes(); ++d) {
    if (!t.NodeAlive(d)) continue;
    work.clear();
    for (int v = 0; v < t.NumNodes(); ++v) {
      if (v == d || !t.NodeAlive(v)) continue;
      std::string problem = expand(v, P, 0, d, -1);
      while (problem.empty() && !work.empty()) {
        const int64_t c = work.back();
        work.pop_back();
        const int64_t np = c / vcs;
        const PortRef far = t.Neighbor(static_cast<int>(np / P), static_cast<int>(np % P));
        if (far.node != d) problem = expand(far.node, far.port, static_cast<int>(c % vcs), d, c);
      }
      if (!problem.empty()) {
        rep.text = "NOT connected: " + escape.Describe() + ": " + problem;
        return rep;
      }
    }
  }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    rep.dependencies += static_cast<int64_t>(a.size());
  }
  for (uint8_t u : used) rep.channels += u;
  const std::vector<int64_t> cycle = FindCycle(adj);
  if (!cycle.empty()) {
    rep.text = "NOT deadlock-free: " + escape.Describe() + ": dependency cycle of " +
               std::to_string(cycle.size()) + " channels:";
    for (int64_t c : cycle) rep.text += "\n  " + ChannelName(t, c, vcs) + " ->";
    rep.text += "\n  " + ChannelName(t, cycle.front(), vcs);
    return rep;
  }
  rep.ok = true;
  rep.text = "deadlock-free: " + escape.Describe() + " uses " + std::to_string(rep.channels) +
             " virtual channels with " + std::to_string(rep.dependencies) +
             " direct dependencies; the dependency graph is acyclic and every healthy node "
             "reaches every healthy destination";
  return rep;
}

Result<CdgReport> CheckDeadlockFreedom(const SimConfig& config) {
  const CheckerEntry* entry = nullptr;
  std::string known;
  for (const CheckerEntry& e : kCheckers) {
    if (e.algorithm == config.routing.algorithm) entry = &e;
    known += (known.empty() ? "" : ", ") + std::string(e.algorithm);
  }
  if (entry == nullptr) {
    return Status::InvalidArgument("routing.algorithm: no deadlock checker for '" +
                                   config.routing.algorithm + "' (checkers: " + known + ")");
  }
  Result<std::unique_ptr<KaryNCube>> topo = KaryNCube::Create(config.network);
  if (!topo.ok()) return topo.status();
  KaryNCube& t = **topo;
  if (config.faults.any()) {
    Result<FaultPlan> plan = PlanFaults(t, config.faults, config.seed);
    if (!plan.ok()) return plan.status();
    plan->initial.ApplyTo(&t);
  }
  Result<const RoutingEntry*> algo = FindRoutingAlgorithm(config.routing.algorithm);
  if (!algo.ok()) return algo.status();
  UKAI_RETURN_IF_ERROR((*algo)->supports(t, config));
  Built built = entry->build(t, config);
  return CheckEscape(t, config.router.vcs, *built.escape);
}

}  // namespace ukai::sim
