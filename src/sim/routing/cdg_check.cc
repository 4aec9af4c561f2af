#include "sim/routing/cdg_check.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "sim/routing/class_routing.h"
#include "sim/routing/detour_check.h"
#include "sim/routing/detour_nf.h"
#include "sim/routing/detour_ud.h"
#include "sim/routing/duato.h"
#include "sim/routing/escape_functions.h"
#include "sim/routing/registry.h"
#include "sim/routing/route_state.h"
#include "sim/routing/source_check.h"
#include "sim/routing/valiant.h"
#include "sim/topology/factory.h"
#include "sim/topology/faults.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {
namespace {

using Bits = std::vector<uint64_t>;

bool TestBit(const Bits& b, int64_t i) { return (b[static_cast<size_t>(i) >> 6] >> (i & 63)) & 1; }
// a |= b; whether a changed.
bool OrInto(uint64_t* a, const uint64_t* b, size_t words) {
  bool changed = false;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t v = a[w] | b[w];
    changed |= v != a[w];
    a[w] = v;
  }
  return changed;
}

enum class Kind : uint8_t { kDirect, kIndirect, kQueue };

// One explored state of a message for one destination: an escape channel, or an adaptive
// state (a node reached on an adaptive VC through an input port), with its successors.
struct State {
  int64_t id;  // channel index, or node * P + in_port for an adaptive state
  bool adaptive;
  std::vector<int64_t> esc_next;  // escape channels requested next
  std::vector<int32_t> ada_next;  // adaptive states reached next (their slots)
};

// The dependency graph of one escape function on one topology (see cdg_check.h).
class Cdg {
 public:
  Cdg(const Topology& t, int vcs, const EscapeFunction& e, const CdgOptions& o)
      : t_(t),
        e_(e),
        vcs_(vcs),
        P_(t.NumNetworkPorts()),
        nch_(static_cast<int64_t>(t.NumNodes()) * P_ * vcs),
        words_(static_cast<size_t>((nch_ + 63) / 64)),
        adaptive_(o.indirect && e.AdaptiveVc() >= 0),
        queue_(adaptive_ && !e.AtomicAdaptiveVcs()),
        direct_(static_cast<size_t>(nch_)),
        used_(static_cast<size_t>(nch_), 0),
        esc_slot_(static_cast<size_t>(nch_), -1),
        ada_slot_(static_cast<size_t>(t.NumNodes()) * P_, -1) {
    if (adaptive_) rows_.resize(static_cast<size_t>(nch_));
    if (queue_) any_.assign(static_cast<size_t>(t.NumNodes()) * P_ * words_, 0);
  }
  CdgReport Run();

 private:
  std::string ChannelName(int64_t c) const {
    const int64_t np = c / vcs_;
    return t_.NodeName(static_cast<int>(np / P_)) + " " + t_.PortName(static_cast<int>(np % P_)) +
           " vc " + std::to_string(c % vcs_);
  }
  PortRef Far(int64_t c) const {
    const int64_t np = c / vcs_;
    return t_.Neighbor(static_cast<int>(np / P_), static_cast<int>(np % P_));
  }
  std::string Explore(int d);
  std::string Expand(int node, int in_port, int in_vc, int d, State* s, const std::string& where);
  int32_t Reach(int64_t id, bool adaptive);
  void Closure(const uint64_t* base, Bits* reach) const;
  void AddIndirect(int d, const Bits& reach, bool queue);
  std::string CycleText(const std::vector<int64_t>& cycle);
  std::string Witness(int64_t from, int64_t to);

  const Topology& t_;
  const EscapeFunction& e_;
  const int vcs_, P_;
  const int64_t nch_;
  const size_t words_;
  const bool adaptive_, queue_;
  std::vector<std::vector<int64_t>> direct_;
  std::vector<Bits> rows_;  // per escape channel: indirect targets (bit t), then queue ones
  std::vector<Bits> queue_rows_;
  std::unordered_map<int64_t, int> witness_d_;  // indirect edge c * nch + t -> a destination
  std::vector<uint8_t> used_;
  Bits any_;  // per adaptive state: escape channels reachable for any destination (queue)
  // Per destination.
  std::vector<State> states_;
  std::vector<int32_t> esc_slot_, ada_slot_, work_;
};

int32_t Cdg::Reach(int64_t id, bool adaptive) {
  int32_t& slot =
      adaptive ? ada_slot_[static_cast<size_t>(id)] : esc_slot_[static_cast<size_t>(id)];
  if (slot < 0) {
    slot = static_cast<int32_t>(states_.size());
    states_.push_back({id, adaptive, {}, {}});
    work_.push_back(slot);
  }
  return slot;
}

// Fills s's successors at `node` for destination d; "" or the problem.
std::string Cdg::Expand(int node, int in_port, int in_vc, int d, State* s,
                        const std::string& where) {
  std::vector<EscapeHop> next;
  e_.Next(node, in_port, in_vc, d, &next);
  const std::string dst = " for destination " + t_.NodeName(d);
  if (next.empty()) return "dead end " + where + dst + " (no escape channel offered)";
  for (const EscapeHop& h : next) {
    if (h.port < 0 || h.port >= P_ || h.vc < 0 || h.vc >= vcs_ || !t_.ChannelAlive(node, h.port) ||
        !t_.Neighbor(node, h.port).valid()) {
      return "uses a faulty or missing channel (" + t_.NodeName(node) + " " + t_.PortName(h.port) +
             ") " + where + dst;
    }
    const int64_t c = (static_cast<int64_t>(node) * P_ + h.port) * vcs_ + h.vc;
    s->esc_next.push_back(c);
    used_[static_cast<size_t>(c)] = 1;
  }
  if (e_.AdaptiveVc() < 0) return "";
  const uint32_t ports = e_.AdaptivePorts(node, in_port, in_vc, d);
  if (ports != 0 && e_.Recovery() && !s->adaptive && in_port < P_) {
    return "a message in recovery " + where + dst + " is offered a non-recovery VC (port " +
           t_.PortName(__builtin_ctz(ports)) + "): recovery must never leave its VCs";
  }
  for (uint32_t m = ports; adaptive_ && m != 0; m &= m - 1) {
    const int p = __builtin_ctz(m);
    const PortRef far = t_.LiveNeighbor(node, p);
    if (!far.valid() || !t_.NodeAlive(far.node) || far.node == d) continue;
    s->ada_next.push_back(Reach(static_cast<int64_t>(far.node) * P_ + far.port, true));
  }
  return "";
}

// Every state a message for d reaches from an entry at any healthy node.
std::string Cdg::Explore(int d) {
  for (const State& s : states_)
    (s.adaptive ? ada_slot_ : esc_slot_)[static_cast<size_t>(s.id)] = -1;
  states_.clear();
  work_.clear();
  for (int v = 0; v < t_.NumTerminals(); ++v) {  // messages enter at terminals only
    if (v == d || !t_.NodeAlive(v)) continue;
    State entry{-1, false, {}, {}};
    std::string problem = Expand(v, P_, 0, d, &entry, "entering at " + t_.NodeName(v));
    for (int64_t c : entry.esc_next) Reach(c, false);
    while (problem.empty() && !work_.empty()) {
      const int32_t i = work_.back();
      work_.pop_back();
      State s = std::move(states_[static_cast<size_t>(i)]);
      if (s.adaptive) {
        const int node = static_cast<int>(s.id / P_), port = static_cast<int>(s.id % P_);
        problem = Expand(
            node, port, e_.AdaptiveVc(), d, &s,
            "at " + t_.NodeName(node) + " after an adaptive channel in by " + t_.PortName(port));
      } else {
        const PortRef far = Far(s.id);
        if (far.node != d) {
          problem = Expand(far.node, far.port, static_cast<int>(s.id % vcs_), d, &s,
                           "after " + ChannelName(s.id));
        }
      }
      for (int64_t c : s.esc_next) Reach(c, false);
      states_[static_cast<size_t>(i)] = std::move(s);
    }
    if (!problem.empty()) return problem;
  }
  return "";
}

// reach[a] = base[a] | escape channels requested at a | reach of a's adaptive successors,
// over the adaptive states of the current destination (a fixpoint; one pass plus a check
// when they form a DAG, as with minimal adaptive routing).
void Cdg::Closure(const uint64_t* base, Bits* reach) const {
  reach->assign(states_.size() * words_, 0);
  std::vector<int32_t> order;  // adaptive states, successors first (DFS post-order)
  std::vector<uint8_t> mark(states_.size(), 0);
  std::vector<std::pair<int32_t, size_t>> stack;
  for (size_t r = 0; r < states_.size(); ++r) {
    if (!states_[r].adaptive || mark[r]) continue;
    stack.push_back({static_cast<int32_t>(r), 0});
    mark[r] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      const std::vector<int32_t>& next = states_[static_cast<size_t>(v)].ada_next;
      if (i < next.size()) {
        const int32_t w = next[i++];
        if (!mark[static_cast<size_t>(w)]) {
          mark[static_cast<size_t>(w)] = 1;
          stack.push_back({w, 0});
        }
      } else {
        order.push_back(v);
        stack.pop_back();
      }
    }
  }
  for (int32_t a : order) {
    const State& s = states_[static_cast<size_t>(a)];
    uint64_t* row = reach->data() + static_cast<size_t>(a) * words_;
    if (base != nullptr) OrInto(row, base + static_cast<size_t>(s.id) * words_, words_);
    for (int64_t c : s.esc_next) row[static_cast<size_t>(c) >> 6] |= 1ull << (c & 63);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t a : order) {
      uint64_t* row = reach->data() + static_cast<size_t>(a) * words_;
      for (int32_t b : states_[static_cast<size_t>(a)].ada_next) {
        changed |= OrInto(row, reach->data() + static_cast<size_t>(b) * words_, words_);
      }
    }
  }
}

// Escape channel c -> what its adaptive successors reach (indirect, or queue edges).
void Cdg::AddIndirect(int d, const Bits& reach, bool queue) {
  std::vector<Bits>& rows = queue ? queue_rows_ : rows_;
  for (const State& s : states_) {
    if (s.adaptive || s.ada_next.empty()) continue;
    Bits& row = rows[static_cast<size_t>(s.id)];
    if (row.empty()) row.assign(words_, 0);
    for (int32_t a : s.ada_next) {
      const uint64_t* src = reach.data() + static_cast<size_t>(a) * words_;
      for (size_t w = 0; w < words_; ++w) {
        for (uint64_t fresh = src[w] & ~row[w]; !queue && fresh != 0; fresh &= fresh - 1) {
          witness_d_.emplace(s.id * nch_ + static_cast<int64_t>(w) * 64 + __builtin_ctzll(fresh),
                             d);
        }
        row[w] |= src[w];
      }
    }
  }
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

// The shortest cycle through a vertex of `cycle` (BFS from each; a readable report).
std::vector<int64_t> Shorten(const std::vector<std::vector<int64_t>>& adj,
                             std::vector<int64_t> cycle) {
  std::vector<int64_t> parent(adj.size(), -2);
  std::vector<int64_t> queue, touched;
  for (const int64_t v : std::vector<int64_t>(cycle)) {
    for (int64_t u : touched) parent[static_cast<size_t>(u)] = -2;
    touched.assign(1, v);
    queue.assign(1, v);
    parent[static_cast<size_t>(v)] = -1;
    for (size_t i = 0; i < queue.size() && queue.size() < cycle.size() * 64 + adj.size(); ++i) {
      const int64_t u = queue[i];
      auto back =
          std::find(adj[static_cast<size_t>(u)].begin(), adj[static_cast<size_t>(u)].end(), v);
      if (back != adj[static_cast<size_t>(u)].end()) {
        std::vector<int64_t> found;
        for (int64_t w = u; w >= 0; w = parent[static_cast<size_t>(w)]) found.push_back(w);
        if (found.size() < cycle.size()) cycle.assign(found.rbegin(), found.rend());
        break;
      }
      for (int64_t w : adj[static_cast<size_t>(u)]) {
        if (parent[static_cast<size_t>(w)] != -2) continue;
        parent[static_cast<size_t>(w)] = u;
        touched.push_back(w);
        queue.push_back(w);
      }
    }
  }
  return cycle;
}

CdgReport Cdg::Run() {
  CdgReport rep;
  Bits reach;
  for (int pass = 0; pass < (queue_ ? 2 : 1); ++pass) {
    if (pass == 1) queue_rows_.resize(static_cast<size_t>(nch_));
    for (int d = 0; d < t_.NumTerminals(); ++d) {  // and are addressed to terminals
      if (!t_.NodeAlive(d)) continue;
      // A per-message random choice (EscapeFunction::Variants()) stays fixed on a path:
      // each variant is explored on its own and their dependencies are unioned.
      for (int variant = 0; variant < e_.Variants(); ++variant) {
        e_.SelectVariant(variant);
        const std::string problem = Explore(d);
        if (!problem.empty()) {
          rep.text = "NOT connected: " + e_.Describe() + ": " + problem;
          return rep;
        }
        if (pass == 1) {  // queue edges: what any message in a reachable adaptive buffer needs
          Closure(any_.data(), &reach);
          AddIndirect(d, reach, true);
          continue;
        }
        for (const State& s : states_) {
          if (!s.adaptive) {
            auto& a = direct_[static_cast<size_t>(s.id)];
            a.insert(a.end(), s.esc_next.begin(), s.esc_next.end());
          }
        }
        if (!adaptive_) continue;
        Closure(nullptr, &reach);
        AddIndirect(d, reach, false);
        for (size_t i = 0; queue_ && i < states_.size(); ++i) {
          if (!states_[i].adaptive) continue;
          OrInto(any_.data() + static_cast<size_t>(states_[i].id) * words_,
                 reach.data() + i * words_, words_);
        }
      }
    }
  }
  std::vector<std::vector<int64_t>> adj(static_cast<size_t>(nch_));
  for (int64_t c = 0; c < nch_; ++c) {
    auto& a = direct_[static_cast<size_t>(c)];
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    rep.direct += static_cast<int64_t>(a.size());
    adj[static_cast<size_t>(c)] = a;
    for (int k = 0; k < 2; ++k) {
      const std::vector<Bits>& rows = k == 0 ? rows_ : queue_rows_;
      if (rows.empty() || rows[static_cast<size_t>(c)].empty()) continue;
      const Bits& row = rows[static_cast<size_t>(c)];
      for (size_t w = 0; w < words_; ++w) {
        for (uint64_t m = row[w]; m != 0; m &= m - 1) {
          const int64_t t = static_cast<int64_t>(w) * 64 + __builtin_ctzll(m);
          if (std::binary_search(a.begin(), a.end(), t)) continue;
          if (k == 1 && !rows_[static_cast<size_t>(c)].empty() &&
              TestBit(rows_[static_cast<size_t>(c)], t)) {
            continue;
          }
          adj[static_cast<size_t>(c)].push_back(t);
          ++(k == 0 ? rep.indirect : rep.queue);
        }
      }
    }
  }
  for (uint8_t u : used_) rep.channels += u;
  rep.dependencies = rep.direct + rep.indirect + rep.queue;
  const std::vector<int64_t> cycle = Shorten(adj, FindCycle(adj));
  if (!cycle.empty()) {
    rep.text = "NOT deadlock-free: " + e_.Describe() + ": " + CycleText(cycle);
    return rep;
  }
  rep.ok = true;
  rep.text = "deadlock-free: " + e_.Describe() + " uses " + std::to_string(rep.channels) +
             " virtual channels with " + std::to_string(rep.direct) + " direct dependencies";
  if (adaptive_ && !e_.Recovery()) {
    rep.text += " and " + std::to_string(rep.indirect) +
                " indirect ones (through the adaptive VCs)" +
                (queue_ ? " and " + std::to_string(rep.queue) + " queue ones" : "") +
                "; the extended dependency graph";
  } else {
    rep.text += "; the dependency graph";
  }
  rep.text += " is acyclic and every healthy node reaches every healthy destination";
  if (!e_.Rationale().empty()) rep.text += " (" + e_.Rationale() + ")";
  return rep;
}

std::string Cdg::CycleText(const std::vector<int64_t>& cycle) {
  std::string lines;
  int counts[3] = {0, 0, 0};
  for (size_t i = 0; i < cycle.size(); ++i) {
    const int64_t from = cycle[i], to = cycle[(i + 1) % cycle.size()];
    const auto& a = direct_[static_cast<size_t>(from)];
    std::string how = "direct";
    Kind kind = Kind::kDirect;
    if (!std::binary_search(a.begin(), a.end(), to)) {
      const bool ind = !rows_.empty() && !rows_[static_cast<size_t>(from)].empty() &&
                       TestBit(rows_[static_cast<size_t>(from)], to);
      kind = ind ? Kind::kIndirect : Kind::kQueue;
      how = ind ? "indirect: " + Witness(from, to)
                : "queue: the message may wait in a non-atomic adaptive buffer behind a message "
                  "(any destination) that requests the next channel";
    }
    ++counts[static_cast<int>(kind)];
    lines += "\n  " + ChannelName(from) + " -> [" + how + "]";
  }
  lines += "\n  " + ChannelName(cycle.front());
  std::string head = "dependency cycle of " + std::to_string(cycle.size()) + " channels (" +
                     std::to_string(counts[0]) + " direct, " + std::to_string(counts[1]) +
                     " indirect";
  if (queue_) head += ", " + std::to_string(counts[2]) + " queue";
  return head + " dependencies):" + lines;
}

// "destination D, adaptive hops to A, B" for an indirect edge from -> to.
std::string Cdg::Witness(int64_t from, int64_t to) {
  const auto it = witness_d_.find(from * nch_ + to);
  if (it == witness_d_.end() || !Explore(it->second).empty()) return "through adaptive VCs";
  const int d = it->second;
  const int32_t start = esc_slot_[static_cast<size_t>(from)];
  std::vector<int32_t> parent(states_.size(), -2), queue;
  for (int32_t a : states_[static_cast<size_t>(start)].ada_next) {
    if (parent[static_cast<size_t>(a)] == -2) {
      parent[static_cast<size_t>(a)] = -1;
      queue.push_back(a);
    }
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    const State& s = states_[static_cast<size_t>(queue[i])];
    if (std::find(s.esc_next.begin(), s.esc_next.end(), to) != s.esc_next.end()) {
      std::vector<std::string> hops;
      for (int32_t v = queue[i]; v >= 0; v = parent[static_cast<size_t>(v)]) {
        hops.push_back(t_.NodeName(static_cast<int>(states_[static_cast<size_t>(v)].id / P_)));
      }
      std::string text = "destination " + t_.NodeName(d) + ", adaptive hops to ";
      for (size_t h = hops.size(); h-- > 0;) text += hops[h] + (h > 0 ? ", " : "");
      return text;
    }
    for (int32_t b : s.ada_next) {
      if (parent[static_cast<size_t>(b)] == -2) {
        parent[static_cast<size_t>(b)] = queue[i];
        queue.push_back(b);
      }
    }
  }
  return "destination " + t_.NodeName(d);
}

std::string VcRange(uint32_t mask) {
  const int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
  return lo == hi ? "VC " + std::to_string(lo)
                  : "VCs " + std::to_string(lo) + "-" + std::to_string(hi);
}

uint32_t AllVcs(const SimConfig& c) { return c.router.vcs >= 32 ? ~0u : (1u << c.router.vcs) - 1; }

// Duato-type routing: the escape VCs `escape` of `r` (described by `what`) inside its
// adaptive VCs. The queue dependencies are added when some adaptive VC is handed to a new
// message before its buffer is empty (wormhole only: with virtual cut-through a blocked
// message sits whole in one buffer).
std::unique_ptr<EscapeFunction> DuatoType(const KaryNCube& t, const SimConfig& c,
                                          const RoutingFunction& r, uint32_t escape,
                                          const std::string& what) {
  const uint32_t adaptive = AllVcs(c) & ~escape;
  RoutedEscapeSpec spec;
  spec.escape_vcs = escape;
  const bool vct = c.router.switching != Switching::kWormhole;
  spec.atomic_adaptive = vct || (adaptive & ~r.AtomicVcMask()) == 0;
  spec.describe = what + " inside the adaptive " + VcRange(adaptive);
  spec.rationale = vct ? "Duato's theorem; virtual cut-through: a blocked message sits whole in "
                         "one buffer"
                   : spec.atomic_adaptive
                       ? "Duato's theorem; the adaptive VCs are allocated atomically, so "
                         "a blocked head is at the front of its buffer and can request "
                         "its escape channel"
                       : "";
  return std::make_unique<RoutedEscape>(t, r, c.router.vcs, std::move(spec));
}

std::unique_ptr<EscapeFunction> DuatoEscape(const KaryNCube& t, const SimConfig& c,
                                            const RoutingFunction& r) {
  const uint32_t escape = (1u << static_cast<const DuatoRouting&>(r).escape_vcs()) - 1;
  return DuatoType(t, c, r, escape,
                   "Duato's escape " + VcRange(escape) + " (dimension order with dateline)");
}

std::unique_ptr<EscapeFunction> DetourNfEscape(const KaryNCube& t, const SimConfig& c,
                                               const RoutingFunction& r) {
  const int nf = static_cast<const DetourNfRouting&>(r).nf_vc();
  return DuatoType(t, c, r, (2u << nf) - 1,
                   "Detour-NF's escape " + VcRange((1u << nf) - 1) +
                       " (dimension order with dateline where its path is fault-free) and "
                       "Negative-First VC " +
                       std::to_string(nf));
}

std::unique_ptr<EscapeFunction> DetourUdEscape(const KaryNCube& t, const SimConfig& c,
                                               const RoutingFunction& r) {
  const auto& ud = static_cast<const DetourUdRouting&>(r);
  RoutedEscapeSpec spec;
  spec.escape_vcs = 1u << ud.ud_vc();
  spec.recovery = true;
  spec.escape_state = kRecoveryBit;
  spec.entry_blocked = c.routing.timeout_cycles;
  spec.describe = "the UD-VC (VC " + std::to_string(ud.ud_vc()) + ") with up*/down* (root " +
                  t.NodeName(ud.updown().root()) + ")";
  spec.rationale =
      "deadlock recovery: a message on the UD-VC is never offered an FA-VC (checked at every "
      "UD-VC channel for every destination), so no indirect dependency exists and this direct "
      "graph is the extended one; the FA-VCs may deadlock by design, and a head blocked there "
      "routing.timeout_cycles enters the UD-VC at any node";
  return std::make_unique<RoutedEscape>(t, r, c.router.vcs, std::move(spec));
}

constexpr int64_t kMaxExtendedMbytes = 1024;

// One checker: an escape function on a k-ary n-cube (`build`), or a check of its own that
// builds the topology itself (`check`).
struct CheckerEntry {
  std::string_view algorithm;
  std::unique_ptr<EscapeFunction> (*build)(const KaryNCube& t, const SimConfig& c,
                                           const RoutingFunction& routing);
  Result<CdgReport> (*check)(const SimConfig& config) = nullptr;
};

constexpr CheckerEntry kCheckers[] = {
    {"dor",
     [](const KaryNCube& t, const SimConfig& c, const RoutingFunction&) {
       return std::unique_ptr<EscapeFunction>(
           std::make_unique<DorEscape>(t, c.router.vcs, c.routing.dor_dateline, c.routing.dor_tie));
     }},
    {"duato", &DuatoEscape},
    {"min_adapt", &DuatoEscape},
    {"planar_adapt",
     [](const KaryNCube& t, const SimConfig& c, const RoutingFunction& r) {
       RoutedEscapeSpec spec;
       spec.describe = "planar_adapt's Route() on every VC (three classes)";
       spec.rationale = "every candidate of Route() is a dependency; no adaptive VCs";
       spec.escape_vcs = AllVcs(c);
       return std::unique_ptr<EscapeFunction>(
           std::make_unique<RoutedEscape>(t, r, c.router.vcs, std::move(spec)));
     }},
    {"detour-nf", &DetourNfEscape},
    {"updown",
     [](const KaryNCube& t, const SimConfig& c, const RoutingFunction& r) {
       const auto& tables = static_cast<const UpDownRouting&>(r).tables();
       return std::unique_ptr<EscapeFunction>(std::make_unique<UpDownEscape>(
           t, tables, AllVcs(c), "up*/down* (root " + t.NodeName(tables.root()) + ") on every VC"));
     }},
    {"detour-ud", &DetourUdEscape},
    {"valiant",
     [](const KaryNCube&, const SimConfig&, const RoutingFunction& r) {
       return static_cast<const TwoPhaseRouting&>(r).Escape();
     }},
    {"romm",
     [](const KaryNCube&, const SimConfig&, const RoutingFunction& r) {
       return static_cast<const TwoPhaseRouting&>(r).Escape();
     }},
    {"dor-detour", nullptr, &CheckDorDetour},
};

struct RouteSetChecker {
  std::string_view algorithm;
  Result<CdgReport> (*check)(const SimConfig& config);
};

constexpr RouteSetChecker kRouteSetCheckers[] = {
    {"source", &CheckSourceRoutes},
};

}  // namespace

std::vector<int64_t> FindShortCycle(const std::vector<std::vector<int64_t>>& adj) {
  return Shorten(adj, FindCycle(adj));
}

CdgReport CheckEscape(const Topology& t, int vcs, const EscapeFunction& escape,
                      const CdgOptions& options) {
  return Cdg(t, vcs, escape, options).Run();
}

// The indirect topologies: every routing is a ClassRouting with its own checker view.
Result<CdgReport> CheckSwitchTopology(const SimConfig& config) {
  Result<std::unique_ptr<Topology>> topo = MakeTopology(config.network);
  if (!topo.ok()) return topo.status();
  Result<const RoutingEntry*> algo = FindRoutingAlgorithm(config.routing.algorithm);
  if (!algo.ok()) return algo.status();
  UKAI_RETURN_IF_ERROR((*algo)->supports(**topo, config));
  const std::unique_ptr<RoutingFunction> routing = (*algo)->create(**topo, config);
  const auto* classed = dynamic_cast<const ClassRouting*>(routing.get());
  if (classed == nullptr) {
    return Status::InvalidArgument("routing.algorithm: no deadlock checker for '" +
                                   config.routing.algorithm + "' on the " + (*topo)->Describe())
        .WithKey("routing.algorithm");
  }
  return CheckEscape(**topo, config.router.vcs, *classed->Escape());
}

Result<CdgReport> CheckDeadlockFreedom(const SimConfig& config) {
  // Routings whose routes are fixed paths are checked on their route sets.
  for (const RouteSetChecker& e : kRouteSetCheckers) {
    if (e.algorithm == config.routing.algorithm) return e.check(config);
  }
  switch (config.network.topology) {
    case TopologyKind::kCMesh:
    case TopologyKind::kFlatFly:
    case TopologyKind::kFatTree:
    case TopologyKind::kDragonfly:
      return CheckSwitchTopology(config);
    default:
      break;
  }
  const CheckerEntry* entry = nullptr;
  std::string known;
  for (const CheckerEntry& e : kCheckers) {
    if (e.algorithm == config.routing.algorithm) entry = &e;
    known += (known.empty() ? "" : ", ") + std::string(e.algorithm);
  }
  for (const RouteSetChecker& e : kRouteSetCheckers) known += ", " + std::string(e.algorithm);
  if (entry == nullptr) {
    return Status::InvalidArgument("routing.algorithm: no deadlock checker for '" +
                                   config.routing.algorithm + "' (checkers: " + known + ")")
        .WithKey("routing.algorithm");
  }
  if (entry->check != nullptr) return entry->check(config);
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
  const std::unique_ptr<RoutingFunction> routing = (*algo)->create(t, config);
  const std::unique_ptr<EscapeFunction> escape = entry->build(t, config, *routing);
  // The extended graph keeps a bitset of every channel per escape channel: refuse what
  // would not fit rather than exhaust the machine.
  const int64_t nch = static_cast<int64_t>(t.NumNodes()) * t.NumNetworkPorts() * config.router.vcs;
  const int64_t mbytes = nch / 8 * nch / (1 << 20);
  if (escape->AdaptiveVc() >= 0 && !escape->Recovery() && mbytes > kMaxExtendedMbytes) {
    return Status::InvalidArgument(
        "network: too large for the extended dependency check of '" + config.routing.algorithm +
        "': " + std::to_string(nch) + " virtual channels need about " + std::to_string(mbytes) +
        " MB of dependency bitsets (limit " + std::to_string(kMaxExtendedMbytes) + " MB)");
  }
  return CheckEscape(t, config.router.vcs, *escape);
}

}  // namespace ukai::sim
