// Faults: which nodes and channels of a topology are faulty, resolved from the `faults.*`
// config (topology/fault_spec.h) — explicit lists, random draws with the run seed, and
// timed failures/repairs — plus the connectivity check of the healthy network.
//
// Topology independent: nodes are resolved through Topology::ParseNode() (a k-ary n-cube
// takes coordinates, another topology may take names such as "3G2"), channels are the
// ports joining two neighbouring nodes.
//
// Model:
// - A faulty node has every channel of its own faulty too (the paper's rule); it neither
//   sends nor receives messages.
// - A channel fault names a physical channel (two neighbouring nodes) and removes BOTH
//   directions of it. Where two nodes are joined by several channels (a torus with k = 2),
//   all of them fail.
// - A channel is usable when neither end node is faulty and it is not itself faulty; a
//   repaired node's channels come back unless they were failed on their own.
// - The healthy network (non-faulty nodes over usable channels) must stay connected at
//   every moment (initially and after every timed event): otherwise PlanFaults() fails
//   naming an unreachable pair. Random faults are redrawn (up to kMaxDraws times) until the
//   healthy network is connected, avoiding explicitly listed faults.
//
// Thread safety: plain values and free functions.
#ifndef UKAI_SIM_TOPOLOGY_FAULTS_H_
#define UKAI_SIM_TOPOLOGY_FAULTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/topology/fault_spec.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// The fault state of every node and channel of one topology.
class FaultState {
 public:
  explicit FaultState(const Topology& topology);

  void SetNodeFaulty(int node, bool faulty) { node_faulty_[node] = faulty ? 1 : 0; }
  // Marks every channel joining `a` and `b` (both directions) faulty or repaired.
  void SetChannelFaulty(int a, int b, bool faulty);
  bool NodeFaulty(int node) const { return node_faulty_[node] != 0; }
  // Faulty as a channel (its own fault), whatever its end nodes.
  bool ChannelFaulty(int node, int port) const { return chan_faulty_[Index(node, port)] != 0; }
  // Connected, not faulty, and neither end node faulty.
  bool ChannelUsable(int node, int port) const;
  // The topology's node and channel liveness set from this state.
  void ApplyTo(Topology* topology) const;

  std::vector<int> FaultyNodes() const;
  // Faulty physical channels as (node, port) with the lower-numbered end first.
  std::vector<std::pair<int, int>> FaultyChannels() const;
  bool any() const;
  const Topology& topology() const { return *topology_; }

 private:
  size_t Index(int node, int port) const {
    return static_cast<size_t>(node) * topology_->NumNetworkPorts() + port;
  }
  const Topology* topology_;
  std::vector<uint8_t> node_faulty_;
  std::vector<uint8_t> chan_faulty_;  // node * ports + port; both directions set together
};

// A timed fault or repair with its node(s) resolved.
struct FaultEvent {
  int64_t cycle = 0;
  FaultEventSpec::Kind kind = FaultEventSpec::Kind::kFailNode;
  int node = -1;      // *Node: the node; *Channel: one end
  int other = -1;     // *Channel: the other end
  std::string where;  // config position, for messages
};

// Applies one event to `state`.
void ApplyFaultEvent(const FaultEvent& event, FaultState* state);

struct FaultPlan {
  FaultState initial;              // faults from cycle 0 (listed + random)
  std::vector<FaultEvent> events;  // timed events, in cycle order (stable for equal cycles)
};

// Attempts at drawing random faults before giving up.
inline constexpr int kMaxFaultDraws = 1000;

// Resolves `config` on `topology`; random faults use a stream of `seed` of their own.
// Errors (kInvalidArgument) start with the faults.* key they concern and name the node or
// channel as written and its config position, or the unreachable pair.
Result<FaultPlan> PlanFaults(const Topology& topology, const FaultConfig& config, uint64_t seed);

// OK when the healthy network is connected (and has a node), else kInvalidArgument naming
// one healthy node that the first healthy node cannot reach (`what` starts the message).
Status CheckConnected(const FaultState& state, const std::string& what);

// The ports of `a` whose channel leads to `b` (several on a torus with k = 2).
std::vector<int> PortsBetween(const Topology& topology, int a, int b);

// 1 per healthy node within `distance` - 1 hops (over live channels between healthy nodes)
// of a healthy node of `from`: the fault-region rule (routing.fault_region_distance).
std::vector<uint8_t> NodesWithin(const Topology& topology, const std::vector<int>& from,
                                 int distance);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_FAULTS_H_
