#include "sim/topology/topology.h"

namespace ukai::sim {

std::string Topology::PortName(int port) const {
  if (port == PePort()) return "pe";
  std::string name = "p";
  name += std::to_string(port);
  return name;
}

void Topology::SetChannelAlive(int node, int port, bool alive) {
  if (alive_.empty()) {
    if (alive) return;
    alive_.assign(static_cast<size_t>(NumNodes()) * NumNetworkPorts(), 1);
  }
  alive_[static_cast<size_t>(node) * NumNetworkPorts() + port] = alive ? 1 : 0;
  const PortRef far = Neighbor(node, port);
  if (far.valid()) alive_[static_cast<size_t>(far.node) * NumNetworkPorts() + far.port] = alive;
}

}  // namespace ukai::sim
