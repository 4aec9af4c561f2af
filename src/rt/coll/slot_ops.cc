// Barriers and small allreduces in the group's shared slots (slots.h): the operations'
// side (CollOp) and the group's (GroupState: the queue of slot operations, the slot rule).
#include <cstring>
#include <string>

#include "rt/coll/coll_op.h"
#include "rt/coll/group_state.h"
#include "ukai/rt/runtime.hpp"

namespace ukai::rt::internal {

// ---- CollOp ----

uint64_t CollOp::SlotSignature() const {
  const OpSignature& s = init_.sig;
  return static_cast<uint64_t>(s.coll) | static_cast<uint64_t>(s.type) << 8 |
         static_cast<uint64_t>(s.op) << 16 | (s.count & 0xffffffffu) << 32;
}

Status CollOp::SlotMismatch(int rank, const std::string& theirs) const {
  return Status::InvalidArgument("mismatched collective #" + std::to_string(init_.seq) +
                                 " of group " + std::to_string(init_.group_id) + ": rank " +
                                 std::to_string(rank) + " called " + theirs + ", rank " +
                                 std::to_string(init_.rank) + " (here) called " +
                                 init_.sig.Describe() + " in shared slots");
}

void CollOp::WriteSlot(coll::SlotArea& area, int buffer) {
  const uint64_t bytes = init_.sig.coll == Collective::kAllreduce ? init_.send_bytes : 0;
  area.Write(init_.rank, buffer, init_.seq, SlotSignature(), init_.send, bytes);
  slot_written_ = true;
}

bool CollOp::ReadSlots(const coll::SlotArea& area, Outbox* out) {
  const uint64_t mine = SlotSignature();
  for (; slot_next_ < init_.group_size; ++slot_next_) {
    uint64_t sig = 0;
    if (area.Find(slot_next_, init_.seq, &sig) == nullptr) return false;
    if (sig != mine) {
      OpSignature theirs = init_.sig;
      theirs.coll = static_cast<Collective>(sig & 0xff);
      theirs.type = static_cast<DataType>((sig >> 8) & 0xff);
      theirs.op = static_cast<ReduceOp>((sig >> 16) & 0xff);
      theirs.count = sig >> 32;
      Fail(SlotMismatch(slot_next_, theirs.Describe() + " in shared slots"), true, out);
      return true;
    }
  }
  // Every contribution is there: combine in rank order (the serial order, as `direct`).
  const uint64_t bytes = init_.sig.coll == Collective::kAllreduce ? init_.send_bytes : 0;
  if (bytes != 0) {
    uint64_t sig = 0;
    auto* recv = static_cast<uint8_t*>(init_.recv);
    std::memcpy(recv, area.Find(0, init_.seq, &sig), bytes);
    for (int r = 1; r < init_.group_size; ++r) {
      combiner_.Apply(recv, area.Find(r, init_.seq, &sig), recv, bytes);
    }
  }
  if (init_.counters) init_.counters->slot_ops.fetch_add(1, std::memory_order_relaxed);
  Finish(Status::Ok(), out);
  return true;
}

void CollOp::Poll() const {
  if (done()) return;
  init_.runtime->Progress();
  if (!init_.slot) return;
  if (const std::shared_ptr<GroupState> group = init_.group.lock()) group->PollSlots();
}

// ---- GroupState ----

int GroupState::PollSlots() {
  Outbox out;
  int completed = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (slot_queue_.empty()) return 0;
    completed = PollSlotsLocked(&out);
  }
  Flush(&out);
  return completed;
}

bool GroupState::SlotMayWrite() const {
  const uint64_t held = slot_held_[slot_buffer_];  // what the write would overwrite
  if (held == 0 || slot_prev_ok_) return true;     // everyone wrote the operation after it
  for (int r = 0; r < size(); ++r) {
    if (r != rank_ && slots_->Latest(r) <= held && slots_->Done(r) < held) return false;
  }
  return true;
}

int GroupState::PollSlotsLocked(Outbox* out) {
  int completed = 0;
  while (!slot_queue_.empty()) {
    const std::shared_ptr<CollOp> op = slot_queue_.front();
    if (!op->finished()) {
      if (!op->slot_written()) {
        if (!SlotMayWrite()) break;
        op->WriteSlot(*slots_, slot_buffer_);
        slot_held_[slot_buffer_] = uint64_t{op->seq()} + 1;
        slot_buffer_ ^= 1;
      }
      if (!op->ReadSlots(*slots_, out)) break;
    }
    slots_->SetDone(rank_, op->seq());
    if (op->slot_written()) slot_prev_ok_ = op->succeeded();
    slot_queue_.pop_front();
    EraseOp(op->seq());
    ++completed;
  }
  return completed;
}

}  // namespace ukai::rt::internal
