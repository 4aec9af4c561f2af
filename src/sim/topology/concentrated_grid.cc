#include "sim/topology/concentrated_grid.h"

#include <algorithm>
#include <cstdlib>

namespace ukai::sim {
namespace {

double GridRouters(const NetworkConfig& config) {
  double r = 1;
  for (int d = 0; d < config.n; ++d) {
    r *= config.k.empty() ? 1 : config.k[std::min<size_t>(d, config.k.size() - 1)];
  }
  return r;
}

int FlatFlyPorts(const std::vector<int>& k, int c) {
  int ports = c;
  for (int kd : k) ports += kd - 1;
  return ports;
}

}  // namespace

ConcentratedGrid::ConcentratedGrid(std::vector<int> k, int c, int ports)
    : SwitchTopology(Routers(k) * c, Routers(k), ports), k_(std::move(k)), c_(c) {
  int s = 1;
  for (int kd : k_) {
    stride_.push_back(s);
    s *= kd;
  }
}

int ConcentratedGrid::Routers(const std::vector<int>& k) {
  int r = 1;
  for (int kd : k) r *= kd;
  return r;
}

Status ConcentratedGrid::Check(const NetworkConfig& config, int ports) {
  if (config.concentration < 1) {
    return Status::InvalidArgument("network.concentration: must be >= 1 (got " +
                                   std::to_string(config.concentration) + ")")
        .WithKey("network.concentration");
  }
  if (static_cast<int>(config.k.size()) != config.n) {
    return Status::InvalidArgument("network.k: needs network.n radices").WithKey("network.k");
  }
  if (ports > 64) {
    return Status::InvalidArgument(std::string("network.k: routers would have ") +
                                   std::to_string(ports) + " network ports, at most 64")
        .WithKey("network.k");
  }
  const double routers = GridRouters(config);
  if (routers * (config.concentration + 1) > double(int64_t{1} << 20)) {
    return SwitchTopology::CheckSize(int64_t{1} << 20, 1, "network.k");
  }
  return Status::Ok();
}

void CMesh::Size(const NetworkConfig& config, double* nodes, int* ports) {
  *nodes = GridRouters(config) * (config.concentration + 1);
  *ports = config.concentration + 2 * config.n;
}

Result<std::unique_ptr<CMesh>> CMesh::Create(const NetworkConfig& config) {
  const int ports = config.concentration + 2 * config.n;
  UKAI_RETURN_IF_ERROR(Check(config, ports));
  std::unique_ptr<CMesh> t(new CMesh(config.k, config.concentration, ports));
  for (int r = 0; r < t->NumRouters(); ++r) {
    for (int j = 0; j < t->c_; ++j) t->AttachTerminal(r * t->c_ + j, r, j);
    for (int d = 0; d < t->n(); ++d) {
      if (t->Coord(r, d) + 1 < t->k_[d]) {
        t->ConnectRouters(r, t->Port(d, true), r + t->stride_[d], t->Port(d, false));
      }
    }
  }
  return t;
}

std::string CMesh::Describe() const {
  std::string s;
  for (int kd : k_) {
    if (!s.empty()) s += "x";
    s += std::to_string(kd);
  }
  return s + std::string(" cmesh (concentration ") + std::to_string(c_) + ")";
}

std::string CMesh::PortName(int port) const {
  if (port == PePort()) return "pe";
  if (port < c_) return std::string("t") + std::to_string(port);
  const int d = (port - c_) / 2;
  return std::string((port - c_) % 2 == 0 ? "+" : "-") + std::string("d") + std::to_string(d);
}

int CMesh::RouterDistance(int a, int b) const {
  int hops = 0;
  for (int d = 0; d < n(); ++d) hops += std::abs(Coord(a, d) - Coord(b, d));
  return hops;
}

void FlatFly::Size(const NetworkConfig& config, double* nodes, int* ports) {
  *nodes = GridRouters(config) * (config.concentration + 1);
  std::vector<int> k(config.n, 2);
  for (int d = 0; d < config.n && !config.k.empty(); ++d) {
    k[d] = config.k[std::min<size_t>(d, config.k.size() - 1)];
  }
  *ports = FlatFlyPorts(k, config.concentration);
}

FlatFly::FlatFly(std::vector<int> k, int c, int ports) : ConcentratedGrid(std::move(k), c, ports) {
  int off = 0;
  for (int kd : k_) {
    off_.push_back(off);
    off += kd - 1;
  }
}

Result<std::unique_ptr<FlatFly>> FlatFly::Create(const NetworkConfig& config) {
  const int ports = FlatFlyPorts(config.k, config.concentration);
  UKAI_RETURN_IF_ERROR(Check(config, ports));
  std::unique_ptr<FlatFly> t(new FlatFly(config.k, config.concentration, ports));
  for (int r = 0; r < t->NumRouters(); ++r) {
    for (int j = 0; j < t->c_; ++j) t->AttachTerminal(r * t->c_ + j, r, j);
    for (int d = 0; d < t->n(); ++d) {
      const int mine = t->Coord(r, d);
      for (int v = mine + 1; v < t->k_[d]; ++v) {
        const int other = r + (v - mine) * t->stride_[d];
        t->ConnectRouters(r, t->Port(d, mine, v), other, t->Port(d, v, mine));
      }
    }
  }
  return t;
}

std::string FlatFly::Describe() const {
  std::string s;
  for (int kd : k_) {
    if (!s.empty()) s += "x";
    s += std::to_string(kd);
  }
  return s + std::string(" flattened butterfly (concentration ") + std::to_string(c_) + ")";
}

std::string FlatFly::PortName(int port) const {
  if (port == PePort()) return "pe";
  if (port < c_) return std::string("t") + std::to_string(port);
  int d = 0;
  while (d + 1 < n() && port - c_ >= off_[d + 1]) ++d;
  return std::string("d") + std::to_string(d) + std::string(".") +
         std::to_string(port - c_ - off_[d]);
}

int FlatFly::RouterDistance(int a, int b) const {
  int hops = 0;
  for (int d = 0; d < n(); ++d) hops += Coord(a, d) != Coord(b, d) ? 1 : 0;
  return hops;
}

}  // namespace ukai::sim
