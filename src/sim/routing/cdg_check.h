// The deadlock-freedom checker behind `ukai sim check`: builds the channel dependency
// graph (CDG) of a routing algorithm's escape / recovery sub-function on the configured
// topology with its cycle-0 faults, and either proves it acyclic and connected or names a
// cycle, a dead end or a faulty channel it uses.
//
// Sub-functions (an explicit table in cdg_check.cc, by routing.algorithm; escape_functions.h):
//   dor        dimension order with the dateline classes on every VC of its class
//   duato      the escape VCs (dimension order with dateline: VC 0/1 on a torus, 0 on a mesh)
//              inside the routing's own adaptive VCs: the EXTENDED CDG
//   detour-nf  the escape VCs (dimension order where its path is fault-free) and the
//              Negative-First VC, inside the adaptive VCs: the EXTENDED CDG
//   updown     up*/down* on every VC
//   detour-ud  the UD-VC with the up*/down* table (recovery may start at any node); a
//              message on it never requests an FA-VC (checked), so its extended CDG is its
//              direct CDG
//   dor-detour the via-node detours' VC layers (routing/detour_check.h: every dimension-order
//              leg on its layer and every new leg one layer up; its own graph, not an
//              escape function, because a message's next hop depends on its via list)
// duato, detour-nf and detour-ud are read from the registry's routing object itself
// (RoutedEscape: RoutingFunction::Route() split into escape and adaptive VCs), so the check
// follows the code and its options.
//
// Per healthy destination d the checker explores every state a message for d can reach
// when it enters at any healthy node: escape channels (a virtual channel of the
// sub-function) and adaptive states (a node reached on an adaptive VC through an input
// port; the adaptive VCs are interchangeable). The routing state a message carries
// (dateline class, up*/down* or Negative-First phase) is a function of its current channel
// and destination, so these states are exhaustive. Dependencies, unioned over d:
//   direct    escape c1 -> escape c2 requested at the head of c1;
//   indirect  escape c1 -> one or more adaptive channels -> escape c2 requested after them
//             (Duato's extended CDG: computed per destination as the set of escape channels
//             reachable from each adaptive state, one bitset each);
//   queue     only when the adaptive VCs are not atomic under wormhole (routing.duato_atomic
//             = escape | none): a message from c1 may queue in an adaptive buffer behind a
//             message for any destination, so c1 depends on every escape channel such a
//             message may request later. Duato's theorem assumes a buffer never holds two
//             messages; these edges model its violation.
// No cross dependencies (Duato's later formulation: an escape channel used outside the
// sub-function for some destinations) exist for RoutedEscape: its sub-function is Route()
// restricted to the escape VCs, i.e. every offer of an escape VC belongs to it.
// Proof: every reachable escape state and every adaptive state (and every entry) has a
// next escape channel (no dead end: the escape sub-function is connected), and the graph is
// acyclic; then every escape path ends at its destination and, by Duato's theorem (or for
// dor / updown / the UD-VC directly), the routing is deadlock-free.
//
// Thread safety: free functions.
#ifndef UKAI_SIM_ROUTING_CDG_CHECK_H_
#define UKAI_SIM_ROUTING_CDG_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// One next virtual channel: output VC `vc` of network port `port`.
struct EscapeHop {
  int port, vc;
};

// A routing sub-function to check, with the adaptive routing round it (if any).
class EscapeFunction {
 public:
  virtual ~EscapeFunction() = default;
  // "the UD-VC (VC 3) with up*/down*", for the report.
  virtual std::string Describe() const = 0;
  // The next escape channels of a message at `node` for `dst` (!= node) that arrived by
  // (in_port, in_vc); in_port == the PE port: it enters here; in_vc == AdaptiveVc(): it
  // arrived on an adaptive VC and enters the escape sub-function here.
  virtual void Next(int node, int in_port, int in_vc, int dst,
                    std::vector<EscapeHop>* out) const = 0;
  // The network ports (bit p = port p) on whose adaptive VCs the same message may go on
  // (faulty channels are dropped by the checker, as by the router). 0 by default.
  virtual uint32_t AdaptivePorts(int /*node*/, int /*in_port*/, int /*in_vc*/, int /*dst*/) const {
    return 0;
  }
  // The in_vc a message that arrived on an adaptive VC passes (-1: no adaptive VCs).
  virtual int AdaptiveVc() const { return -1; }
  // Deadlock recovery (Detour-UD): a message on an escape channel must never be offered an
  // adaptive one; the checker reports it when it is.
  virtual bool Recovery() const { return false; }
  // Whether an adaptive VC takes a new message only once its buffer is empty (wormhole):
  // when false the checker adds the queue dependencies (see the header comment).
  virtual bool AtomicAdaptiveVcs() const { return true; }
  // One line for the report on why the graph built is the right one (may be "").
  virtual std::string Rationale() const { return ""; }
  // A message may carry a random choice fixed for its whole path (Valiant's intermediate):
  // the checker explores every destination once per variant (SelectVariant() before the
  // Next() calls of that exploration) and unions the dependencies. 1 by default.
  virtual int Variants() const { return 1; }
  virtual void SelectVariant(int /*variant*/) const {}
};

struct CdgOptions {
  bool indirect = true;  // false: direct dependencies only (what the checker built before)
};

struct CdgReport {
  bool ok = false;
  int64_t channels = 0;      // virtual channels used by the sub-function
  int64_t dependencies = 0;  // distinct dependencies (direct + indirect + queue)
  int64_t direct = 0;        // distinct direct dependencies
  int64_t indirect = 0;      // distinct indirect dependencies that are not direct
  int64_t queue = 0;         // distinct queue dependencies that are neither
  std::string text;          // the verdict (the proof summary or the problem)
};

// Checks `escape` with `vcs` VCs per port on `topology` (faults applied).
CdgReport CheckEscape(const Topology& topology, int vcs, const EscapeFunction& escape,
                      const CdgOptions& options = {});

// A dependency cycle of the graph `adj` (successors per vertex), shortened to the shortest
// cycle through one of its vertices for a readable report; empty when `adj` is acyclic.
std::vector<int64_t> FindShortCycle(const std::vector<std::vector<int64_t>>& adj);

// Builds the topology and faults of `config`, the algorithm's sub-function, and checks it.
// kInvalidArgument when the config cannot be built or the algorithm has no checker.
Result<CdgReport> CheckDeadlockFreedom(const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_CDG_CHECK_H_
