// PartitionPlan: how the routers and PEs of a network are split into partitions for
// parallel simulation (docs/simulator.md, "Parallel simulation"). Each partition is
// evaluated by one thread; the partitions of an MPI rank are consecutive (rank r holds
// partitions r*T .. r*T+T-1 for T threads per rank).
//
// Shapes (run.partition):
// - slab (default): contiguous blocks along the highest dimension. With at least as many
//   coordinates along dimension n-1 as partitions, partition i holds the planes
//   [i*k/P, (i+1)*k/P) of that dimension; with fewer, units of the next dimensions too
//   (a 4x4 mesh in 8 partitions: two nodes each). Topologies other than a k-ary n-cube
//   are cut into contiguous ranges of node numbers.
// - block: a block of every dimension: P = p_0 x ... x p_{n-1} (p_d <= k_d) chosen to cut
//   the fewest channels (ties: the higher dimensions split first), coordinate ranges
//   [j*k_d/p_d, (j+1)*k_d/p_d) per dimension. Needs a mesh or a torus; a count that no
//   factorisation fits (a prime above every k_d) is cut in slabs instead.
// Partition numbers follow the node order of their first node's block (the highest
// dimension slowest), so with slab the nodes of a rank are one range of node numbers.
//
// Thread safety: immutable after construction.
#ifndef UKAI_SIM_ENGINE_PARTITION_H_
#define UKAI_SIM_ENGINE_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"

namespace ukai::sim {

// A range [begin, end) of node numbers.
struct NodeRun {
  int32_t begin = 0, end = 0;
};

class PartitionPlan {
 public:
  // One partition of `nodes` nodes.
  static PartitionPlan Single(int nodes);
  // `count` partitions of the network `config` describes (network.*; `nodes` nodes).
  // count > nodes is an error naming run.threads.
  static Result<PartitionPlan> Make(const NetworkConfig& config, int nodes, int count,
                                    PartitionShape shape);

  int count() const { return static_cast<int>(runs_.size()); }
  int nodes() const { return static_cast<int>(owner_.size()); }
  int32_t owner(int node) const { return owner_[static_cast<size_t>(node)]; }
  const std::vector<int32_t>& owners() const { return owner_; }
  // The nodes of partition `part`, ascending.
  const std::vector<NodeRun>& runs(int part) const { return runs_[static_cast<size_t>(part)]; }
  int64_t NodesOf(int part) const;
  // "2 slabs along dimension 2 (8 + 8 planes)", "4 blocks (2 x 2 x 1)".
  const std::string& description() const { return description_; }

 private:
  void BuildRuns(int count);

  std::vector<int32_t> owner_;              // partition of every node
  std::vector<std::vector<NodeRun>> runs_;  // per partition
  std::string description_;
};

// How many partitions a run uses: `threads` per rank (0 = one per core of this process)
// on `ranks` MPI ranks, fewer when the network has too few nodes (each partition gets at
// least run.partition_min_nodes). Sets `*note` to a sentence when it chose fewer than
// asked. With `*replicated` true, the ranks cannot each get a partition: every rank then
// runs the whole network itself (no exchange; rank 0 writes the output).
struct PartitionChoice {
  int threads = 1;  // partitions (threads) per rank
  int ranks = 1;    // ranks that share the network (1 when replicated)
  bool replicated = false;
  std::string note;
};
PartitionChoice ChoosePartitions(const RunConfig& run, int nodes, int ranks);

// The cores this process may run on (its CPU affinity mask; at least 1).
int CoresOfThisProcess();

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_PARTITION_H_
