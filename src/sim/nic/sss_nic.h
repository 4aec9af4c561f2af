// SssMachine: the SSS-CORE network (docs/sss.md) — the flit-level Network of switches and
// NICs with `source` routing — and the NICs' model around it: operations (remote writes,
// reads, multicasts) submitted by any client (the synthetic traffic of nic/sss_traffic.h,
// later the runtime's `sim` module), split into packets, moved over the NIC's bus and
// buffers, sent with their wire sizes, received into a flow-controlled ring, acknowledged.
//
// The NIC (one per end node):
// - Bus (nic.bus_mbytes_per_s): DMA jobs one at a time, shared by send (host -> buffer: a
//   packet's payload, before it can be sent) and receive (buffer -> host: a packet's
//   payload, an ack's flag); a waiting receive job goes before a waiting send job (the
//   ring must drain), a job in progress is not preempted. A packet is sent only once its
//   payload is in the buffer.
// - Buffers (nic.buffer_mbytes_per_s): every byte the link receives, the link sends and the
//   DMA moves passes the SRAM; per cycle the SRAM offers rate / clock bytes; receiving
//   comes first (it cannot wait), a packet starts only when the SRAM has a flit's bytes and
//   then goes on at link rate (never stopping midway; the SRAM owes what it took), the DMA
//   takes what is left (at most the bus rate). Refilled up to one cycle's rate plus a flit.
// - Receive ring (nic.receive_buffer_bytes): flow control admits a packet only when the
//   ring has room for all of it (Fabric::SetEjectCredits); its room comes back when the
//   packet has been DMA'd to the host (a read request or a forwarded copy's room at once).
// - Send: a transfer is split into packets (nic/sss_packet.h); a pair's packets take the
//   pair's table routes in turn (route 0 only with routing.in_order, on one injection VC).
// Operations complete: a write when every packet is in the target's memory (with an ack:
// and the ack's flag is written at the initiator), a read when every reply packet is in
// the reader's memory, a multicast when every member has it in memory (with acks: and the
// source has all its acks and written the flag). Multicast acks confirm the packet's
// arrival at a member NIC (sent when its tail arrives: a chained member appends its ack as
// the packet passes); a write's ack follows the access (the DMA), as the paper says.
// Units in switches (conversion, ack combining) act at once and need no bus or buffer.
//
// Thread safety: none; one thread drives a machine.
#ifndef UKAI_SIM_NIC_SSS_NIC_H_
#define UKAI_SIM_NIC_SSS_NIC_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sim/engine/network.h"
#include "sim/experiment/sim_config.h"
#include "sim/nic/sss_packet.h"
#include "sim/nic/sss_plan.h"
#include "sim/routing/source_routing.h"
#include "sim/topology/graph.h"

namespace ukai::sim {

// An operation a NIC starts (Submit).
struct SssOp {
  enum class Kind { kWrite, kRead, kMulticast };
  Kind kind = Kind::kWrite;
  int src = 0;
  int dst = -1;              // write, read: the target end node
  std::vector<int> members;  // multicast: the group (end nodes other than src)
  MulticastKind multicast = MulticastKind::kHierarchical;
  int64_t bytes = 4;
  int64_t page_offset = 0;  // of the destination address within its page
  bool ack = false;         // write, multicast
  int64_t tag = -1;         // the caller's, reported in the completion
  bool measured = false;    // counts in SssCounters
};

struct SssCompletion {
  int64_t op = -1;
  int64_t tag = -1;
  int64_t started = 0, completed = 0;  // cycles
};

// Counters over the operations the client marks measured (SssOp::measured) and, where said,
// over the whole run.
struct SssCounters {
  int64_t payload_bytes = 0;           // payload of the packets sent
  int64_t wire_bytes = 0;              // their bytes on the wire (header, trailer, route, payload)
  int64_t packets_sent = 0;            // packets the NICs and switch units sent
  int64_t packets_delivered = 0;       // packets (copies) that reached their NIC or unit
  int64_t data_packets_delivered = 0;  // write, reply and multicast data copies in memory
  int64_t upper_link_bytes = 0;        // bytes crossing channels between two switches
  int64_t upper_link_packets = 0;
  int64_t acks_returned = 0;            // acks that reached an operation's initiator
  int64_t ack_packets = 0;              // ack packets sent (every combining step included)
  int64_t dma_bytes = 0;                // bytes the buses moved (whole run)
  int64_t packets_dropped = 0;          // whole run: packets lost anywhere (never expected)
  int64_t receive_ring_peak_bytes = 0;  // whole run: the fullest receive ring
  // Packets (copies) of measured operations that reached their NIC or unit, with the sum
  // of their router-to-router hops and of their network latencies (injection to delivery).
  int64_t measured_packets_delivered = 0;
  int64_t measured_packet_hops = 0;
  int64_t measured_packet_network_cycles = 0;
};

// The model's own checks of a config on its built topology, without building the network:
// topology kind, `source` routing, switching, clock, copying switches, sources and groups,
// and that the largest unicast packet fits a VC buffer and the receive ring. Errors name
// the key.
Status CheckSssConfig(const SimConfig& config, const Topology& topology);

class SssMachine final : public PeGate {
 public:
  // Needs a graph or tree topology, routing.algorithm = "source" and a switching with
  // virtual cut-through or store-and-forward; errors name the keys.
  static Result<std::unique_ptr<SssMachine>> Create(const SimConfig& config);
  ~SssMachine() override;

  // Starts `op` at the current cycle; returns its id (0, 1, ... in submission order).
  // Errors: a bad node, an empty group, a packet larger than the router's VC buffers.
  Result<int64_t> Submit(const SssOp& op);
  // One cycle.
  void Step();
  // When nothing is in flight, moves the clock to `cycle` (no-op otherwise).
  void SkipTo(int64_t cycle);
  bool Idle() const;
  // Operations completed during the last Step().
  const std::vector<SssCompletion>& completions() const { return completions_; }

  int64_t now() const { return net_->now(); }
  Network& network() { return *net_; }
  const GraphTopology& topology() const { return *topo_; }
  const SourceRouting& routing() const { return *routing_; }
  const SssCounters& counters() const { return counters_; }
  double clock_mhz() const { return clock_mhz_; }
  // Copies that reached memory at each (operation, node) pair (tests: after
  // TrackDeliveries(true), before the operations are submitted).
  void TrackDeliveries(bool on) { track_deliveries_ = on; }
  int64_t deliveries(int64_t op, int node) const;
  int64_t in_flight_operations() const { return static_cast<int64_t>(ops_.size()); }

  // The SRAM's send side: a packet starts only when the buffer has a flit's bytes this
  // cycle; its later flits go on at link rate, the buffer owing what they took.
  bool TryInject(int32_t node, int64_t now, bool head) override;

 private:
  struct Packet;
  struct Op;
  struct Run;
  struct Nic;
  SssMachine() = default;
  Status Init(const SimConfig& config);

  // Packets (sss_nic.cc).
  int64_t NewPacket(int64_t op, SssPacketKind kind, int src, int dst, int64_t payload);
  // Queues `packet` for the network (Flush() creates the engine messages after the
  // cycle's events, so that no message number the engine freed this cycle is reused while
  // the events still name it).
  void Send(int64_t packet, int route, int copies);
  void Flush();
  void SendUnicast(int64_t packet, int src, int dst, const std::vector<RouteHop>* path);
  void QueueDma(int node, bool send, int64_t bytes, int64_t packet);
  void AdvanceDma(int node);
  void DmaDone(int node, bool send, int64_t packet);
  void Refill(Nic& nic, int64_t now);
  void OnEjected(const Ejection& e);
  void OnDelivered(const Delivery& d);
  void OnHop(const HopEvent& e);
  void Release(int64_t packet);
  void SendReplies(int64_t request, int node);

  // Operations (sss_ops.cc).
  Status StartWrite(int64_t op, const SssOp& spec);
  Status StartRead(int64_t op, const SssOp& spec);
  Status StartMulticast(int64_t op, const SssOp& spec);
  void StartTx(int run, int tx, int64_t feeder_msg, int feeder_node);
  void AtUnitHead(int run, int unit, int32_t msg);
  void AtUnitTail(int run, int unit, int64_t packet);
  void UnitAck(int run, int unit);
  void SendAck(int64_t op, int run, int from_unit, int from_node, int to_node,
               const std::vector<RouteHop>* path);
  void AckArrived(int64_t packet);
  void PacketInMemory(int64_t packet, int node);
  void MaybeComplete(int64_t op);
  Status CheckFits(int64_t wire, const char* what) const;
  int UnitAt(const Packet& p, int node) const;

  SimConfig config_;
  std::unique_ptr<Network> net_;
  const GraphTopology* topo_ = nullptr;
  SourceRouting* routing_ = nullptr;
  double clock_mhz_ = 0;
  double bus_per_cycle_ = 0, sram_per_cycle_ = 0;  // bytes
  int32_t ring_flits_ = 0;
  std::vector<uint8_t> copy_;  // per node: the switch copies packets

  std::vector<std::unique_ptr<Nic>> nics_;  // per end node
  std::vector<int> dma_active_;             // end nodes with DMA work
  std::vector<std::unique_ptr<Packet>> packets_;
  std::vector<int64_t> free_packets_;
  std::unordered_map<int32_t, int64_t> msg_packet_;  // live engine message -> packet
  std::unordered_map<int64_t, std::unique_ptr<Op>> ops_;
  std::vector<std::unique_ptr<Run>> runs_;
  std::vector<int> free_runs_;
  std::vector<uint8_t> pair_turn_;  // per pair of end nodes: the next route k
  int64_t next_op_ = 0;
  std::vector<SssCompletion> completions_;
  std::vector<int64_t> outbox_;  // packets to hand to the network (Flush)
  SssCounters counters_;
  std::unordered_map<int64_t, int64_t> delivered_;  // (op << 20 | node) -> copies in memory
  bool track_deliveries_ = false;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_SSS_NIC_H_
