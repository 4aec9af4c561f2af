// ShortestPathTable: for every (node, destination) the output ports (bit p = network port
// p) on shortest paths in the LIVE topology (faulty nodes and channels removed) — the
// Detour-UD paper's "torus table" (Fig. 3): every minimal candidate, so routing inside a
// fault region stays adaptive. Also the hop distances.
//
// Memory: N x N port masks and distances; same node limit as the up*/down* tables.
// Thread safety: const methods only read; Build() must not run while routing runs.
#ifndef UKAI_SIM_ROUTING_SHORTEST_TABLE_H_
#define UKAI_SIM_ROUTING_SHORTEST_TABLE_H_

#include <cstdint>
#include <vector>

#include "sim/topology/topology.h"

namespace ukai::sim {

class ShortestPathTable {
 public:
  static constexpr int kUnreachable = 1 << 30;

  void Build(const Topology& topology);
  uint32_t Ports(int node, int dst) const {
    return ports_[static_cast<size_t>(node) * nodes_ + dst];
  }
  int Distance(int node, int dst) const { return dist_[static_cast<size_t>(node) * nodes_ + dst]; }

 private:
  int nodes_ = 0;
  std::vector<int> dist_;
  std::vector<uint32_t> ports_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_SHORTEST_TABLE_H_
