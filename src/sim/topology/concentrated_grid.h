// The concentrated grids: routers on an n-dimensional grid of k[0] x ... x k[n-1] (dimension
// 0 varying fastest), network.concentration (c) terminals on every router; terminal
// t = router * c + j on router port j (0..c-1).
//   CMesh    a mesh of routers ("cmesh", BookSim2's concentrated mesh without express
//            channels): port c + 2d leads to coordinate +1 along d, c + 2d + 1 to -1.
//   FlatFly  the flattened butterfly ("flatfly", BookSim2's flatfly): along every dimension
//            the k[d] routers that differ only in it are fully connected; port
//            c + off(d) + (v < mine ? v : v - 1) leads to the router with coordinate v along
//            d, off(d) = sum of (k[e] - 1) for e < d (BookSim2's port order).
//
// Thread safety: immutable after construction.
#ifndef UKAI_SIM_TOPOLOGY_CONCENTRATED_GRID_H_
#define UKAI_SIM_TOPOLOGY_CONCENTRATED_GRID_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/switch_topology.h"

namespace ukai::sim {

class ConcentratedGrid : public SwitchTopology {
 public:
  int c() const { return c_; }
  int n() const { return static_cast<int>(k_.size()); }
  int k(int dim) const { return k_[dim]; }
  int Coord(int router, int dim) const { return (router / stride_[dim]) % k_[dim]; }
  int stride(int dim) const { return stride_[dim]; }

 protected:
  ConcentratedGrid(std::vector<int> k, int c, int ports);
  // Checks network.k, network.n, network.concentration; errors name the key.
  static Status Check(const NetworkConfig& config, int ports);
  static int Routers(const std::vector<int>& k);

  std::vector<int> k_, stride_;
  int c_;
};

class CMesh final : public ConcentratedGrid {
 public:
  static Result<std::unique_ptr<CMesh>> Create(const NetworkConfig& config);
  static void Size(const NetworkConfig& config, double* nodes, int* ports);
  std::string Describe() const override;
  std::string PortName(int port) const override;
  int RouterDistance(int a, int b) const override;
  int Port(int dim, bool plus) const { return c_ + 2 * dim + (plus ? 0 : 1); }

 private:
  using ConcentratedGrid::ConcentratedGrid;
};

class FlatFly final : public ConcentratedGrid {
 public:
  static Result<std::unique_ptr<FlatFly>> Create(const NetworkConfig& config);
  static void Size(const NetworkConfig& config, double* nodes, int* ports);
  std::string Describe() const override;
  std::string PortName(int port) const override;
  int RouterDistance(int a, int b) const override;
  // The port of a router with coordinate `mine` along `dim` leading to coordinate `to`.
  int Port(int dim, int mine, int to) const { return c_ + off_[dim] + (to < mine ? to : to - 1); }

 private:
  FlatFly(std::vector<int> k, int c, int ports);
  std::vector<int> off_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_CONCENTRATED_GRID_H_
