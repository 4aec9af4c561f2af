// KaryNCube: an n-dimensional mesh or torus with k[d] nodes along dimension d (n >= 1,
// every k[d] >= 2; the k may differ per dimension).
//
// Node numbering: node = sum_d coord[d] * stride[d], dimension 0 varying fastest
// (stride[0] = 1). Network ports: 2*d is the "+" direction of dimension d (towards
// coord+1), 2*d+1 the "-" direction. A flit sent on output port 2d arrives on the
// neighbour's input port 2d+1 and vice versa (port ^ 1). On a torus, the wrap-around
// channels connect coordinate k-1 and 0 (the dateline of dimension d lies on them). On a
// mesh, ports at the edges lead nowhere. With k[d] == 2 on a torus the + and - channels
// of a dimension both connect the same pair of nodes (two distinct channels).
//
// Thread safety: immutable after construction (liveness: see Topology).
#ifndef UKAI_SIM_TOPOLOGY_KARY_NCUBE_H_
#define UKAI_SIM_TOPOLOGY_KARY_NCUBE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// The most nodes a k-ary n-cube may have (KaryNCube::Create refuses more).
inline constexpr int64_t kKaryNCubeMaxNodes = int64_t{1} << 26;

class KaryNCube final : public Topology {
 public:
  // Validates `config` (errors name network.n / network.k).
  static Result<std::unique_ptr<KaryNCube>> Create(const NetworkConfig& config);

  int NumNodes() const override { return num_nodes_; }
  int NumNetworkPorts() const override { return 2 * n_; }
  PortRef Neighbor(int node, int port) const override {
    return neighbors_[static_cast<size_t>(node) * 2 * n_ + port];
  }
  std::string Describe() const override;
  std::string PortName(int port) const override;
  // Accepts node numbers, coordinates ([3, 4], dimension 0 first) and names "3,4".
  Result<int> ParseNode(const NodeRef& ref) const override;
  // "(3,4)".
  std::string NodeName(int node) const override;

  bool torus() const { return torus_; }
  int n() const { return n_; }
  int k(int dim) const { return k_[dim]; }
  const std::vector<int>& ks() const { return k_; }
  int stride(int dim) const { return stride_[dim]; }
  int Coord(int node, int dim) const { return coords_[static_cast<size_t>(node) * n_ + dim]; }
  std::vector<int> Coords(int node) const;
  int NodeAt(const std::vector<int>& coords) const;

  // Minimal number of router-to-router hops from a to b.
  int Distance(int a, int b) const;
  // Signed minimal offset along `dim` from coordinate a to b: on a torus the shorter way
  // round, ties (k even, |offset| == k/2) resolved towards "+" (positive).
  int Offset(int dim, int a, int b) const {
    int off = b - a;
    if (!torus_) return off;
    const int k = k_[dim];
    if (off < 0) off += k;  // 0..k-1, "+" distance
    if (2 * off > k) off -= k;
    return off;  // ties (2*off == k) stay positive
  }

 private:
  KaryNCube(bool torus, std::vector<int> k);

  bool torus_;
  int n_;
  std::vector<int> k_;
  std::vector<int> stride_;
  int num_nodes_;
  std::vector<PortRef> neighbors_;
  std::vector<int32_t> coords_;  // node * n + dim -> coordinate (no division on hot paths)
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_KARY_NCUBE_H_
