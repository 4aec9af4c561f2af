#include "sim/workload/workload.h"

#include <algorithm>
#include <utility>

#include "sim/routing/route_state.h"

namespace ukai::sim {

Workload::Workload(const WorkloadOptions& options) : options_(options) {
  options_.flit_bytes = std::max(1, options_.flit_bytes);
  options_.packet_flits = std::max(1, options_.packet_flits);
}

Workload::Slot* Workload::Find(WorkMessageId id) {
  const uint64_t slot = id & 0xffffffffu;
  if (slot >= slots_.size()) return nullptr;
  Slot& s = slots_[slot];
  return s.live && s.generation == (id >> 32) ? &s : nullptr;
}

const Workload::Slot* Workload::Find(WorkMessageId id) const {
  return const_cast<Workload*>(this)->Find(id);
}

bool Workload::Pending(WorkMessageId id) const { return Find(id) != nullptr; }

WorkMessageId Workload::Add(WorkloadSource* owner, const WorkMessage& m,
                            std::span<const WorkMessageId> after) {
  uint32_t index;
  if (free_ >= 0) {
    index = static_cast<uint32_t>(free_);
    free_ = slots_[index].next_free;
  } else {
    index = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[index];
  s.msg = m;
  s.owner = owner;
  ++s.generation;
  if (s.generation == 0) s.generation = 1;  // ids are never 0
  s.pending = 0;
  s.packets_left = 0;
  s.ready = m.earliest;
  s.created = -1;
  s.seq = next_seq_++;
  s.live = true;
  s.queued = false;
  s.lost = false;
  s.next_free = -1;
  s.log_first = -1;
  s.log_filled = 0;
  s.successors.clear();
  const WorkMessageId id = IdOf(index, s.generation);
  ++live_;
  stats_.max_pending = std::max(stats_.max_pending, live_);
  ++stats_.messages_added;
  for (WorkMessageId on : after) {
    Slot* dep = Find(on);
    if (dep == nullptr || dep == &slots_[index]) continue;  // delivered (or lost) already
    dep->successors.push_back(id);
    ++slots_[index].pending;
  }
  if (slots_[index].pending > 0) {
    ++waiting_;
  } else {
    Enqueue(index);
  }
  return id;
}

bool Workload::AddDependency(WorkMessageId waiter, WorkMessageId on) {
  Slot* w = Find(waiter);
  Slot* dep = Find(on);
  if (w == nullptr || dep == nullptr || w == dep || w->created >= 0) return false;
  dep->successors.push_back(waiter);
  if (w->pending++ == 0) ++waiting_;
  return true;
}

void Workload::Enqueue(uint32_t slot) {
  Slot& s = slots_[slot];
  if (s.queued) return;  // its entry is re-checked when it comes out (CreateMessages)
  s.queued = true;
  ready_.emplace(s.ready, s.seq, slot);
}

void Workload::CreateMessages(int64_t now, Network* net) {
  for (WorkloadSource* source : sources_) {
    Status st = source->Advance(now, this);
    if (!st.ok() && status_.ok()) status_ = std::move(st);
  }
  while (!ready_.empty() && std::get<0>(ready_.top()) <= now) {
    const auto [ready, seq, slot] = ready_.top();
    ready_.pop();
    Slot& s = slots_[slot];
    s.queued = false;
    if (!s.live || s.seq != seq || s.pending > 0 || s.created >= 0) continue;
    if (s.ready != ready) {  // a dependency added since moved it later
      Enqueue(slot);
      continue;
    }
    Create(slot, now, net);
  }
}

void Workload::Create(uint32_t slot, int64_t now, Network* net) {
  Slot& s = slots_[slot];
  s.created = now;
  ++stats_.messages_created;
  const Topology& topology = net->topology();
  if (!topology.NodeAlive(s.msg.src) || !topology.NodeAlive(s.msg.dst)) {
    s.lost = true;  // an end node is faulty: never sent
    Complete(slot, now);
    return;
  }
  const int64_t fb = options_.flit_bytes;
  int64_t flits = std::max<int64_t>(1, (s.msg.bytes + fb - 1) / fb);
  const int64_t per = options_.packet_flits;
  if (options_.keep_packet_log) s.log_first = static_cast<int64_t>(packet_log_.size());
  while (flits > 0) {
    const int f = static_cast<int>(std::min(flits, per));
    flits -= f;
    net->CreateMessage(s.msg.src, s.msg.dst, f, {}, options_.tag_base + static_cast<int64_t>(slot));
    ++s.packets_left;
    ++packets_in_flight_;
    ++stats_.packets_created;
    if (options_.keep_packet_log) {
      packet_log_.push_back({IdOf(slot, s.generation), s.msg.src, s.msg.dst, f, now, -1});
    }
  }
}

void Workload::Delivered(std::span<const Delivery> deliveries, std::span<const int64_t> lost,
                         int64_t now) {
  for (const Delivery& d : deliveries) {
    if (d.tag >= 0) PacketDone(d.tag, &d, d.delivered);
  }
  for (int64_t tag : lost) PacketDone(tag, nullptr, now + 1);
}

void Workload::PacketDone(int64_t tag, const Delivery* d, int64_t cycle) {
  const int64_t index = tag - options_.tag_base;
  if (index < 0 || static_cast<size_t>(index) >= slots_.size()) return;
  const uint32_t slot = static_cast<uint32_t>(index);
  Slot& s = slots_[slot];
  if (!s.live || s.packets_left <= 0) return;
  --packets_in_flight_;
  if (d != nullptr) {
    ++stats_.packets_delivered;
    stats_.packet_latency.Add(d->delivered - d->created);
    stats_.packet_network_latency.Add(static_cast<double>(d->delivered - d->injected));
    stats_.packet_hops.Add(d->hops);
    stats_.flits_delivered += d->length;
    stats_.packets_recovered += (d->routing_state & kRecoveryBit) != 0;
    stats_.packets_table += (d->routing_state & kUsedTableBit) != 0;
    stats_.misrouted_hops += MisroutedHops(d->routing_state);
    if (s.log_first >= 0) {
      packet_log_[static_cast<size_t>(s.log_first + s.log_filled++)].delivered = d->delivered;
    }
  } else {
    ++stats_.packets_lost;
    s.lost = true;
  }
  if (--s.packets_left == 0) Complete(slot, cycle);
}

// The message's last packet is done: release the messages waiting for it (unless it was
// lost), tell its owner, free the slot.
void Workload::Complete(uint32_t slot, int64_t cycle) {
  const WorkMessageId id = IdOf(slot, slots_[slot].generation);
  const WorkMessage m = slots_[slot].msg;
  const bool lost = slots_[slot].lost;
  WorkloadSource* owner = slots_[slot].owner;
  if (lost) {
    ++stats_.messages_lost;
  } else {
    ++stats_.messages_delivered;
    stats_.bytes_delivered += m.bytes;
    stats_.last_delivery = std::max(stats_.last_delivery, cycle);
    const int64_t latency = cycle - slots_[slot].created;
    stats_.message_latency.Add(latency);
    WorkClassFigures& k = stats_.classes[m.klass];
    ++k.messages;
    k.bytes += m.bytes;
    k.latency.Add(latency);
    std::vector<WorkMessageId> successors = std::move(slots_[slot].successors);
    for (WorkMessageId next : successors) {
      Slot* w = Find(next);
      if (w == nullptr) continue;
      w->ready = std::max(w->ready, cycle + w->msg.delay);
      if (--w->pending == 0) {
        --waiting_;
        Enqueue(static_cast<uint32_t>(next & 0xffffffffu));
      }
    }
    successors.clear();
    slots_[slot].successors = std::move(successors);  // keep the capacity for reuse
  }
  // Free the slot before the owner's callback, which may add messages (and reuse it).
  Slot& s = slots_[slot];
  s.live = false;
  s.next_free = free_;
  free_ = static_cast<int32_t>(slot);
  --live_;
  if (owner != nullptr) {
    if (lost) {
      owner->Lost(id, m, cycle, this);
    } else {
      owner->Delivered(id, m, cycle, this);
    }
  }
}

int64_t Workload::NextCycle(int64_t now) const {
  int64_t next = ready_.empty() ? kNever : std::max(now, std::get<0>(ready_.top()));
  for (const WorkloadSource* source : sources_) next = std::min(next, source->NextCycle());
  return std::max(next, now);
}

bool Workload::Done() const {
  if (live_ > 0) return false;
  for (const WorkloadSource* source : sources_) {
    if (!source->Finished()) return false;
  }
  return true;
}

bool Workload::Stuck(int64_t now) const {
  return !Done() && packets_in_flight_ == 0 && NextCycle(now) == kNever;
}

}  // namespace ukai::sim
