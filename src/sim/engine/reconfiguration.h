// Reconfiguration: the Detour-UD paper's Section 3 procedure as a simulated protocol, run by
// the Network (engine/network.h) when timed faults or repairs happen with
// reconfig.mode = "protocol" (docs/simulator.md, "Reconfiguration"), including several
// fault regions synchronised through the root (Section 3.1, second part).
//
// An EPISODE gathers the timed events (sites) from the first one until the winning root's
// restart; an event at or after the restart starts a new episode. Control messages travel
// on the UD-VC, modelled as reconfig.hop_cycles per hop without contention; a table
// computation takes reconfig.compute_cycles. PlanEpisode() computes the whole timeline of an
// episode from its sites; it is causal (nothing before a site's cycle depends on it), so the
// Network re-plans on every new site and keeps what it already executed.
//   1. detection: the neighbours of a site notice it at detect = cycle + detect_cycles (the
//      configured discard happens then);
//   2. regions: a site's fault region is the set of healthy nodes within
//      routing.fault_region_distance - 1 hops of its end nodes (detour-ud's FaultRegion()
//      rule); two sites are ONE region when their region sets share a node or are joined by a
//      live channel (transitively). The sites of one cycle and one region make one
//      NOMINATION: its nodes agree (+ hop_cycles x 2 x fault_region_distance) and nominate a
//      root candidate (ChooseRoot() on their ends); the request reaches it after hop_cycles x
//      the distance from the region's lowest-numbered node;
//   3. a candidate that is not superseded starts a WAVE: it computes its tables for the fault
//      list it knows and broadcasts the reconfiguration message down its BFS tree (computed
//      on that fault list): node v at level L receives it at start + L x (compute + hop);
//   4. a node receiving a wave keeps the higher-priority root's (Rank(): earlier in
//      reconfig.root_priority, then lower node number; for one root the newer version): it
//      pauses its PE, computes and switches its tables at receipt + compute and forwards the
//      wave to its tree children. A lower-priority wave stops there (the loser's partial
//      broadcast is superseded) and its fault list is sent (hop x the node's level in the
//      winner's tree) to the higher-priority root, which starts a new version of its wave
//      when that list holds a site it did not know. A candidate whose node took a
//      higher-priority wave forwards the requests it gets to that root instead: it is a
//      CANCELLED root candidate;
//   5. the winner (the highest-priority candidate) ends with a wave carrying every site;
//      completion is reduced up its tree: done = max_v(update(v) + L(v) x hop); the root then
//      broadcasts the single restart: node v resumes at done + L(v) x hop. Repairs take
//      effect and the tables become current everywhere at done.
// Simplification: an intermediate wave's tree and timing ignore the faults its fault list
// does not hold (it is superseded by the winner's last wave, whose list holds every site).
//
// Thread safety: plain values and free functions.
#ifndef UKAI_SIM_ENGINE_RECONFIGURATION_H_
#define UKAI_SIM_ENGINE_RECONFIGURATION_H_

#include <cstdint>
#include <vector>

#include "sim/topology/fault_spec.h"
#include "sim/topology/faults.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// One timed fault or repair of an episode.
struct ReconfigSite {
  FaultEvent event;       // event.cycle: when it happened
  std::vector<int> ends;  // end nodes of its changed channels (a node: its neighbours)
};

struct ReconfigNomination {
  int64_t cycle = 0;                           // its sites' cycle
  int region = 0;                              // fault region index in the episode
  std::vector<int> sites;                      // indices into the episode's sites
  int root = -1;                               // the root candidate it nominates
  int64_t detect = 0, agree = 0, request = 0;  // cycles (request: reaches the candidate)
};

struct ReconfigWave {
  int root = -1, version = 0;
  int64_t start = 0;             // the root starts computing its tables
  std::vector<int> sites;        // the fault list it carries (sorted site indices)
  std::vector<int> level;        // per node: level in its tree (-1: not in it)
  std::vector<int64_t> arrive;   // per node: first receipt (-1: never received)
  std::vector<uint8_t> adopted;  // per node: 1 when the node took it (else it stopped there)
};

struct ReconfigAction {
  // In this order within a cycle.
  enum class Kind { kDiscard, kPrepare, kCommit, kFinish, kEnd };
  int64_t cycle = 0;
  Kind kind = Kind::kDiscard;
  int wave = -1, node = -1;  // kPrepare: wave; kCommit: wave and node
};

struct ReconfigPlan {
  int64_t start = 0, done = 0, end = 0;  // first site; the root's restart; the last resume
  int root = -1;                         // the winning root
  int final_wave = -1;                   // its last wave (every site)
  int regions = 0;                       // fault regions of the episode
  int cancelled = 0;                     // root candidates other than the winner
  std::vector<ReconfigNomination> nominations;
  std::vector<ReconfigWave> waves;  // in the order they start
  // Per node (-1 for faulty / unreachable nodes): first reconfiguration message received
  // (the PE pauses), switch to the final tables, resume (the restart reached it).
  std::vector<int64_t> recv, update, resume;
  std::vector<ReconfigAction> actions;  // what the Network executes, in cycle order
};

// Plans the episode of `sites` (in cycle order) on top of `base`, the fault state before its
// first site. `scratch` is the Network's topology: its liveness is set to the states the
// steps need and left undefined (the caller restores it). `priority`: reconfig.root_priority
// resolved; `current_root`: the routing's root (-1: none).
ReconfigPlan PlanEpisode(Topology* scratch, const FaultState& base,
                         const std::vector<ReconfigSite>& sites, const ReconfigConfig& config,
                         const std::vector<int>& priority, int current_root, int region_distance);

// `base` with the sites `which` (indices) applied in site order: a wave's fault list.
FaultState EpisodeState(const FaultState& base, const std::vector<ReconfigSite>& sites,
                        std::vector<int> which);

// The root a nomination nominates: static = the first healthy node of `priority`, else the
// current root while healthy (no change needed on a repair); fault-region = the region's
// lowest-numbered healthy node (the "upper-left corner" of Fig. 5 with dimension 0
// fastest). -1 when no rule applies (the planner then takes the lowest healthy node).
int ChooseRoot(const Topology& target, const ReconfigConfig& config,
               const std::vector<int>& priority, int current, const std::vector<int>& region);

// The fault region groups of `sites` on `topology` (the rule of step 2): region index per
// site, numbered in order of first appearance.
std::vector<int> GroupRegions(const Topology& topology, const std::vector<ReconfigSite>& sites,
                              int region_distance);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_RECONFIGURATION_H_
