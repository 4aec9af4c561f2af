// NicConfig: the `nic.*` keys of the gateway model (docs/gateway.md). Plain values; node
// names are resolved against the topology by the Gateway (Topology::ParseNode: "3G0" on
// the group topology, "3,4" on a mesh, or a node number).
//
// Units: cycles are router cycles; rates are frames per cycle; sizes are bytes.
#ifndef UKAI_SIM_NIC_NIC_CONFIG_H_
#define UKAI_SIM_NIC_NIC_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

enum class DetourPolicy { kNone, kLearned, kManaged, kPreloaded };

// Which frames the I/O node's CPU handles in the Fig. 1 baseline (nic.cpu_cycles_per_frame
// > 0): kBoth, as the patent's Fig. 1 I/O node passes every frame between the Ethernet NIC
// and the interconnect through its CPU; kIngress, inbound frames only.
enum class CpuDirections { kBoth, kIngress };

// One job launch during the run (nic.jobs): at `cycle` the management node sets the
// enable register to `enabled` and hands every compute node its I/O node (management.cc).
struct NicJobLaunch {
  int64_t cycle = 0;                 // > 0 (the register at start is nic.enabled)
  std::vector<std::string> enabled;  // the NICs enabled from then on, as nic.enabled
  std::string where;                 // the config position, for errors
};

struct NicConfig {
  std::vector<std::string> enabled = {"3G0", "3G1"};  // the enable register: I/O nodes
  std::string management_node = "2G2";                // node the management node is attached to
  DetourPolicy detours = DetourPolicy::kManaged;      // where the NICs' detours come from
  int64_t frames = 0;                  // ingress frames generated internally (0: none)
  double ingress_rate = 0.001;         // internal ingress frames per cycle (machine-wide)
  int ingress_frame_bytes = 1514;      // internal ingress frame size, FCS excluded
  double bad_fcs_fraction = 0;         // share of internal ingress frames with a wrong FCS
  double egress_rate = 0;              // frames per node per cycle sent to the outside
  int egress_frame_bytes = 1514;       // egress frame size, FCS excluded
  int64_t egress_frames = 0;           // stop generating egress after this many (0: no cap)
  int64_t notify_delay_cycles = 1000;  // fault -> management node notified
  int64_t cpu_cycles_per_frame = 0;    // > 0: Fig. 1 baseline, the I/O node's CPU works
  CpuDirections cpu_directions = CpuDirections::kBoth;  // the frames the CPU handles
  bool retransmit = false;                    // re-send lost ingress frames from their source
  int64_t retransmit_timeout_cycles = 20000;  // after this long without delivery
  int retransmit_max = 3;                     // tries per frame before it counts as lost
  bool internal_traffic = true;               // run traffic.* beside the external traffic
  std::vector<std::string> macs;              // "3G2=02:aa:00:00:00:01": per-node MACs
  std::string ingress_pcap;                   // capture of ingress frames (instead of frames)
  bool ingress_fcs = false;                   // its frames end in their FCS (checked)
  std::string egress_pcap;                    // egress frames are written here (with FCS)
  double pcap_cycles_per_second = 1e9;        // capture time -> cycles
  std::vector<NicJobLaunch> jobs;             // job launches that change the enable register

  // True when the gateway model runs (some external traffic is configured).
  bool active() const { return frames > 0 || egress_rate > 0 || !ingress_pcap.empty(); }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_NIC_CONFIG_H_
