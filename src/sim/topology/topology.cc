#include "sim/topology/topology.h"

#include <algorithm>

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

Result<int> Topology::ParseNode(const NodeRef& ref) const {
  if (ref.form != NodeRef::Form::kNumber) {
    return Status::InvalidArgument("node " + ref.text + " " + ref.where + ": the " + Describe() +
                                   " names nodes by number (0.." + std::to_string(NumNodes() - 1) +
                                   ")");
  }
  if (ref.number < 0 || ref.number >= NumNodes()) {
    return Status::InvalidArgument("node " + ref.text + " " + ref.where +
                                   ": no such node (the network has nodes 0.." +
                                   std::to_string(NumNodes() - 1) + ")");
  }
  return static_cast<int>(ref.number);
}

std::string Topology::NodeName(int node) const { return std::to_string(node); }

void Topology::SetNodeAlive(int node, bool alive) {
  if (node_alive_.empty()) {
    if (alive) return;
    node_alive_.assign(static_cast<size_t>(NumNodes()), 1);
  }
  node_alive_[node] = alive ? 1 : 0;
}

bool Topology::AnyFault() const {
  auto dead = [](const std::vector<uint8_t>& v) {
    return std::find(v.begin(), v.end(), uint8_t{0}) != v.end();
  };
  return dead(alive_) || dead(node_alive_);
}

}  // namespace ukai::sim
