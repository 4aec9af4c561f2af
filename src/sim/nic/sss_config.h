// SssConfig: the keys of the SSS-CORE NIC model (nic/sss_nic.h, docs/sss.md): wire
// accounting of its source-routed packets (nic.*, link.*) and the NIC's traffic
// (traffic.operation, traffic.multicast, ...). Plain values; node names are resolved against
// the topology by the model. Defaults are the paper's figures where it gives one.
//
// Units: sizes in bytes, rates in 10^6 bytes/s (MB/s) or Gb/s as the name says.
// Thread safety: a plain value.
#ifndef UKAI_SIM_NIC_SSS_CONFIG_H_
#define UKAI_SIM_NIC_SSS_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

// traffic.operation: plain messages of the engine (no NIC model), or the NIC's remote
// writes / reads.
enum class RmaOperation { kMessage, kWrite, kRead };
// traffic.multicast: none, one unicast per member (the paper's Fig. 1), copies made in the
// switches (Fig. 2), or NIC-to-NIC chaining (Fig. 3).
enum class MulticastKind { kNone, kNaive, kHierarchical, kChained };

struct SssConfig {
  // nic.*: the packet and the NIC (the paper's Section 3).
  int header_bytes = 30;                   // header + trailer of a packet
  int per_switch_bytes = 2;                // route bytes per switch on the path
  int max_payload_bytes = 4096;            // payload bound of one packet
  int page_bytes = 4096;                   // no packet's data crosses a page boundary
  double bus_mbytes_per_s = 67;            // the I/O bus (SBus with 8-cycle bursts)
  double buffer_mbytes_per_s = 200;        // the SRAM send/receive buffers
  int64_t receive_buffer_bytes = 2097152;  // the receive ring (4 x 512K x 8b SRAM)
  int ack_bytes = 4;                       // payload of an ack (the SS-Wait flag write)
  int node_id_bytes = 2;                   // one member's virtual node ID in a chained header
  // link.*
  double raw_gbps = 1.0625;  // line rate with the 8b/10b code bits (53.125 MHz x 20 b)

  // traffic.*
  RmaOperation operation = RmaOperation::kMessage;
  MulticastKind multicast = MulticastKind::kNone;
  int multicast_group_size = 4;  // members per multicast (random, other than the source)
  // Explicit groups (node names); when set, each multicast takes the next group in turn
  // among those its source is not a member of.
  std::vector<std::vector<std::string>> multicast_groups;
  bool multicast_convert = false;  // chained: the first copying switch converts to hierarchical
  // Switches that can copy packets (hierarchical multicast, ack combining, header
  // conversion): every switch when empty and copy_all.
  std::vector<std::string> copy_switches;
  bool copy_all = true;
  bool acks = false;                 // writes and multicasts return an ack
  int page_offset = 0;               // offset of a transfer's destination address in its page
  int64_t operations = 0;            // stop creating operations after this many (0: no cap)
  std::vector<std::string> sources;  // NICs that start operations (empty: every NIC)

  bool active() const { return operation != RmaOperation::kMessage; }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_CONFIG_H_
