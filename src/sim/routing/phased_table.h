// PhasedPathTable: shortest "two-phase" paths, the common core of up*/down* (up then down)
// and Negative-First (negative then positive) routing round faults. Every usable
// channel (node, port) belongs to phase 0 or phase 1; a legal path takes zero or more
// phase-0 channels followed by zero or more phase-1 channels. For every (node,
// destination) and phase ("phase 0 still allowed" / "phase 1 only") the table holds the
// length of a shortest legal path and the bitmap of output ports (bit p = network port p)
// that start one. A message that follows the table in its phase (kept in its routing
// state: set when it takes a phase-1 channel) always arrives: the rest of a shortest legal
// path is a shortest legal path of the next node. When the phase order of the channels is
// acyclic (true for up*/down* and Negative-First), so is the channel dependency graph.
//
// Memory: 2 x N x N (distance, mask); callers limit N (kMaxNodes).
// Thread safety: const methods only read; Build() must not run while routing runs.
#ifndef UKAI_SIM_ROUTING_PHASED_TABLE_H_
#define UKAI_SIM_ROUTING_PHASED_TABLE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/topology/topology.h"

namespace ukai::sim {

class PhasedPathTable {
 public:
  static constexpr int kMaxNodes = 2048;
  static constexpr int kUnreachable = 1 << 30;

  // `phase(node, port)`: 0 or 1 for a usable channel, -1 for one that may not be used
  // (called only for live channels between healthy nodes).
  void Build(const Topology& topology, const std::function<int(int node, int port)>& phase);

  uint32_t Ports(int node, int dst, bool second_phase) const {
    return ports_[Index(node, dst, second_phase)];
  }
  int Distance(int node, int dst, bool second_phase) const {
    return dist_[Index(node, dst, second_phase)];
  }
  // Phase of the channel leaving `node` on `port` (-1: unusable).
  int ChannelPhase(int node, int port) const {
    return phase_[static_cast<size_t>(node) * ports_per_node_ + port];
  }

 private:
  size_t Index(int node, int dst, bool second) const {
    return (static_cast<size_t>(node) * nodes_ + dst) * 2 + (second ? 1 : 0);
  }
  void BuildDestination(int dst, std::vector<int>* queue);

  int nodes_ = 0, ports_per_node_ = 0;
  std::vector<int32_t> neighbor_;  // node * P + port -> neighbour over a usable channel, or -1
  std::vector<int8_t> phase_;      // node * P + port -> 0, 1 or -1
  std::vector<int> dist_;
  std::vector<uint32_t> ports_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_PHASED_TABLE_H_
