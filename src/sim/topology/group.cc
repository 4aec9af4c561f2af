#include "sim/topology/group.h"

#include <cstdlib>
#include <string>

namespace ukai::sim {
namespace {

constexpr int kMaxNodes = 1 << 20;

// Parses the digits of `s` (1..9 of them) into *out.
bool ParseDigits(const std::string& s, int* out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *out = std::stoi(s);
  return true;
}

}  // namespace

Result<std::unique_ptr<GroupTopology>> GroupTopology::Create(int groups, int group_size) {
  if (groups < 1) {
    return Status::InvalidArgument("network.groups: must be >= 1 (got " + std::to_string(groups) +
                                   ")")
        .WithKey("network.groups");
  }
  if (group_size < 1) {
    return Status::InvalidArgument("network.group_size: must be >= 1 (got " +
                                   std::to_string(group_size) + ")")
        .WithKey("network.group_size");
  }
  if (static_cast<int64_t>(groups) * group_size < 2) {
    return Status::InvalidArgument(
               "network.groups: the group topology needs at least 2 nodes (network.groups x "
               "network.group_size = 1)")
        .WithKey("network.groups");
  }
  if (group_size > 30) {
    return Status::InvalidArgument("network.group_size: at most 30 nodes per group (got " +
                                   std::to_string(group_size) + ")")
        .WithKey("network.group_size");
  }
  if (static_cast<int64_t>(groups) * group_size > kMaxNodes) {
    return Status::InvalidArgument("network.groups: network too large (more than 2^20 nodes)")
        .WithKey("network.groups");
  }
  return std::unique_ptr<GroupTopology>(new GroupTopology(groups, group_size));
}

PortRef GroupTopology::Neighbor(int node, int port) const {
  const int g = Group(node);
  const int i = Member(node);
  if (port < size_ - 1) {
    const int m = port < i ? port : port + 1;
    return {NodeAt(g, m), IntraPort(m, i)};
  }
  if (groups_ < 2) return {};
  if (port == PlusRingPort()) return {NodeAt((g + 1) % groups_, i), MinusRingPort()};
  if (port == MinusRingPort()) return {NodeAt((g + groups_ - 1) % groups_, i), PlusRingPort()};
  return {};
}

std::string GroupTopology::Describe() const {
  return std::to_string(groups_) + "x" + std::to_string(size_) + " group";
}

std::string GroupTopology::PortName(int port) const {
  if (port == PePort()) return "pe";
  if (port == PlusRingPort()) return "+ring";
  if (port == MinusRingPort()) return "-ring";
  return "grp" + std::to_string(port);
}

Result<int> GroupTopology::ParseNode(const NodeRef& ref) const {
  if (ref.form == NodeRef::Form::kNumber) return Topology::ParseNode(ref);
  int64_t g = 0, i = 0;
  if (ref.form == NodeRef::Form::kName) {
    const size_t sep = ref.name.find_first_of("Gg");
    int gi = 0, mi = 0;
    if (sep == std::string::npos || !ParseDigits(ref.name.substr(0, sep), &gi) ||
        !ParseDigits(ref.name.substr(sep + 1), &mi)) {
      return Status::InvalidArgument("node " + ref.text + " " + ref.where +
                                     ": expected a group-topology name like \"3G2\" (group "
                                     "1.." +
                                     std::to_string(groups_) + ", member 0.." +
                                     std::to_string(size_ - 1) + ")");
    }
    g = gi;
    i = mi;
  } else {
    if (ref.coords.size() != 2) {
      return Status::InvalidArgument("node " + ref.text + " " + ref.where +
                                     ": the group topology takes [group, member] or \"3G2\"");
    }
    g = ref.coords[0];
    i = ref.coords[1];
  }
  if (g < 1 || g > groups_) {
    return Status::InvalidArgument("node " + ref.text + " " + ref.where + ": group " +
                                   std::to_string(g) + " does not exist (groups 1.." +
                                   std::to_string(groups_) + ")");
  }
  if (i < 0 || i >= size_) {
    return Status::InvalidArgument("node " + ref.text + " " + ref.where + ": member " +
                                   std::to_string(i) + " does not exist (members 0.." +
                                   std::to_string(size_ - 1) + ")");
  }
  return NodeAt(static_cast<int>(g - 1), static_cast<int>(i));
}

std::string GroupTopology::NodeName(int node) const {
  return std::to_string(Group(node) + 1) + "G" + std::to_string(Member(node));
}

int GroupTopology::Distance(int a, int b) const {
  return (Member(a) != Member(b) ? 1 : 0) + std::abs(RingOffset(Group(a), Group(b)));
}

}  // namespace ukai::sim
