// Gateway: the gateway patent's whole system around one simulated Network — the enabled
// NICs (gateway_nic.h) on their I/O nodes, the external network as a learning switch, the
// management node, the compute nodes' outbound traffic, and inbound frames from a
// FrameSource (an internal generator, or a pcap capture). Interconnect packets between NICs
// and compute nodes are encoded bytes (wire/gateway_packet.h) carried as Network messages
// of ceil(bytes / router.flit_bytes) flits, with their detour in the message's via list.
//
// Choices of ours (the patent leaves them open; docs/gateway.md):
// - External switch: learns from the NICs' egress frames which NIC a source MAC sits
//   behind; a frame to a MAC it has not learned goes to enabled NIC (MAC mod number of
//   enabled NICs), so every frame enters through exactly one NIC (never delivered twice).
// - Job launch: every compute node uses the enabled NIC nearest to it (fewest hops, ties
//   by lower node index); the management node hands it the detour from that I/O node back
//   to itself (round the faults present at boot), which it puts in every command block.
// - Broadcast (S37): one copy per live compute node, each routed in dimension order; a
//   copy to a node the NIC's table holds a detour for carries that detour; only the node
//   owning the destination MAC keeps the frame, the others drop it (counted).
// - Faults and repairs during the run, and job launches (nic.jobs): the management node
//   (management.cc) learns of a failed or repaired node nic.notify_delay_cycles later,
//   recomputes the exact destinations whose path from each enabled NIC crosses a known
//   fault (detour_search.h) and (policy managed) sends each NIC one table-update message
//   with the rows that change (a detour no longer needed is cleared); it sends each compute
//   node whose I/O node or detours change an assignment message; at a job launch it sets
//   the enable register and sends each NIC whose state changes an enable/disable command.
//   Every one travels through the interconnect and applies on arrival.
// - Fig. 1 baseline (nic.cpu_cycles_per_frame > 0): every frame through an I/O node, in
//   both directions (nic.cpu_directions = "both", the default: an ingress frame before the
//   NIC hands it to the interconnect, an egress frame after it arrived and before the NIC
//   sends it), or ingress frames only ("ingress"), occupies that node's CPU for that many
//   cycles, one frame at a time in arrival order.
//
// Thread safety: none; one thread drives a Gateway.
#ifndef UKAI_SIM_NIC_GATEWAY_H_
#define UKAI_SIM_NIC_GATEWAY_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/rng.h"
#include "core/stats.h"
#include "core/status.h"
#include "sim/engine/network.h"
#include "sim/nic/gateway_nic.h"
#include "sim/routing/dor_planner.h"

namespace ukai::sim {

// One inbound Ethernet frame at the external switch.
struct IngressFrame {
  int64_t cycle = 0;           // arrival cycle
  std::vector<uint8_t> bytes;  // as on the wire (with the FCS when has_fcs)
  bool has_fcs = true;
};

// Where inbound frames come from. Next() fills `out` and returns true, false at the end,
// or an error (a malformed capture, naming the frame).
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual Result<bool> Next(IngressFrame* out) = 0;
};

// Where outbound frames go (with their FCS). May be absent.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual Status Write(int64_t cycle, std::span<const uint8_t> frame) = 0;
};

struct GatewayCounters {
  int64_t frames_in = 0;             // ingress frames that reached the switch (first try)
  int64_t frames_fcs_discarded = 0;  // S33
  int64_t frames_delivered = 0;      // kept by their owner
  int64_t frames_lost = 0;           // good, owner healthy, never got them
  int64_t frames_retransmitted = 0;  // re-sends after a loss
  int64_t frames_no_owner = 0;       // destination MAC of no compute node
  int64_t frames_owner_faulty = 0;   // owner node faulty
  int64_t broadcasts = 0;            // S37
  int64_t broadcast_copies_dropped = 0;
  int64_t egress_frames = 0, egress_bytes = 0, egress_lost = 0;
  int64_t table_updates_sent = 0, table_rows_applied = 0;
  IntHistogram latency;             // ingress: switch arrival -> kept by the owner, cycles
  std::vector<int64_t> nic_frames;  // per NIC (nic_nodes() order): frames in + out
  std::vector<int64_t> cpu_busy;    // per NIC: the I/O CPU's busy cycles (Fig. 1)
  // Ingress arrivals, for the saturation rule (run_gateway.h): the cycles of the first and
  // the last first-try arrival at the switch (-1: none), and how many frames had arrived
  // but not yet been settled (delivered, discarded, or lost / handed to retransmission)
  // just after the last one arrived.
  int64_t first_arrival = -1, last_arrival = -1, backlog_at_last_arrival = 0;
  int64_t frames_settled = 0;  // frames with a first outcome so far

  // The management node's runtime work (management.cc).
  int64_t table_rows_cleared = 0;        // rows whose detour a repair made unneeded
  int64_t job_launches = 0;              // nic.jobs applied
  int64_t nic_commands_sent = 0;         // enable/disable commands
  int64_t frames_dropped_disabled = 0;   // ingress frames at a NIC when it went down, or with
                                         // no NIC up (then retransmitted or lost)
  int64_t egress_dropped_disabled = 0;   // egress packets reaching a disabled NIC
  int64_t egress_updates_sent = 0;       // assignments (I/O node, detours) to compute nodes
  int64_t egress_retransmitted = 0;      // egress re-sends after a loss (nic.retransmit)
  int64_t management_messages_lost = 0;  // commands undeliverable (re-sent on the next event)
};

// The nodes nic.* names, resolved on a topology.
struct NicNodes {
  std::vector<int> enabled;  // nic.enabled, in order
  int management = -1;       // nic.management_node
  std::vector<Mac> macs;     // per node: the default or nic.macs

  std::vector<int> all;  // every NIC ever enabled: nic.enabled, then new ones of nic.jobs
  std::vector<std::pair<int64_t, std::vector<int>>> jobs;  // nic.jobs: (cycle, NIC indices)
};

// Checks and resolves nic.enabled, nic.management_node and nic.macs on `topology` (and that
// routing.algorithm is dor-detour); errors start with the key (the config check uses it
// before any point runs).
Result<NicNodes> ResolveNicConfig(const SimConfig& config, const Topology& topology);

class Gateway {
 public:
  // Builds the network and the gateway of `config` (routing.algorithm must be dor-detour).
  // `source` may be null (then nic.frames internal frames are generated); `sink` may be
  // null. Errors name the nic.* key.
  static Result<std::unique_ptr<Gateway>> Create(const SimConfig& config,
                                                 std::unique_ptr<FrameSource> source = {},
                                                 std::unique_ptr<FrameSink> sink = {});

  // One cycle. Errors: the source's or sink's.
  Status Step();
  // True when every ingress frame is accounted for and no gateway message is in flight.
  bool Done() const;

  Network& network() { return *net_; }
  const GatewayCounters& counters() const { return counters_; }
  // Every NIC the run uses (nic.enabled first, then those nic.jobs enables), in NIC order.
  const std::vector<int>& nic_nodes() const { return nic_nodes_; }
  // True while NIC `k` is enabled (its link to the external switch up).
  bool nic_enabled(int k) const { return nic_on_[k] != 0; }
  GatewayNic& nic(int k) { return *nics_[k]; }
  int management_node() const { return mgmt_; }
  // Node `node`'s MAC: 02:00:00:00:HH:LL (the index in hex) unless nic.macs sets it.
  Mac MacOf(int node) const { return macs_[node]; }
  int IoNodeOf(int node) const { return io_of_[node]; }
  const std::vector<int>& ReturnDetourOf(int node) const { return return_detour_[node]; }
  // The detour node -> its I/O node the node uses (empty: the normal path).
  const std::vector<int>& OutDetourOf(int node) const { return out_detour_[node]; }
  // Sends one outbound frame from `node` now (tests; the egress traffic uses it too).
  void SendEgress(int node, std::span<const uint8_t> frame);
  // Injects one inbound frame at the switch now (tests).
  void InjectIngress(IngressFrame frame);

 private:
  // An ingress frame's state.
  struct Frame {
    int64_t arrived = 0;  // first arrival at the switch
    IngressFrame frame;
    Mac dst = 0;
    int owner = -1;  // node owning dst, -1: none
    int tries = 1;
    int copies = 0;        // broadcast copies not yet delivered or lost
    bool settled = false;  // its first outcome is counted in frames_settled
  };
  // What a tagged gateway message carries.
  struct Tagged {
    enum Kind { kIngress, kBroadcastCopy, kEgress, kUpdate, kCommand } kind = kIngress;
    int64_t frame = -1;            // kIngress, kBroadcastCopy
    int nic = -1;                  // kEgress, kUpdate: NIC index
    int node = -1;                 // kBroadcastCopy: the copy's destination; kEgress: source
    int tries = 1;                 // kEgress: the try this is (nic.retransmit)
    bool owner_copy = false;       // kBroadcastCopy: the copy to the MAC's owner
    std::vector<uint8_t> bytes;    // kEgress: the encoded packet
    std::vector<AddressRow> rows;  // kUpdate
  };
  // A management-node command in flight (management.cc), keyed by its message's tag.
  struct Command {
    enum Kind { kEnable, kDisable, kAssign } kind = kAssign;
    int nic = -1;               // kEnable, kDisable: the NIC; kAssign: the node's I/O NIC
    int node = -1;              // kAssign: the compute node
    std::vector<int> out, ret;  // kAssign: detours node -> I/O node, I/O node -> node
  };
  // A fault or repair on its way to the management node.
  struct Notice {
    int64_t cycle = 0;
    int node = -1;
    bool failed = true;
  };
  Gateway() = default;
  Status Init(const SimConfig& config);
  // management.cc: the management node.
  void InitManagement(const NicNodes& nodes);
  void Notify(int64_t now);
  void WatchFaults(int64_t now);
  void LaunchJob(const std::vector<int>& enabled);
  void SyncRegister();
  void SendTableUpdates();
  std::vector<AddressRow> RowChanges(int k);
  void SendAssignments(bool boot);
  Command AssignmentOf(int node) const;
  bool KnownBlocked(int src, int dst) const;
  void SendCommand(int dst, Command c);
  void ApplyCommand(int64_t tag, bool delivered);
  void SetNicUp(int k, bool up);
  void UpdateLost(const Tagged& t);
  void EgressLost(Tagged t);
  void SendEgressTry(int node, std::span<const uint8_t> frame, int tries);
  Status TransmitEgress(Tagged t, int64_t cycle);
  int64_t CpuReady(int k);
  Status ResendEgress();
  Status PullIngress();
  void AtSwitch(int64_t id);
  void AtNic(int k, int64_t id);
  void SendInbound(int k, int64_t id, const InboundPacket& in);
  void GenerateEgress();
  Status HandleDeliveries();
  void HandleLost();
  void Finish(int64_t id, bool delivered);
  void CopyDone(int64_t id, bool owner_copy, bool delivered);
  int64_t Tag(Tagged t);
  int Flits(size_t bytes) const;
  int MaxVia() const;

  SimConfig config_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<DorPlanner> planner_;
  std::unique_ptr<FrameSource> source_;
  std::unique_ptr<FrameSink> sink_;
  std::vector<int> nic_nodes_;
  std::vector<std::unique_ptr<GatewayNic>> nics_;
  int mgmt_ = -1;
  std::vector<int> io_of_;                       // per node: its NIC index
  std::vector<std::vector<int>> return_detour_;  // per node: I/O node -> node
  std::vector<std::vector<int>> out_detour_;     // per node: node -> I/O node
  std::unordered_map<Mac, int> switch_table_;    // learned: MAC -> NIC index
  std::unordered_map<Mac, int> owner_;           // MAC -> compute node
  std::vector<Mac> macs_;                        // per node
  std::vector<uint8_t> known_faulty_;
  int64_t events_seen_ = 0;
  std::deque<Notice> notices_;
  // Management node state (management.cc).
  std::vector<uint8_t> nic_on_;     // per NIC: enabled as the NIC and the switch see it
  std::vector<int> ports_up_;       // the switch's NICs that are up, in NIC order
  std::vector<uint8_t> register_;   // per NIC: the management node's enable register
  std::vector<uint8_t> commanded_;  // per NIC: the state last commanded (2: command lost)
  std::vector<uint8_t> reported_;   // per node: faulty as last reported to the management node
  std::vector<std::pair<int64_t, std::vector<int>>> jobs_;  // (cycle, NICs enabled)
  size_t next_job_ = 0;
  std::vector<Command> handed_;  // per node: the assignment last sent (nic -1: to resend)
  std::vector<std::vector<std::vector<int>>> mgmt_rows_;   // [NIC][node]: detour last sent
  std::unordered_map<int64_t, Command> commands_;          // in flight, by tag
  std::deque<std::pair<int64_t, Tagged>> egress_retries_;  // (cycle, lost egress packet)

  std::unordered_map<int64_t, Frame> frames_;                       // live ingress frames
  std::unordered_map<int64_t, Tagged> tagged_;                      // live gateway messages
  std::vector<std::deque<std::pair<int64_t, int64_t>>> nic_queue_;  // (ready, frame)
  std::vector<int64_t> cpu_free_;
  // Fig. 1 with nic.cpu_directions = "both": egress packets at their I/O node's CPU, per NIC,
  // as (ready cycle, packet).
  std::vector<std::deque<std::pair<int64_t, Tagged>>> egress_cpu_queue_;
  std::deque<std::pair<int64_t, int64_t>> retries_;  // (cycle, frame)
  IngressFrame pending_;
  InboundPacket inbound_;  // AtNic()'s, reused frame after frame
  bool have_pending_ = false, source_done_ = false;
  int64_t next_frame_ = 0, next_tag_ = 0, generated_ = 0, egress_sent_ = 0;
  Rng rng_ = Rng::Stream(1, 1);
  GatewayCounters counters_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_GATEWAY_H_
