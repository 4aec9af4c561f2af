#include "sim/engine/reconfiguration.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <utility>

namespace ukai::sim {
namespace {

// BFS over live channels between healthy nodes: level (-1: unreachable) and tree children.
struct Tree {
  std::vector<int> level;
  std::vector<std::vector<int>> children;
};

Tree Bfs(const Topology& t, int from) {
  Tree tree;
  tree.level.assign(static_cast<size_t>(t.NumNodes()), -1);
  tree.children.resize(static_cast<size_t>(t.NumNodes()));
  if (from < 0 || !t.NodeAlive(from)) return tree;
  std::vector<int> queue{from};
  tree.level[from] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && t.NodeAlive(far.node) && tree.level[far.node] < 0) {
        tree.level[far.node] = tree.level[v] + 1;
        tree.children[v].push_back(far.node);
        queue.push_back(far.node);
      }
    }
  }
  return tree;
}

int LowestHealthy(const Topology& t) {
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (t.NodeAlive(v)) return v;
  }
  return 0;
}

int LowestAlive(const Topology& t, const std::vector<int>& nodes) {
  int best = -1;
  for (int v : nodes) {
    if (t.NodeAlive(v) && (best < 0 || v < best)) best = v;
  }
  return best;
}

std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Sites that happened at or before `cycle`.
std::vector<int> SitesUpTo(const std::vector<ReconfigSite>& sites, int64_t cycle) {
  std::vector<int> out;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (sites[i].event.cycle <= cycle) out.push_back(static_cast<int>(i));
  }
  return out;
}

bool Touch(const Topology& t, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  for (int v = 0; v < t.NumNodes(); ++v) {
    if (!a[v]) continue;
    if (b[v]) return true;
    for (int p = 0; p < t.NumNetworkPorts(); ++p) {
      const PortRef far = t.LiveNeighbor(v, p);
      if (far.valid() && b[far.node]) return true;
    }
  }
  return false;
}

}  // namespace

FaultState EpisodeState(const FaultState& base, const std::vector<ReconfigSite>& sites,
                        std::vector<int> which) {
  std::sort(which.begin(), which.end());
  FaultState s = base;
  for (int i : which) ApplyFaultEvent(sites[i].event, &s);
  return s;
}

int ChooseRoot(const Topology& target, const ReconfigConfig& config,
               const std::vector<int>& priority, int current, const std::vector<int>& region) {
  if (config.root == ReconfigConfig::RootPolicy::kFaultRegion) {
    const int best = LowestAlive(target, region);
    if (best >= 0) return best;
  }
  for (int v : priority) {
    if (target.NodeAlive(v)) return v;
  }
  if (current >= 0 && target.NodeAlive(current)) return current;
  return -1;
}

std::vector<int> GroupRegions(const Topology& t, const std::vector<ReconfigSite>& sites,
                              int region_distance) {
  const size_t n = sites.size();
  std::vector<std::vector<uint8_t>> nodes;
  for (const ReconfigSite& s : sites) nodes.push_back(NodesWithin(t, s.ends, region_distance));
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = i;
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (find(i) != find(j) && Touch(t, nodes[i], nodes[j])) parent[find(j)] = find(i);
    }
  }
  std::vector<int> group(n, -1), index_of_root(n, -1);
  int next = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t r = find(i);
    if (index_of_root[r] < 0) index_of_root[r] = next++;
    group[i] = index_of_root[r];
  }
  return group;
}

namespace {

// The competition of the root candidates' waves (steps 3-4 of the header), as a discrete
// event simulation over cycles: requests (a fault list reaching a root) and arrivals (a
// wave reaching a node). Ties in cycle are taken in push order.
class EpisodeSim {
 public:
  EpisodeSim(Topology* scratch, const FaultState& base, const std::vector<ReconfigSite>& sites,
             const ReconfigConfig& config, const std::vector<int>& priority, int current_root,
             ReconfigPlan* plan)
      : scratch_(scratch),
        base_(base),
        sites_(sites),
        c_(config),
        priority_(priority),
        current_root_(current_root),
        plan_(plan) {
    const size_t nodes = static_cast<size_t>(scratch->NumNodes());
    holder_.assign(nodes, -1);
    last_wave_.assign(nodes, -1);
    known_.resize(nodes);
    candidate_.assign(nodes, 0);
  }

  // A nomination's request (`nom` >= 0) or a fault list sent to `root` (`nom` -1).
  void Request(int64_t t, int root, std::vector<int> sites, int nom) {
    Push({t, 0, false, root, nom, std::move(sites)});
  }
  void Run() {
    while (!queue_.empty()) {
      Event e = queue_.top();
      queue_.pop();
      if (e.arrive) {
        OnArrive(e.t, e.a, e.b);
      } else {
        OnRequest(e.t, e.a, e.sites, e.b);
      }
    }
  }
  const std::vector<uint8_t>& candidates() const { return candidate_; }
  // The last wave of the highest-priority root that started one (-1: none).
  int FinalWave() const {
    int best = -1;
    for (size_t v = 0; v < last_wave_.size(); ++v) {
      if (last_wave_[v] >= 0 &&
          (best < 0 || RankAt(static_cast<int>(v), INT64_MAX) < RankAt(best, INT64_MAX))) {
        best = static_cast<int>(v);
      }
    }
    return best < 0 ? -1 : last_wave_[best];
  }

 private:
  struct Event {
    int64_t t = 0, seq = 0;
    bool arrive = false;
    int a = -1, b = -1;  // request: root, nomination; arrival: wave, node
    std::vector<int> sites;
  };
  struct Later {
    bool operator()(const Event& x, const Event& y) const {
      return x.t != y.t ? x.t > y.t : x.seq > y.seq;
    }
  };
  void Push(Event e) {
    e.seq = seq_++;
    queue_.push(std::move(e));
  }
  // Lower is higher priority: position in reconfig.root_priority, then node number.
  int64_t Rank(int node) const {
    for (size_t i = 0; i < priority_.size(); ++i) {
      if (priority_[i] == node) return static_cast<int64_t>(i);
    }
    return static_cast<int64_t>(priority_.size()) + node;
  }
  // Rank at cycle t: a root that has failed meanwhile ranks below every live one (its
  // neighbours detect the failure like any other).
  int64_t RankAt(int node, int64_t t) const { return DeadAt(node, t) ? INT64_MAX : Rank(node); }
  // Whether `node` is faulty at cycle t (the sites up to t applied).
  bool DeadAt(int node, int64_t t) const {
    bool dead = base_.NodeFaulty(node);
    for (const ReconfigSite& s : sites_) {
      if (s.event.cycle > t || s.event.node != node || s.event.other >= 0) continue;
      dead = s.event.kind == FaultEventSpec::Kind::kFailNode;
    }
    return dead;
  }
  void OnRequest(int64_t t, int c, const std::vector<int>& sites, int nom);
  void OnArrive(int64_t t, int wave, int v);
  void StartWave(int64_t t, int root, const std::vector<int>& sites);

  Topology* scratch_;
  const FaultState& base_;
  const std::vector<ReconfigSite>& sites_;
  const ReconfigConfig& c_;
  const std::vector<int>& priority_;
  int current_root_;
  ReconfigPlan* plan_;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  int64_t seq_ = 0;
  std::vector<int> holder_;              // per node: the wave it took last (-1: none)
  std::vector<int> last_wave_;           // per node as a root: its latest wave
  std::vector<std::vector<int>> known_;  // per node as a root: the sites it knows
  std::vector<uint8_t> candidate_;       // per node: a nomination's request reached it
  std::vector<std::vector<std::vector<int>>> children_;  // per wave: its tree
};

void EpisodeSim::OnRequest(int64_t t, int c, const std::vector<int>& sites, int nom) {
  if (DeadAt(c, t)) {  // the root failed meanwhile: the sender picks a root again
    const FaultState now = EpisodeState(base_, sites_, SitesUpTo(sites_, t));
    now.ApplyTo(scratch_);
    const std::vector<int> none;
    int again = ChooseRoot(*scratch_, c_, priority_, current_root_,
                           nom >= 0 ? sites_[plan_->nominations[nom].sites[0]].ends : none);
    if (again < 0) again = LowestHealthy(*scratch_);
    Request(t + c_.detect_cycles, again, sites, nom);  // noticed like a fault
    return;
  }
  if (nom >= 0) candidate_[c] = 1;
  const int h = holder_[c];
  if (h >= 0 && plan_->waves[h].root != c && RankAt(plan_->waves[h].root, t) < Rank(c)) {
    const ReconfigWave& w = plan_->waves[h];  // superseded: pass the list on to the winner
    Request(t + c_.hop_cycles * w.level[c], w.root, sites, -1);
    return;
  }
  std::vector<int> merged = Union(known_[c], sites);
  if (h >= 0 && plan_->waves[h].root != c) merged = Union(merged, plan_->waves[h].sites);
  if (last_wave_[c] >= 0 && merged == known_[c]) return;  // nothing new
  known_[c] = merged;
  StartWave(t, c, merged);
}

void EpisodeSim::StartWave(int64_t t, int root, const std::vector<int>& sites) {
  ReconfigWave w;
  w.root = root;
  w.version = last_wave_[root] >= 0 ? plan_->waves[last_wave_[root]].version + 1 : 1;
  w.start = t;
  w.sites = sites;
  EpisodeState(base_, sites_, sites).ApplyTo(scratch_);
  Tree tree = Bfs(*scratch_, root);
  w.level = std::move(tree.level);
  w.arrive.assign(w.level.size(), -1);
  w.adopted.assign(w.level.size(), 0);
  const int index = static_cast<int>(plan_->waves.size());
  plan_->waves.push_back(std::move(w));
  children_.push_back(std::move(tree.children));
  last_wave_[root] = index;
  Push({t, 0, true, index, root, {}});
}

void EpisodeSim::OnArrive(int64_t t, int wave, int v) {
  if (DeadAt(v, t)) return;  // a node that failed meanwhile takes nothing
  ReconfigWave& w = plan_->waves[wave];
  if (w.arrive[v] < 0) w.arrive[v] = t;
  const int h = holder_[v];
  const ReconfigWave* held = h >= 0 ? &plan_->waves[h] : nullptr;
  const bool better = held == nullptr || RankAt(w.root, t) < RankAt(held->root, t) ||
                      (held->root == w.root && w.version > held->version);
  if (!better) {  // stopped here; a loser's fault list goes to the higher-priority root
    if (held->root != w.root && !DeadAt(held->root, t))
      Request(t + c_.hop_cycles * held->level[v], held->root, w.sites, -1);
    return;
  }
  w.adopted[v] = 1;
  w.arrive[v] = t;
  holder_[v] = wave;
  if (held != nullptr && held->root != w.root) {
    Request(t + c_.hop_cycles * w.level[v], w.root, held->sites, -1);
  }
  for (int child : children_[wave][v]) {
    Push({t + c_.compute_cycles + c_.hop_cycles, 0, true, wave, child, {}});
  }
}

// Steps 1-2: the nominations of `sites` (per cycle and region).
void Nominate(Topology* scratch, const FaultState& base, const std::vector<ReconfigSite>& sites,
              const ReconfigConfig& c, const std::vector<int>& priority, int current_root,
              int region_distance, ReconfigPlan* plan) {
  for (size_t first = 0; first < sites.size();) {
    const int64_t cycle = sites[first].event.cycle;
    size_t last = first;
    while (last < sites.size() && sites[last].event.cycle == cycle) ++last;
    EpisodeState(base, sites, SitesUpTo(sites, cycle)).ApplyTo(scratch);
    const std::vector<ReconfigSite> now(sites.begin() + static_cast<ptrdiff_t>(first),
                                        sites.begin() + static_cast<ptrdiff_t>(last));
    const std::vector<int> group = GroupRegions(*scratch, now, region_distance);
    const int groups = group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
    for (int g = 0; g < groups; ++g) {
      ReconfigNomination nom;
      nom.cycle = cycle;
      std::vector<int> ends;
      for (size_t i = 0; i < now.size(); ++i) {
        if (group[i] != g) continue;
        nom.sites.push_back(static_cast<int>(first + i));
        ends.insert(ends.end(), now[i].ends.begin(), now[i].ends.end());
      }
      nom.root = ChooseRoot(*scratch, c, priority, current_root, ends);
      if (nom.root < 0) nom.root = LowestHealthy(*scratch);
      nom.detect = cycle + c.detect_cycles;
      nom.agree = nom.detect + c.hop_cycles * 2 * region_distance;
      const int nominator = LowestAlive(*scratch, ends);
      const int to_root = nominator >= 0 ? Bfs(*scratch, nominator).level[nom.root] : 0;
      nom.request = nom.agree + c.hop_cycles * std::max(0, to_root);
      plan->nominations.push_back(std::move(nom));
    }
    first = last;
  }
}

// Step 5 and the actions, once the competition is over.
void Conclude(const ReconfigConfig& c, const EpisodeSim& sim, ReconfigPlan* plan) {
  const size_t n = plan->recv.size();
  plan->final_wave = sim.FinalWave();
  const ReconfigWave& fin = plan->waves[plan->final_wave];
  plan->root = fin.root;
  for (size_t v = 0; v < n; ++v) plan->cancelled += sim.candidates()[v] && fin.root != int(v);
  plan->done = fin.start + c.compute_cycles;
  for (size_t v = 0; v < n; ++v) {
    if (fin.level[v] < 0 || !fin.adopted[v]) continue;
    plan->update[v] = fin.arrive[v] + c.compute_cycles;
    plan->done = std::max(plan->done, plan->update[v] + fin.level[v] * c.hop_cycles);
  }
  plan->end = plan->done;
  for (size_t v = 0; v < n; ++v) {
    if (plan->update[v] < 0) continue;
    plan->resume[v] = plan->done + fin.level[v] * c.hop_cycles;
    plan->end = std::max(plan->end, plan->resume[v]);
  }
  using Kind = ReconfigAction::Kind;
  for (const ReconfigNomination& nom : plan->nominations) {
    plan->actions.push_back({nom.detect, Kind::kDiscard, -1, -1});
  }
  for (size_t w = 0; w < plan->waves.size(); ++w) {
    const ReconfigWave& wave = plan->waves[w];
    plan->actions.push_back({wave.start, Kind::kPrepare, static_cast<int>(w), -1});
    for (size_t v = 0; v < n; ++v) {
      if (!wave.adopted[v]) continue;
      const int64_t at = wave.arrive[v];
      plan->actions.push_back({at + c.compute_cycles, Kind::kCommit, static_cast<int>(w), int(v)});
      if (plan->recv[v] < 0 || at < plan->recv[v]) plan->recv[v] = at;
    }
  }
  plan->actions.push_back({plan->done, Kind::kFinish, plan->final_wave, -1});
  plan->actions.push_back({plan->end, Kind::kEnd, -1, -1});
  std::stable_sort(plan->actions.begin(), plan->actions.end(),
                   [](const ReconfigAction& a, const ReconfigAction& b) {
                     return a.cycle != b.cycle ? a.cycle < b.cycle : a.kind < b.kind;
                   });
}

}  // namespace

ReconfigPlan PlanEpisode(Topology* scratch, const FaultState& base,
                         const std::vector<ReconfigSite>& sites, const ReconfigConfig& c,
                         const std::vector<int>& priority, int current_root, int region_distance) {
  ReconfigPlan plan;
  const size_t n = static_cast<size_t>(scratch->NumNodes());
  plan.start = sites.empty() ? 0 : sites.front().event.cycle;
  plan.recv.assign(n, -1);
  plan.update.assign(n, -1);
  plan.resume.assign(n, -1);
  Nominate(scratch, base, sites, c, priority, current_root, region_distance, &plan);
  std::vector<int> all(sites.size());
  for (size_t i = 0; i < sites.size(); ++i) all[i] = static_cast<int>(i);
  EpisodeState(base, sites, all).ApplyTo(scratch);
  const std::vector<int> group = GroupRegions(*scratch, sites, region_distance);
  plan.regions = group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  for (ReconfigNomination& nom : plan.nominations) nom.region = group[nom.sites[0]];
  EpisodeSim sim(scratch, base, sites, c, priority, current_root, &plan);
  for (size_t i = 0; i < plan.nominations.size(); ++i) {
    const ReconfigNomination& nom = plan.nominations[i];
    sim.Request(nom.request, nom.root, nom.sites, static_cast<int>(i));
  }
  sim.Run();
  if (plan.waves.empty()) return plan;
  Conclude(c, sim, &plan);
  return plan;
}

}  // namespace ukai::sim
