// SssMachine: operations (remote write, read, multicast) and the execution of multicast
// plans (nic/sss_plan.h) — units that forward as they receive, combine acks, convert.
#include <fmt/format.h>

#include <algorithm>

#include "sim/nic/sss_nic.h"
#include "sim/nic/sss_nic_internal.h"

namespace ukai::sim {

Status SssMachine::StartWrite(int64_t id, const SssOp& spec) {
  Op& op = *ops_.at(id);
  const SssConfig& c = config_.sss;
  const std::vector<Piece> pieces =
      SplitTransfer(spec.bytes, spec.page_offset, c.max_payload_bytes, c.page_bytes);
  const int switches = static_cast<int>(routing_->table().Path(spec.src, spec.dst, 0).size()) - 1;
  op.pending_memory = static_cast<int>(pieces.size());
  op.pending_acks = spec.ack ? 1 : 0;
  for (const Piece& piece : pieces) {
    const int64_t packet = NewPacket(id, SssPacketKind::kWrite, spec.src, spec.dst, piece.bytes);
    Packet& p = *packets_[packet];
    // A write that asks for an ack carries the SS-Wait flag's address.
    p.wire = WireBytes(c, switches, spec.ack ? c.ack_bytes : 0, piece.bytes);
    UKAI_RETURN_IF_ERROR(CheckFits(p.wire, "a write packet"));
    SendUnicast(packet, spec.src, spec.dst, nullptr);
    QueueDma(spec.src, true, piece.bytes, packet);
  }
  return Status::Ok();
}

Status SssMachine::StartRead(int64_t id, const SssOp& spec) {
  Op& op = *ops_.at(id);
  const SssConfig& c = config_.sss;
  op.pending_memory = static_cast<int>(
      SplitTransfer(spec.bytes, spec.page_offset, c.max_payload_bytes, c.page_bytes).size());
  const int64_t packet = NewPacket(id, SssPacketKind::kReadRequest, spec.src, spec.dst, 0);
  Packet& p = *packets_[packet];
  p.wire = WireBytes(c, static_cast<int>(routing_->table().Path(spec.src, spec.dst, 0).size()) - 1,
                     0, 0);
  SendUnicast(packet, spec.src, spec.dst, nullptr);
  Send(packet, p.route, 1);
  return Status::Ok();
}

void SssMachine::SendReplies(int64_t request, int node) {
  const Packet& req = *packets_[request];
  Op& op = *ops_.at(req.op);
  const SssConfig& c = config_.sss;
  const int switches = static_cast<int>(routing_->table().Path(node, req.src, 0).size()) - 1;
  for (const Piece& piece :
       SplitTransfer(op.spec.bytes, op.spec.page_offset, c.max_payload_bytes, c.page_bytes)) {
    const int64_t reply = NewPacket(req.op, SssPacketKind::kReadReply, node, req.src, piece.bytes);
    packets_[reply]->wire = WireBytes(c, switches, 0, piece.bytes);
    SendUnicast(reply, node, req.src, nullptr);
    QueueDma(node, true, piece.bytes, reply);  // the target's memory over its bus, then sent
  }
}

Status SssMachine::StartMulticast(int64_t id, const SssOp& spec) {
  Op& op = *ops_.at(id);
  const SssConfig& c = config_.sss;
  Result<McastPlan> plan = BuildMulticastPlan(*topo_, routing_->table(), c, copy_, spec.multicast,
                                              spec.src, spec.members);
  if (!plan.ok()) return plan.status();
  const std::vector<Piece> pieces =
      SplitTransfer(spec.bytes, spec.page_offset, c.max_payload_bytes, c.page_bytes);
  int64_t biggest = 0;
  for (const Piece& piece : pieces) biggest = std::max<int64_t>(biggest, piece.bytes);
  for (const McastTx& tx : plan->txs) {
    UKAI_RETURN_IF_ERROR(
        CheckFits(WireBytes(c, tx.switches, tx.extra, biggest), "a multicast packet"));
  }
  op.pending_memory = static_cast<int>(pieces.size()) * plan->members;
  op.pending_acks = static_cast<int>(pieces.size()) * plan->source_acks;
  for (const Piece& piece : pieces) {
    int run;
    if (!free_runs_.empty()) {
      run = free_runs_.back();
      free_runs_.pop_back();
    } else {
      run = static_cast<int>(runs_.size());
      runs_.push_back(nullptr);
    }
    runs_[run] = std::make_unique<Run>();
    op.runs.push_back(run);
    Run& r = *runs_[run];
    r.op = id;
    r.payload = piece.bytes;
    r.plan = *plan;
    r.acks_got.assign(r.plan.units.size(), 0);
    // The source's bus brings the data into the buffer once; then the plan starts.
    Nic& nic = *nics_[spec.src];
    nic.Queue({true, piece.bytes, -1, run});
    if (!nic.listed) {
      nic.listed = true;
      dma_active_.push_back(spec.src);
    }
  }
  return Status::Ok();
}

int SssMachine::UnitAt(const Packet& p, int node) const {
  if (p.run < 0 || p.tx < 0) return -1;
  const McastPlan& plan = runs_[p.run]->plan;
  const McastTx& tx = plan.txs[p.tx];
  if (!tx.tree) return tx.to_unit;
  for (int u : tx.leaves) {
    if (plan.units[u].node == node) return u;
  }
  return -1;
}

void SssMachine::StartTx(int run, int tx_index, int64_t feeder_msg, int feeder_node) {
  Run& r = *runs_[run];
  const McastTx& tx = r.plan.txs[tx_index];
  const int from_node =
      tx.from == kPlanSource ? ops_.at(r.op)->spec.src : r.plan.units[tx.from].node;
  const int64_t packet = NewPacket(r.op, tx.kind, from_node, tx.tree ? -1 : tx.dst, r.payload);
  Packet& p = *packets_[packet];
  p.run = run;
  p.tx = tx_index;
  p.wire = WireBytes(config_.sss, tx.switches, tx.extra, r.payload);
  int copies = 1;
  if (tx.tree) {
    p.dynamic = routing_->AddTree(tx.nodes);
    p.route = p.dynamic;
    copies = static_cast<int>(tx.leaves.size());
  } else {
    SendUnicast(packet, from_node, tx.dst, tx.table ? nullptr : &tx.path);
  }
  if (feeder_msg >= 0) {
    // Cut-through through the unit: the copy goes out as the feeding packet comes in, ahead
    // of what the unit's PE has queued.
    const int64_t feeder = msg_packet_.at(static_cast<int32_t>(feeder_msg));
    packets_[feeder]->feeds.try_emplace(feeder_node);
    p.feeder = feeder;
    p.feeder_node = feeder_node;
    p.urgent = true;
  }
  Send(packet, p.route, copies);
}

void SssMachine::AtUnitHead(int run, int unit, int32_t msg) {
  const McastUnit& u = runs_[run]->plan.units[unit];
  const std::vector<int> sends = u.sends;
  for (int tx : sends) StartTx(run, tx, msg, u.node);
}

void SssMachine::AtUnitTail(int run, int unit, int64_t packet) {
  Run& r = *runs_[run];
  const McastUnit& u = r.plan.units[unit];
  if (u.member) {
    if (track_deliveries_) ++delivered_[r.op << 20 | u.node];
    QueueDma(u.node, false, r.payload, packet);
  }
  // A member's ack (or the last of a chain's, with the others in it) leaves as its tail
  // arrives; a unit's after the acks it combines.
  if (u.ack_to != kNoAck && u.acks_expected == 0) UnitAck(run, unit);
}

void SssMachine::UnitAck(int run, int unit) {
  Run& r = *runs_[run];
  const McastUnit& u = r.plan.units[unit];
  const Op& op = *ops_.at(r.op);
  const int to_node = u.ack_to == kPlanSource ? op.spec.src : r.plan.units[u.ack_to].node;
  const int64_t packet =
      NewPacket(r.op, SssPacketKind::kAck, u.node, to_node, config_.sss.ack_bytes);
  Packet& p = *packets_[packet];
  p.run = run;
  p.ack_unit = u.ack_to;
  const std::vector<RouteHop>* path = u.ack_path.empty() ? nullptr : &u.ack_path;
  const int switches =
      path != nullptr ? SwitchesOn(*topo_, *path, to_node)
                      : static_cast<int>(routing_->table().Path(u.node, to_node, 0).size()) - 1;
  p.wire = WireBytes(config_.sss, switches, 0, config_.sss.ack_bytes);
  SendUnicast(packet, u.node, to_node, path);
  Send(packet, p.route, 1);
}

void SssMachine::AckArrived(int64_t packet) {
  const Packet& p = *packets_[packet];
  if (p.ack_unit >= 0) {  // a switch's unit combines it
    Run& r = *runs_[p.run];
    if (++r.acks_got[p.ack_unit] == r.plan.units[p.ack_unit].acks_expected) {
      UnitAck(p.run, p.ack_unit);
    }
    return;
  }
  auto it = ops_.find(p.op);
  if (it == ops_.end()) return;
  Op& op = *it->second;
  if (op.measured) ++counters_.acks_returned;
  --op.pending_acks;
  MaybeComplete(p.op);
}

void SssMachine::PacketInMemory(int64_t packet, int node) {
  const Packet& p = *packets_[packet];
  auto it = ops_.find(p.op);
  if (it == ops_.end()) return;
  Op& op = *it->second;
  if (op.measured) ++counters_.data_packets_delivered;
  if (p.run < 0 && track_deliveries_) ++delivered_[p.op << 20 | node];
  --op.pending_memory;
  // A write's ack follows the access: the target answers once all of it is in memory.
  if (op.spec.kind == SssOp::Kind::kWrite && op.spec.ack && op.pending_memory == 0) {
    const int64_t ack =
        NewPacket(p.op, SssPacketKind::kAck, node, op.spec.src, config_.sss.ack_bytes);
    Packet& a = *packets_[ack];
    a.ack_unit = kPlanSource;
    a.wire = WireBytes(config_.sss,
                       static_cast<int>(routing_->table().Path(node, op.spec.src, 0).size()) - 1, 0,
                       config_.sss.ack_bytes);
    SendUnicast(ack, node, op.spec.src, nullptr);
    Send(ack, a.route, 1);
  }
  MaybeComplete(p.op);
}

void SssMachine::MaybeComplete(int64_t id) {
  auto it = ops_.find(id);
  if (it == ops_.end()) return;
  Op& op = *it->second;
  // Done when all its data is in memory and, with acks, the initiator has them (a write's
  // ack comes after its data; a multicast member acks the packet's arrival at its NIC).
  const bool done = op.pending_memory == 0 && op.pending_acks == 0;
  if (done && !op.completed) {
    op.completed = true;
    completions_.push_back({id, op.spec.tag, op.started, now()});
  }
  if (!done) return;
  for (int run : op.runs) {
    runs_[run].reset();
    free_runs_.push_back(run);
  }
  ops_.erase(it);
}

}  // namespace ukai::sim
