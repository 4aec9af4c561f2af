// The fault configuration as written (`faults.*` keys), before it is resolved against a
// topology (topology/faults.h does that). Plain values: SimConfig holds one.
//
// A node is written as a list of coordinates ([3, 4] on a k-ary n-cube, dimension 0
// first), as a node number (an int), or as a name (a string) that the topology parses
// (Topology::ParseNode: a k-ary n-cube accepts "3,4"; a group topology may accept "3G2").
// A channel is written as the pair of nodes it joins ([[3, 4], [3, 5]]) and stands for the
// whole bidirectional physical channel: both directions fail together.
//
// Thread safety: plain values.
#ifndef UKAI_SIM_TOPOLOGY_FAULT_SPEC_H_
#define UKAI_SIM_TOPOLOGY_FAULT_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

// One node as written in the config.
struct NodeRef {
  enum class Form { kCoords, kNumber, kName };
  Form form = Form::kNumber;
  std::vector<int64_t> coords;  // kCoords
  int64_t number = 0;           // kNumber
  std::string name;             // kName
  std::string text;             // as written, for messages ("[3, 4]", "12", "\"3G2\"")
  std::string where;            // "at file.toml:3:12" or "in --set ..."
};

// One physical channel: the channels between nodes a and b (both directions).
struct ChannelRef {
  NodeRef a, b;
  std::string where;
};

// One timed fault or repair.
struct FaultEventSpec {
  enum class Kind { kFailNode, kRepairNode, kFailChannel, kRepairChannel };
  int64_t cycle = 0;
  Kind kind = Kind::kFailNode;
  NodeRef node;        // k*Node
  ChannelRef channel;  // k*Channel
  std::string where;
};

// How timed faults and repairs reach the routing tables (`reconfig.*`,
// engine/reconfiguration.h).
struct ReconfigConfig {
  enum class Mode { kProtocol, kInstant };
  enum class RootPolicy { kStatic, kFaultRegion };
  enum class Discard { kRecovering, kAll };
  Mode mode = Mode::kProtocol;             // reconfig.mode: "protocol" | "instant"
  RootPolicy root = RootPolicy::kStatic;   // reconfig.root: "static" | "fault-region"
  std::vector<NodeRef> root_priority;      // reconfig.root_priority (static policy)
  int64_t detect_cycles = 16;              // reconfig.detect_cycles
  int64_t hop_cycles = 8;                  // reconfig.hop_cycles: per control-message hop
  int64_t compute_cycles = 100;            // reconfig.compute_cycles: per table computation
  Discard discard = Discard::kRecovering;  // reconfig.discard: "recovering" | "all"
  bool retransmit = true;                  // reconfig.retransmit: resend discarded ones
};

struct FaultConfig {
  std::vector<NodeRef> nodes;          // faults.nodes: faulty from cycle 0
  std::vector<ChannelRef> channels;    // faults.channels: faulty from cycle 0
  int random_nodes = 0;                // faults.random_nodes: drawn with the run seed
  int random_channels = 0;             // faults.random_channels: drawn with the run seed
  std::vector<FaultEventSpec> events;  // faults.events: in cycle order after resolving
  ReconfigConfig reconfig;             // reconfig.*: how timed events are handled

  // True when any fault is configured (static, random or timed).
  bool any() const {
    return !nodes.empty() || !channels.empty() || random_nodes > 0 || random_channels > 0 ||
           !events.empty();
  }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_TOPOLOGY_FAULT_SPEC_H_
