// Barriers and small allreduces in the group's shared slots (slots.h): the operations'
// side (CollOp) and the group's (GroupState: the queue of slot operations, the slot rule).
#include <cstring>
#include <string>

#include "rt/coll/coll_op.h"
#include "rt/coll/group_state.h"
#include "ukai/rt/runtime.hpp"

namespace ukai::rt::internal {

// ---- CollOp ----

uint64_t SlotSignatureOf(const OpSignature& s) {
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
  if (init_.counters) init_.counters->CountSlotOp();
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
  uint64_t read = 0;  // seq + 1 of the last operation completed here on the contributions
  uint64_t watch = 0;
  while (!slot_queue_.empty()) {
    CollOp* op = slot_queue_.front().get();  // the queue holds it until pop_front
    if (!op->finished()) {
      if (!op->slot_written()) {
        if (!SlotMayWrite()) break;
        op->WriteSlot(*slots_, slot_buffer_);
        slot_held_[slot_buffer_] = uint64_t{op->seq()} + 1;
        slot_buffer_ ^= 1;
      }
      if (!op->ReadSlots(*slots_, out)) {
        watch = static_cast<uint64_t>(op->slot_missing()) << 33 | (uint64_t{op->seq()} + 1);
        break;
      }
      read = uint64_t{op->seq()} + 1;
    }
    slots_->SetDone(rank_, op->seq());
    if (op->slot_written()) slot_prev_ok_ = op->succeeded();
    EraseOp(op->seq());
    slot_queue_.pop_front();
    ++completed;
  }
  slot_watch_.store(watch, std::memory_order_relaxed);
  if (read != 0) WakeSlotSleepers(static_cast<uint32_t>(read - 1));
  return completed;
}

void GroupState::WakeSlotSleepers(uint32_t seq) {
  if (slot_wake_ && slots_->WakeSleepers(seq)) counters_->slot_wakes.fetch_add(1);
}

int GroupState::SleepOnSlots(const CollOp& op) {
  const uint64_t watch = slot_watch_.load(std::memory_order_relaxed);
  if (!slot_sleep_ || watch == 0 || op.done()) return 0;  // 0: not written yet, or stale
  const auto seq = static_cast<uint32_t>(watch - 1);
  const uint32_t seen = slots_->BeginSleep(seq);
  // After BeginSleep's read-modify-write: either this sees the last contribution, or the
  // member that wrote it sees this sleeper counted in and wakes it (slots.h).
  bool complete = true;
  for (int r = 0; r < size() && complete; ++r) complete = slots_->Has(r, seq);
  bool woken = false;
  if (!complete && !op.done()) {
    counters_->slot_sleeps.fetch_add(1);
    woken = slots_->Sleep(seq, seen, kSlotSleep);
  }
  slots_->EndSleep(seq);
  if (woken) counters_->slot_woken.fetch_add(1);
  return PollSlots();
}

namespace {

// A barrier's signature as MakePost (group.cc) makes it for the slots.
OpSignature SlotBarrierSignature() {
  OpSignature sig;
  sig.coll = Collective::kBarrier;
  sig.algorithm = Algorithm::kDirect;
  sig.type = DataType::kByte;
  return sig;
}

}  // namespace

CollRequest GroupState::PostSlotBarrier() {
  Outbox out;
  std::shared_ptr<CollOp> op;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool plain = !closed_ && troubled_ == 0 && slot_queue_.empty() && aborted_.empty() &&
                       unexpected_.empty() && SlotMayWrite();
    if (plain) {
      const uint32_t seq = next_seq_++;
      const OpSignature sig = SlotBarrierSignature();
      const uint64_t packed = SlotSignatureOf(sig);
      slots_->Write(rank_, slot_buffer_, seq, packed, nullptr, 0);
      slot_held_[slot_buffer_] = uint64_t{seq} + 1;
      slot_buffer_ ^= 1;
      int missing = 0;  // the first member whose contribution is not there (or differs)
      bool differs = false;
      for (uint64_t theirs = 0; missing < size(); ++missing) {
        if (missing == rank_) continue;
        if (slots_->Find(missing, seq, &theirs) == nullptr) break;
        if (theirs != packed) {
          differs = true;
          break;
        }
      }
      if (missing == size()) {  // this member came last: the barrier is complete
        slots_->SetDone(rank_, seq);
        WakeSlotSleepers(seq);
        slot_prev_ok_ = true;
        counters_->CountSlotOp();
        if (slot_done_ == nullptr) slot_done_ = CollOp::Failed(&runtime(), Status::Ok());
        return CollRequest(slot_done_);
      }
      op = SlotBarrierOp(seq);
      op->SlotWritten(missing);
      ops_.emplace_back(seq, op);
      slot_queue_.push_back(op);
      slot_watch_.store(static_cast<uint64_t>(missing) << 33 | (uint64_t{seq} + 1),
                        std::memory_order_relaxed);
      if (differs) PollSlotsLocked(&out);  // fails it now and tells the others, as Post does
    }
  }
  Flush(&out);
  if (op == nullptr) {  // the general way: the same operation, with every check of Post
    PostArgs p;
    p.args.coll = Collective::kBarrier;
    p.args.n = size();
    p.args.rank = rank_;
    p.args.algorithm = Algorithm::kDirect;
    p.sig = SlotBarrierSignature();
    p.slot = true;
    return Post(p);
  }
  return CollRequest(std::move(op));
}

std::shared_ptr<CollOp> GroupState::SlotBarrierOp(uint32_t seq) {
  for (auto& spare : spare_) {
    if (spare.use_count() == 1 && spare->done()) {
      spare->ResetSlotBarrier(seq, SlotBarrierSignature(), oversubscribed_, no_schedule_);
      return spare;
    }
  }
  PostArgs p;
  p.sig = SlotBarrierSignature();
  p.slot = true;
  return MakeOp(p, seq, no_schedule_);
}

int GroupState::AwaitSlots(const CollOp& op, bool force) {
  for (int k = 0; k < kSlotPeeks && !op.done(); ++k) {
    const uint64_t watch = slot_watch_.load(std::memory_order_relaxed);
    if (watch == 0 ||
        slots_->Has(static_cast<int>(watch >> 33), static_cast<uint32_t>(watch - 1))) {
      return PollSlots();
    }
  }
  return op.done() || !force ? 0 : PollSlots();
}

}  // namespace ukai::rt::internal
