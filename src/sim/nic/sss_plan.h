// Multicast plans of the SSS-CORE NIC model (docs/sss.md): for one packet sent to a group,
// which packets go where, who forwards, who copies, who combines the acks. The NIC model
// (nic/sss_nic.h) executes a plan event by event.
//
// A plan has units — places a packet lands: a member NIC, or the unit of a switch that
// converts a header or combines acks — and transmissions (Tx), each started by the source
// or by a unit when the head of the packet that reaches it arrives (cut-through: the unit
// forwards while it receives).
//
//   naive         one unicast per member (the paper's Fig. 1); each member acks to the source.
//   chained       the members in node-number order starting after the source (on a tree:
//                 left to right, each subtree entered once); each member forwards to the
//                 next as it receives; with acks each appends its own in the packet's ack
//                 field and the last returns one combined ack to the chain's origin.
//                 multicast_convert: the first switch on the way to the first member that
//                 can copy takes the packet ("converted") and sends it on as a tree.
//   hierarchical  one packet whose route is a tree: the switches copy it (RouteResult::Fork).
//                 A switch that cannot copy (network.copy_switches) cannot branch: the members
//                 below it are reached by a chain that the nearest switch above it that can
//                 copy starts (hierarchical -> chained conversion; the chain carries the route
//                 back to that switch for its ack), or the source itself when none can. With
//                 acks, every branching switch combines the acks of its branches into one.
// On a graph where the shortest routes from the root to two members enter a node by
// different channels, the members are split over several trees (several packets).
//
// Header bytes (our accounting; the paper gives only the unicast figure): a tree packet
// carries per_switch_bytes for every switch of the tree (its output set there); a chained
// packet carries the route to the next member, node_id_bytes per member still to visit
// after it, the ack field and, on a converted chain, the return route to its origin; a
// packet that asks for an ack carries the SS-Wait flag's address (nic.ack_bytes).
//
// Thread safety: pure functions.
#ifndef UKAI_SIM_NIC_SSS_PLAN_H_
#define UKAI_SIM_NIC_SSS_PLAN_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "sim/nic/sss_config.h"
#include "sim/nic/sss_packet.h"
#include "sim/routing/source_routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

inline constexpr int kPlanSource = -1;  // Tx::from / Unit::ack_to: the source NIC
inline constexpr int kNoAck = -2;       // Unit::ack_to: sends no ack

struct McastUnit {
  int node = -1;
  bool member = false;             // a member NIC (else a switch's unit)
  std::vector<int> sends;          // Tx started when its packet's head arrives
  int ack_to = kNoAck;             // the unit its ack goes to, or kPlanSource
  std::vector<RouteHop> ack_path;  // the ack's route (empty: the table route to the source)
  int acks_expected = 0;           // acks it combines before sending its own (0: a member's own)
};

struct McastTx {
  int from = kPlanSource;  // the sending unit
  SssPacketKind kind = SssPacketKind::kMulticastTree;
  bool tree = false;
  // Unicast: the route (table route 0 of a pair of end nodes when `table`, else `path`),
  // the destination node and the unit it lands at.
  bool table = false;
  std::vector<RouteHop> path;
  int dst = -1;
  int to_unit = -1;
  // Tree: the routers and their ports; the units it lands at.
  std::vector<SourceRouting::TreeNode> nodes;
  std::vector<int> leaves;
  int switches = 0;   // switches that read the route (wire bytes)
  int64_t extra = 0;  // extra header bytes (member list, ack field, kept route)
};

struct McastPlan {
  std::vector<McastUnit> units;
  std::vector<McastTx> txs;
  std::vector<int> source_sends;  // Tx the source starts
  int source_acks = 0;            // acks the source waits for (0 without acks)
  int members = 0;
};

// `copy` (per node) says which switches can copy. Members are end nodes other than `src`,
// distinct. Errors only for an impossible request (a member equal to the source, no route).
Result<McastPlan> BuildMulticastPlan(const Topology& topology, const SourceRouteTable& routes,
                                     const SssConfig& config, const std::vector<uint8_t>& copy,
                                     MulticastKind kind, int src, const std::vector<int>& members);

// Switches that read a route of `hops` ending at `dst` (a switch at the end reads it too).
int SwitchesOn(const Topology& topology, const std::vector<RouteHop>& hops, int dst);

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_PLAN_H_
