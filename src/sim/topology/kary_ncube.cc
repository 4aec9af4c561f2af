#include "sim/topology/kary_ncube.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace ukai::sim {

Result<std::unique_ptr<KaryNCube>> KaryNCube::Create(const NetworkConfig& config) {
  if (config.n < 1) {
    return Status::InvalidArgument("network.n: must be >= 1 (got " + std::to_string(config.n) + ")")
        .WithKey("network.n");
  }
  std::vector<int> k = config.k;
  if (k.size() == 1 && config.n > 1) k.assign(config.n, k[0]);  // one k for all dimensions
  if (static_cast<int>(k.size()) != config.n) {
    return Status::InvalidArgument("network.k: needs 1 or network.n (" + std::to_string(config.n) +
                                   ") values (got " + std::to_string(k.size()) + ")")
        .WithKey("network.k");
  }
  int64_t nodes = 1;
  for (size_t d = 0; d < k.size(); ++d) {
    if (k[d] < 2) {
      return Status::InvalidArgument("network.k: every radix must be >= 2 (dimension " +
                                     std::to_string(d) + " has " + std::to_string(k[d]) + ")")
          .WithKey("network.k");
    }
    nodes *= k[d];
    if (nodes > kKaryNCubeMaxNodes) {
      return Status::InvalidArgument("network.k: network too large (more than 2^26 nodes)")
          .WithKey("network.k");
    }
  }
  if (config.n > 15)
    return Status::InvalidArgument("network.n: at most 15 dimensions").WithKey("network.n");
  return std::unique_ptr<KaryNCube>(
      new KaryNCube(config.topology == TopologyKind::kTorus, std::move(k)));
}

KaryNCube::KaryNCube(bool torus, std::vector<int> k)
    : torus_(torus), n_(static_cast<int>(k.size())), k_(std::move(k)) {
  stride_.resize(n_);
  int s = 1;
  for (int d = 0; d < n_; ++d) {
    stride_[d] = s;
    s *= k_[d];
  }
  num_nodes_ = s;
  coords_.resize(static_cast<size_t>(num_nodes_) * n_);
  for (int node = 0; node < num_nodes_; ++node) {
    for (int d = 0; d < n_; ++d)
      coords_[static_cast<size_t>(node) * n_ + d] = (node / stride_[d]) % k_[d];
  }
  neighbors_.resize(static_cast<size_t>(num_nodes_) * 2 * n_);
  for (int node = 0; node < num_nodes_; ++node) {
    for (int d = 0; d < n_; ++d) {
      const int c = Coord(node, d);
      for (int dir = 0; dir < 2; ++dir) {
        int nc = dir == 0 ? c + 1 : c - 1;
        PortRef ref;
        if (nc >= 0 && nc < k_[d]) {
          ref = {node + (nc - c) * stride_[d], 2 * d + (1 - dir)};
        } else if (torus_) {
          nc = (nc + k_[d]) % k_[d];
          ref = {node + (nc - c) * stride_[d], 2 * d + (1 - dir)};
        }
        neighbors_[static_cast<size_t>(node) * 2 * n_ + 2 * d + dir] = ref;
      }
    }
  }
}

std::string KaryNCube::Describe() const {
  std::string s;
  for (int d = 0; d < n_; ++d) {
    if (d > 0) s += 'x';
    s += std::to_string(k_[d]);
  }
  s += torus_ ? " torus" : " mesh";
  return s;
}

std::string KaryNCube::PortName(int port) const {
  if (port == PePort()) return "pe";
  static const char kDims[] = "xyz";
  const int d = port / 2;
  std::string name = (port % 2 == 0) ? "+" : "-";
  if (d < 3) {
    name += kDims[d];
  } else {
    name += 'd';
    name += std::to_string(d);
  }
  return name;
}

std::vector<int> KaryNCube::Coords(int node) const {
  std::vector<int> c(n_);
  for (int d = 0; d < n_; ++d) c[d] = Coord(node, d);
  return c;
}

int KaryNCube::NodeAt(const std::vector<int>& coords) const {
  int node = 0;
  for (int d = 0; d < n_; ++d) node += coords[d] * stride_[d];
  return node;
}

Result<int> KaryNCube::ParseNode(const NodeRef& ref) const {
  std::vector<int64_t> coords = ref.coords;
  if (ref.form == NodeRef::Form::kNumber) return Topology::ParseNode(ref);
  if (ref.form == NodeRef::Form::kName) {  // "3,4"
    coords.clear();
    size_t pos = 0;
    while (pos <= ref.name.size()) {
      const size_t comma = std::min(ref.name.find(',', pos), ref.name.size());
      const std::string part = ref.name.substr(pos, comma - pos);
      if (part.empty() || part.find_first_not_of(" 0123456789") != std::string::npos ||
          part.size() > 9) {
        return Status::InvalidArgument("node " + ref.text + " " + ref.where +
                                       ": expected coordinates like \"3,4\" or [3, 4]");
      }
      coords.push_back(std::stoll(part));
      pos = comma + 1;
    }
  }
  if (static_cast<int>(coords.size()) != n_) {
    return Status::InvalidArgument("node " + ref.text + " " + ref.where + ": the " + Describe() +
                                   " needs " + std::to_string(n_) + " coordinate(s), got " +
                                   std::to_string(coords.size()));
  }
  int node = 0;
  for (int d = 0; d < n_; ++d) {
    if (coords[d] < 0 || coords[d] >= k_[d]) {
      return Status::InvalidArgument(
          "node " + ref.text + " " + ref.where + ": coordinate " + std::to_string(coords[d]) +
          " of dimension " + std::to_string(d) + " is outside 0.." + std::to_string(k_[d] - 1));
    }
    node += static_cast<int>(coords[d]) * stride_[d];
  }
  return node;
}

std::string KaryNCube::NodeName(int node) const {
  std::string s = "(";
  for (int d = 0; d < n_; ++d) {
    if (d > 0) s += ',';
    s += std::to_string(Coord(node, d));
  }
  return s + ")";
}

int KaryNCube::Distance(int a, int b) const {
  int dist = 0;
  for (int d = 0; d < n_; ++d) dist += std::abs(Offset(d, Coord(a, d), Coord(b, d)));
  return dist;
}

}  // namespace ukai::sim
