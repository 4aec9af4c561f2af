// Traffic patterns: which destination a new message of a source node goes to, behind one
// interface and an explicit registry (like routing/registry.h).
//
// Patterns (N nodes: the terminals, NumTerminals(); on a k-ary n-cube, coordinates
// c[0..n-1], dimension 0 fastest):
//   uniform    uniformly random destination among the N-1 other nodes (never the source)
//   transpose  c -> reversed coordinates (c[n-1], ..., c[0]); 2D: (x,y) -> (y,x). Needs
//              n >= 2 and the same k in every dimension. Nodes that are their own
//              transpose (the diagonal in 2D) are idle: they send nothing.
//   bitcomp    bitwise complement of the node number (needs N a power of two)
//   bitrev     node number with its log2(N) bits reversed (power of two; palindromes idle)
//   shuffle    node number rotated left by one bit (power of two; 0 and N-1 idle)
//   tornado    every coordinate c -> (c + ceil(k/2) - 1) mod k
//   neighbor   every coordinate c -> (c + 1) mod k
//   hotspot    with probability traffic.hotspot_fraction a uniformly chosen node of
//              traffic.hotspot_nodes (other than the source), else uniform
// Idle nodes (a permutation mapping a node to itself) never create messages; a pattern that
// leaves every node idle is a config error.
//
// Thread safety: Destination() is const; the Rng is the caller's (one stream per node).
#ifndef UKAI_SIM_TRAFFIC_PATTERN_H_
#define UKAI_SIM_TRAFFIC_PATTERN_H_

#include <memory>
#include <span>
#include <string_view>

#include "core/rng.h"
#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class TrafficPattern {
 public:
  virtual ~TrafficPattern() = default;
  // Destination of a new message from `src` (never src); -1 when `src` is idle.
  virtual int Destination(int src, Rng& rng) const = 0;
  // True when `src` never sends under this pattern.
  virtual bool Idle(int src) const = 0;
};

struct PatternEntry {
  std::string_view name;
  std::string_view doc;
  // Builds the pattern or returns kInvalidArgument naming the config key.
  Result<std::unique_ptr<TrafficPattern>> (*create)(const Topology& topology,
                                                    const TrafficConfig& config);
};

std::span<const PatternEntry> TrafficPatterns();

// Looks up config.pattern (kNotFound lists the known names) and builds it; also rejects a
// pattern under which every node is idle.
Result<std::unique_ptr<TrafficPattern>> MakePattern(const Topology& topology,
                                                    const TrafficConfig& config);

}  // namespace ukai::sim

#endif  // UKAI_SIM_TRAFFIC_PATTERN_H_
