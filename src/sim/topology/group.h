// GroupTopology: the group topology of the gateway patent (Fig. 3): G groups of S nodes;
// inside a group every pair of nodes is joined by a channel (full connection); across
// groups, the nodes with the same in-group number i form a ring (1-D torus) of G nodes.
// The patent's machine is 6 x 4 = 24 nodes (network.groups, network.group_size).
//
// Names and numbering (the patent's): node "<g>G<i>" with group g = 1..G (1-based) and
// member i = 0..S-1 (0-based); its linear index is (g-1)*S + i ("1G0" = 0, "6G3" = 23).
//
// Ports of every node (S - 1 + 2 network ports):
//   port p in 0..S-2   the full-connection channel to member (p < i ? p : p + 1) of the
//                      same group ("m<member>" is the port's name seen from a node, but
//                      port names are node independent: "grp<p>");
//   port S-1 ("+ring") to the same member of group g+1 (group G wraps to group 1);
//   port S   ("-ring") to the same member of group g-1.
// With G == 2 the + and - ring channels both join the same pair (two distinct channels);
// with G == 1 the ring ports lead nowhere. The ring's dateline lies on the channel between
// group G and group 1.
//
// Thread safety: immutable after construction (liveness: see Topology).
#ifndef UKAI_SIM_TOPOLOGY_GROUP_H_
#define UKAI_SIM_TOPOLOGY_GROUP_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

class GroupTopology final : public Topology {
 public:
  // Errors name network.groups / network.group_size.
  static Result<std::unique_ptr<GroupTopology>> Create(int groups, int group_size);

  int NumNodes() const override { return groups_ * size_; }
  int NumNetworkPorts() const override { return size_ + 1; }
  PortRef Neighbor(int node, int port) const override;
  std::string Describe() const override;
  std::string PortName(int port) const override;
  // Accepts node numbers and names "3G2" (group 1-based, member 0-based).
  Result<int> ParseNode(const NodeRef& ref) const override;
  // "3G2".
  std::string NodeName(int node) const override;

  int groups() const { return groups_; }
  int group_size() const { return size_; }
  int Group(int node) const { return node / size_; }   // 0-based
  int Member(int node) const { return node % size_; }  // 0-based
  int NodeAt(int group0, int member) const { return group0 * size_ + member; }
  int PlusRingPort() const { return size_ - 1; }
  int MinusRingPort() const { return size_; }
  // The full-connection port of a node with member number `from` leading to member `to`.
  static int IntraPort(int from, int to) { return to < from ? to : to - 1; }
  // Signed minimal ring offset from group a to group b (0-based); ties (G even, exactly
  // G/2 apart) go "+".
  int RingOffset(int a, int b) const {
    int off = b - a;
    if (off < 0) off += groups_;
    if (2 * off > groups_) off -= groups_;
    return off;
  }
  // Minimal number of hops from a to b (intra-group hop + ring hops).
  int Distance(int a, int b) const;

 private:
  GroupTopology(int groups, int group_size) : groups_(groups), size_(group_size) {}

  int groups_;
  int size_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_GROUP_H_
