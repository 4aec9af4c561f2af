// FatTree: the k-ary n-tree BookSim2 builds ("fattree", k and n): n levels of k^(n-1)
// routers, k^n terminals on the leaves. Level 0 is the top (k down ports), levels 1..n-1
// have k down and k up ports; every leaf router (level n-1) has k terminals.
//
// Numbering (BookSim2's): router = level * k^(n-1) + pos, pos written with n-1 base-k
// digits w[0..n-2] (w[0] most significant); terminal t has n digits, t = pos * k + j on
// leaf pos. Down port j (0..k-1) of router (l, w) leads to router (l+1, w with w[l] = j)
// (on a leaf: to terminal pos*k + j), arriving on that router's up port k + w[l]; so up
// port k + i of (l, w) leads to (l-1, w with w[l-1] = i). Router (l, w) is an ancestor of
// the terminals whose first l digits are w[0..l-1]. The top level's up ports lead nowhere.
//
// Thread safety: immutable after construction.
#ifndef UKAI_SIM_TOPOLOGY_FAT_TREE_H_
#define UKAI_SIM_TOPOLOGY_FAT_TREE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/switch_topology.h"

namespace ukai::sim {

class FatTree final : public SwitchTopology {
 public:
  // Errors name network.k / network.n.
  static Result<std::unique_ptr<FatTree>> Create(const NetworkConfig& config);
  static void Size(const NetworkConfig& config, double* nodes, int* ports);

  std::string Describe() const override;
  std::string PortName(int port) const override;

  int k() const { return k_; }
  int levels() const { return n_; }
  int Level(int router) const { return router / per_level_; }
  int Pos(int router) const { return router % per_level_; }
  // Whether router `router` is an ancestor of terminal `t` (its subtree holds t).
  bool Covers(int router, int t) const {
    const int l = Level(router);
    return t / pow_[n_ - l] == Pos(router) / pow_[n_ - 1 - l];
  }
  // The down port of `router` towards terminal t (which it covers): digit l of t.
  int DownPort(int router, int t) const { return (t / pow_[n_ - 1 - Level(router)]) % k_; }
  int UpPort(int i) const { return k_ + i; }
  bool IsUpPort(int port) const { return port >= k_; }

 private:
  FatTree(int k, int n);

  int k_, n_, per_level_;
  std::vector<int> pow_;  // k^0 .. k^n
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_FAT_TREE_H_
