// GatewayNic: the Ethernet NIC on an I/O node's router (gateway patent Fig. 7B): transmit
// unit 201, address table 202, receive unit 203, setting unit 204. It works on encoded
// bytes: interconnect packets in the layout of wire/gateway_packet.h, Ethernet frames as
// on the wire (without preamble; with the FCS). No CPU is involved (the patent's point);
// the Fig. 1 baseline's CPU cost is modelled by the Gateway (gateway.h).
//
// Transmit (Figs. 9-10): S1 = S11 extract source node, source MAC and the return detour
// (external->internal) from the packet's command block; S12 look the MAC up; S13 all three
// equal? (no row counts as "not equal"); S14 row exists? S15 overwrite node and detour /
// S16 add a row; S17 keep the Ethernet frame (strip parts A and B); S2 append the FCS;
// S3 send. With detour learning off the detour column is left to the setting unit.
// Receive (Figs. 12-13): S21 take the frame; S22 = S31 compute the CRC, S32 compare with
// the FCS, S33 discard on mismatch (counted); S34 look the destination MAC up, S35 row?
// S36 node + detour / S37 all compute nodes (broadcast); S23 build the packet (node address
// and detour in the routing header; none for a broadcast); S24 send.
// Every call appends the steps it took to a trace (tests check the order).
//
// Thread safety: none; owned by the Gateway.
#ifndef UKAI_SIM_NIC_GATEWAY_NIC_H_
#define UKAI_SIM_NIC_GATEWAY_NIC_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/nic/address_table.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {

// What the receive unit made of an inbound frame.
struct InboundPacket {
  bool discarded = false;       // S33: bad FCS
  bool broadcast = false;       // S37: unknown destination MAC
  int32_t node = -1;            // S36: destination node
  std::vector<int32_t> detour;  // S36: via nodes (may be empty)
  std::vector<uint8_t> bytes;   // S23: the encoded interconnect packet (empty if discarded)
};

class GatewayNic {
 public:
  // `node`: the I/O node this NIC sits on; `learn_detours`: keep the detours of outgoing
  // packets in the table (nic.detours = learned); otherwise the transmit unit learns MAC
  // -> node only and leaves a row's detour as the setting unit wrote it.
  GatewayNic(int32_t node, bool learn_detours) : node_(node), learn_detours_(learn_detours) {}

  // Transmit unit: `packet` is an encoded outbound packet (ID = NIC, with a command block).
  // Returns the Ethernet frame with its FCS, or kParseError/kInvalidArgument for a packet
  // the NIC cannot take (undecodable, no command block, not addressed to its NIC).
  Result<std::vector<uint8_t>> Transmit(std::span<const uint8_t> packet);

  // Receive unit: `frame` as received; `has_fcs`: it ends in its FCS (checked, S31-S33),
  // else it is taken as good (a capture without FCS). Frames shorter than 14 bytes (+4)
  // are discarded too (counted as FCS discards: the check cannot pass).
  InboundPacket Receive(std::span<const uint8_t> frame, bool has_fcs);
  // The same into `*out`, reusing the capacity of its vectors (the Gateway's per-frame
  // path: no allocation once they are large enough).
  void Receive(std::span<const uint8_t> frame, bool has_fcs, InboundPacket* out);

  // Setting unit: writes a row (management node's table-update command, or pre-loading).
  void Set(const AddressRow& row) {
    StartCall();
    trace_.push_back("set");
    table_.Install(row);
  }

  int32_t node() const { return node_; }
  const AddressTable& table() const { return table_; }
  int64_t frames_transmitted() const { return frames_transmitted_; }
  int64_t frames_received() const { return frames_received_; }
  int64_t fcs_discarded() const { return fcs_discarded_; }
  int64_t broadcasts() const { return broadcasts_; }
  // Steps taken so far ("S11", "S13:no", "S16", ...), at least those of the last call: a
  // call that finds more than kTraceLimit steps recorded empties the trace first, so a long
  // run's memory stays flat. ClearTrace() empties it.
  std::vector<std::string> trace() const { return {trace_.begin(), trace_.end()}; }
  void ClearTrace() { trace_.clear(); }
  static constexpr size_t kTraceLimit = 1024;

 private:
  int32_t node_;
  bool learn_detours_;
  AddressTable table_;
  int64_t frames_transmitted_ = 0, frames_received_ = 0, fcs_discarded_ = 0, broadcasts_ = 0;
  void StartCall() {
    if (trace_.size() > kTraceLimit) trace_.clear();
  }
  std::vector<const char*> trace_;  // string literals
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_NIC_GATEWAY_NIC_H_
