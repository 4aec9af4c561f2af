// The deadlock-freedom checker behind `ukai sim check`: builds the channel dependency
// graph (CDG) of a routing algorithm's escape / recovery sub-function on the configured
// topology with its cycle-0 faults, and either proves it acyclic and connected or names a
// cycle, a dead end or a faulty channel it uses.
//
// Sub-functions (an explicit table in cdg_check.cc, by routing.algorithm):
//   dor        dimension order with the dateline classes on every VC of its class
//   duato      the escape VCs: dimension order with dateline (VC 0/1 on a torus, 0 on a mesh)
//   detour-nf  the escape VCs where the dimension-order path is fault-free, else the
//              Negative-First VC (and the NF VC onwards)
//   updown     up*/down* on every VC
//   detour-ud  the UD-VC with the up*/down* table (recovery may start at any node)
// A message may enter the sub-function at any healthy node for any healthy destination
// (Duato's escape and Detour-UD's recovery can start anywhere); its state after a channel
// is a function of that channel and the destination (dateline class, up*/down* or NF
// phase), so the states are the virtual channels per destination.
//
// Proof: every state reachable from an entry either reaches the destination or has a next
// channel (no dead end), and the union over destinations of the direct dependencies
// (channel -> next channel) is acyclic; then every path ends at its destination
// (connected) and the sub-function is deadlock-free. For Duato-type routing the indirect
// dependencies through the adaptive VCs are not added: with minimal adaptive routing and a
// dimension-order escape they close no cycle (Duato's theorem), which this check does not
// re-prove.
//
// Thread safety: free functions.
#ifndef UKAI_SIM_ROUTING_CDG_CHECK_H_
#define UKAI_SIM_ROUTING_CDG_CHECK_H_

#include <memory>
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

// A routing sub-function to check.
class EscapeFunction {
 public:
  virtual ~EscapeFunction() = default;
  // "the UD-VC (VC 3) with up*/down*", for the report.
  virtual std::string Describe() const = 0;
  // The next channels of a message at `node` for `dst` (!= node) that arrived by (in_port,
  // in_vc); in_port == the PE port: it enters the sub-function here.
  virtual void Next(int node, int in_port, int in_vc, int dst,
                    std::vector<EscapeHop>* out) const = 0;
};

struct CdgReport {
  bool ok = false;
  int64_t channels = 0;      // virtual channels used by the sub-function
  int64_t dependencies = 0;  // distinct direct dependencies
  std::string text;          // a one-paragraph verdict (the proof summary or the problem)
};

// Checks `escape` with `vcs` VCs per port on `topology` (faults applied).
CdgReport CheckEscape(const Topology& topology, int vcs, const EscapeFunction& escape);

// Builds the topology and faults of `config`, the algorithm's sub-function, and checks it.
// kInvalidArgument when the config cannot be built or the algorithm has no checker.
Result<CdgReport> CheckDeadlockFreedom(const SimConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_CDG_CHECK_H_
