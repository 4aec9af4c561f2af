// The Network's interface to the NIC models (nic/sss_nic.h): messages with a route, a
// multicast's copies or a gate, the ejection watch and the PE gate.
#include <algorithm>

#include "sim/engine/network.h"

namespace ukai::sim {

int32_t Network::CreateMessage(const NewMessage& spec) {
  // The NIC models run on one partition (CheckPartitionable()).
  Part& part = parts_[0];
  const int32_t id = messages_->Allocate(part.lane);
  Message& m = (*messages_)[id];
  m.src = spec.src;
  m.dst = spec.dst;
  m.length = spec.flits;
  m.created = now_;
  m.tag = spec.tag;
  m.route = spec.route;
  m.copies = spec.copies;
  m.inject_vc = static_cast<int8_t>(spec.inject_vc);
  if (spec.gated) {
    m.gated = true;
    available_[id] = spec.available;
    gates_ = true;
  }
  ++totals_.backlog;
  ++totals_.messages_created;
  totals_.any_active = 1;
  if (spec.urgent) {
    EnqueueFront(part, id);
  } else {
    EnqueueMessage(part, id);
  }
  return id;
}

void Network::EnqueueFront(Part& part, int32_t id) {
  Message& m = (*messages_)[id];
  Pe& pe = pe_[m.src];
  part.pe_busy[m.src] = 1;
  m.seq = pe.created++;
  m.next = pe.queue_head;
  pe.queue_head = id;
  if (pe.queue_tail < 0) pe.queue_tail = id;
  ++pe.held;
  ++part.c.backlog;
  ++part.c.messages_created;
  part.active_flags[m.src] = 1;
}

void Network::SetAvailable(int32_t msg, int32_t flits) {
  auto it = available_.find(msg);
  if (it == available_.end()) return;
  if (flits < 0) {
    (*messages_)[msg].gated = false;
    available_.erase(it);
  } else {
    it->second = std::max(it->second, flits);
  }
}

void Network::WatchEjections(bool on) { watch_ = on; }

void Network::SetPeGate(PeGate* gate) {
  pe_gate_ = gate;
  gates_ = gates_ || gate != nullptr;
}

Status Network::CheckNoMidwayStop() const {
  const std::string err = fabric_->CheckNoMidwayStop(now_);
  return err.empty() ? Status::Ok() : Status::Internal(err);
}

bool Network::AdvanceIdle(int64_t cycle) {
  if (cycle <= now_ || totals_.any_active || reconfiguring_) return false;
  if (next_event_ < events_.size()) cycle = std::min(cycle, events_[next_event_].cycle);
  if (cycle <= now_) return false;
  now_ = cycle;
  return true;
}

bool Network::MayPush(int32_t node, const Pe& pe) {
  const Message& m = (*messages_)[pe.current];
  if (m.gated) {
    auto it = available_.find(pe.current);
    if (it != available_.end() && pe.seq >= it->second) return false;
  }
  return pe_gate_ == nullptr || pe_gate_->TryInject(node, now_, pe.seq == 0);
}

}  // namespace ukai::sim
