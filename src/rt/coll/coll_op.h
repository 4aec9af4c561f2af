// CollOp: one member's execution of one collective: its schedule, buffers and progress.
//
// An operation is created by GroupState::Post, which holds it (ops_) until it finished. All
// its methods but Wait/Test/TryComplete run under the group's lock; they never send: the
// messages they make go into an Outbox that the caller sends after unlocking (a send may
// block on flow control, and a blocked sender must not hold the lock the progress engine
// needs). Completion: `finished_` is decided under the lock; `done_` (what Wait sees) is set
// once the operation finished and every message it put into an outbox was handed to the
// runtime (in_flight_ == 0): by Finish, or by the Flush that hands over its last message.
//
// Large messages (rendezvous_bytes and more; an alltoall's from exchange_eager_bytes): the
// sender announces them (kRts) and sends the data when the receiver answers kCts, which it
// does once the receiving step is ready (its round running, its turn in the ordered
// sequence), so data never wait in a copy; the sending step completes then. On one host
// with single copy the receiver reads them from the sender's buffer instead (kFin) when
// the step is ready, or, for a combining step announced before its turn, at once into a
// copy that waits for the turn (ReadEarly): the same bytes moved (a combination reads into
// a scratch anyway), but the sender is released and the copy overlaps the wait.
//
// Shared copies (GroupOptions::shared_copy_bytes): a large step of a broadcast, scatter or
// gather between members proven on one host is copied by both sides at once. The receiver
// asks the sender (kPut, with its destination address) to write the first half
// (SharedHalf) into its buffer with process_vm_writev, and reads the second half itself
// outside the group lock (Outbox::reads, done by GroupState::Flush after the kPut left),
// then tells the sender it read (kFin). The sender answers kWrote with the bytes it wrote
// (0: it sent them as data instead, or its operation had ended). Until that answer (or the
// sender's failure or departure) the receiving operation does not become done, even when it
// failed meanwhile, so the sender never writes into a buffer its owner got back.
#ifndef UKAI_RT_COLL_COLL_OP_H_
#define UKAI_RT_COLL_COLL_OP_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rt/coll/coll_wire.h"
#include "rt/coll/cross_memory.h"
#include "rt/coll/reduce_kernels.h"
#include "rt/coll/schedule.h"
#include "rt/coll/slots.h"
#include "rt/coll/small_vec.h"
#include "ukai/rt/group.hpp"

namespace ukai::rt::internal {

class CollOp;
class GroupState;

// Messages made under the group lock, sent after it.
struct OutMsg {
  int dst = 0;
  Buffer buffer;
  std::shared_ptr<CollOp> op;  // the operation it belongs to (null: a group message)
};
// A shared copy's own half: read from the sender's memory after the messages left.
struct SharedRead {
  std::shared_ptr<CollOp> op;
  int step = 0;
  coll::MemberProof from;
  uint64_t remote = 0;  // the sender's address
  uint8_t* dst = nullptr;
  uint64_t length = 0;
};
struct Outbox {
  coll::SmallVec<OutMsg, 4> messages;
  std::vector<SharedRead> reads;
};

// What a group's operations did, for tests and benchmarks. Thread safe (relaxed counters).
struct CollCounters {
  std::atomic<uint64_t> shared_reads{0};   // shared copies received here (our half read)
  std::atomic<uint64_t> shared_writes{0};  // shared copies' halves written by us
  std::atomic<uint64_t> slot_ops{0};       // barriers and allreduces done in shared slots
  std::atomic<uint64_t> announced{0};      // large messages announced (rendezvous, kRts)
  std::atomic<uint64_t> early_reads{0};    // announced data read before their turn here
  // Sleeping slot waiters (GroupOptions::slot_wait): sleeps begun here, sleeps here that a
  // wake ended (not the timeout), wakes sent by this member to sleepers.
  std::atomic<uint64_t> slot_sleeps{0};
  std::atomic<uint64_t> slot_woken{0};
  std::atomic<uint64_t> slot_wakes{0};
  // slot_ops + 1: counted under the group's lock only, so without a locked instruction.
  void CountSlotOp() {
    slot_ops.store(slot_ops.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

// The part of a shared copy of `length` bytes that the sender writes: [0, SharedHalf).
inline uint64_t SharedHalf(uint64_t length) { return (length / 2) & ~uint64_t{63}; }

// What an operation was called with, as it travels in every message's header (so that
// members can tell a mismatch) and as the error messages name it.
struct OpSignature {
  Collective coll = Collective::kBarrier;
  Algorithm algorithm = Algorithm::kDirect;
  DataType type = DataType::kByte;
  ReduceOp op = static_cast<ReduceOp>(0);
  int root = 0;
  uint64_t count = 0;
  // "allreduce of 10 int32 (sum, ring)", "broadcast of 8 byte from root 2 (binomial)".
  std::string Describe() const;
};

// The signature as a shared slot carries it (collective, type, operation, count).
uint64_t SlotSignatureOf(const OpSignature& s);

class CollOp : public std::enable_shared_from_this<CollOp> {
 public:
  struct Init {
    std::weak_ptr<GroupState> group;
    Runtime* runtime = nullptr;
    uint64_t group_id = 0;
    int rank = 0;
    int group_size = 1;
    uint32_t seq = 0;
    OpSignature sig;
    std::shared_ptr<const coll::Schedule> schedule;
    const void* send = nullptr;
    void* recv = nullptr;
    bool in_place = false;    // send aliases recv: work from a private copy of send
    uint64_t send_bytes = 0;  // the part of `send` the schedule reads
    // The combining kernel (reductions); a user function lives in `user` for the operation.
    coll::Combiner combiner;
    std::shared_ptr<const Reduction> user;
    uint64_t rendezvous_bytes = 0;
    uint64_t exchange_eager_bytes = 0;  // alltoall blocks below this: never rendezvous
    uint64_t segment_bytes = uint64_t{4} << 20;
    // Single copy (cross_memory.h): announce our addresses; read the members proven here.
    bool single_copy = false;
    std::shared_ptr<const std::vector<coll::MemberProof>> proofs;
    // Steps of broadcast/scatter/gather from this size on are shared copies (0: never).
    uint64_t shared_copy_bytes = 0;
    std::shared_ptr<CollCounters> counters;
    // Done in the group's shared slots (GroupState::PollSlots), not by a schedule.
    bool slot = false;
    // More members on this host than CPUs: Wait gives the CPU away whenever a progress pass
    // found nothing (Open MPI's yield_when_idle), so the member that has work runs.
    bool yield_when_idle = false;
  };
  explicit CollOp(Init init);
  // Makes this (finished, unreferenced) object the start of a new operation: GroupState keeps
  // a few finished operations for reuse instead of allocating one per collective.
  void Reset(Init init);
  // As Reset, for a barrier in the group's shared slots (GroupState::PostSlotBarrier): keeps
  // the fields every operation of the group shares (this object was made by the same group)
  // and sets the rest, without copying an Init.
  void ResetSlotBarrier(uint32_t seq, const OpSignature& sig, bool yield_when_idle,
                        const std::shared_ptr<const coll::Schedule>& empty);
  // An operation that completed with `status` already (argument errors).
  static std::shared_ptr<CollOp> Failed(Runtime* runtime, Status status);

  // ---- under the group lock ----
  // Starts round 0 (and the background steps).
  void Start(Outbox* out);
  // A message of this operation (its header checked against the signature here).
  void OnMessage(const coll::Header& h, std::span<const uint8_t> body, Outbox* out);
  // Ends the operation with `why` (a no-op once finished). `tell` sends every other member
  // an abort for it (argument mismatches, local errors), not for member failures.
  void Fail(const Status& why, bool tell, Outbox* out);
  // Ends the operation with `s` (OK included) without aborting anyone: point-to-point
  // operations, which have no schedule, end this way. A no-op once finished.
  void End(const Status& s, Outbox* out) {
    if (!finished_) Finish(s, out);
  }
  bool finished() const { return finished_; }
  // A shared copy's read of step `step` ended with `read` (called by GroupState::Flush).
  void SharedReadDone(int step, const Status& read, Outbox* out);
  // ---- shared slots (slot_ops.cc), under the group lock ----
  bool slot() const { return init_.slot; }
  bool slot_written() const { return slot_written_; }
  bool succeeded() const { return finished_ && status_.ok(); }
  // Publishes this member's contribution in its slot `buffer`.
  void WriteSlot(coll::SlotArea& area, int buffer);
  // The caller published it (GroupState::PostSlotBarrier) and saw the contributions of the
  // members below `missing`.
  void SlotWritten(int missing) {
    slot_written_ = true;
    slot_next_ = missing;
  }
  // Reads the members' contributions; true once the operation finished (the result in recv,
  // or a mismatch of signatures: failed, the others told).
  bool ReadSlots(const coll::SlotArea& area, Outbox* out);
  // After ReadSlots returned false: the member whose contribution is missing (slots.h's
  // SlotArea::Has tells when it is there).
  int slot_missing() const { return slot_next_; }
  // Shared copies asked of member `peer` whose answer will not come (it failed or left).
  void ReleasePuts(int peer);
  // Whether a shared copy still waits for the sender's answer (the operation may be finished:
  // GroupState keeps it until the answer comes, see above).
  bool awaiting_puts() const { return puts_out_ > 0; }
  // Point-to-point sends put their messages into the outbox through this.
  void Queue(int dst, Buffer buffer, Outbox* out) {
    Queued();
    out->messages.push_back(OutMsg{dst, std::move(buffer), shared_from_this()});
  }
  uint32_t seq() const { return init_.seq; }
  DataType type() const { return init_.sig.type; }

  // ---- any thread ----
  // Sets done_ when finished and nothing is in flight; wakes waiters. Safe to call often.
  void TryComplete();
  void Dispatched() { in_flight_.fetch_sub(1, std::memory_order_acq_rel); }
  // Counts a message of this operation put into an outbox.
  void Queued() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  bool done() const { return done_.load(std::memory_order_acquire); }
  Status Wait(std::chrono::milliseconds timeout) const;
  // One progress pass of the runtime (and of the group's slots for a slot operation).
  void Poll() const;
  Status status() const;  // valid once done()
  Runtime* runtime() const { return init_.runtime; }

 private:
  struct Piece {
    uint64_t offset;
    std::vector<uint8_t> bytes;
  };
  struct StepState {
    uint64_t got = 0;       // recv: bytes applied
    bool any = false;       // recv: a segment arrived (a 0-byte message is one segment)
    bool ready = false;     // recv: may take its data now
    bool complete = false;  // recv, send, ordered local step
    bool rts = false;       // recv: the sender announced a large message
    bool cts_sent = false;
    bool announced = false;  // send: its kRts went out
    uint64_t remote = 0;     // recv: the sender's address of the data (kRts), 0: none
    bool shared = false;     // recv: a shared copy (kPut sent)
    bool put_out = false;    // recv: the sender's kWrote still to come
    bool own_read = false;   // recv: our half was read
    bool put = false;        // send: the receiver's kPut was handled
    bool early = false;      // recv: read before its turn into a stash piece (ReadEarly)
  };
  uint8_t* Ptr(const coll::Region& r);
  const uint8_t* CPtr(const coll::Region& r) const;
  bool Large(const coll::Step& s) const;
  void StartRound(Outbox* out);
  void RunOrdered(Outbox* out);
  void Advance(Outbox* out);
  void MakeReady(int i, Outbox* out);
  void Apply(int i, uint64_t offset, std::span<const uint8_t> bytes);
  void Receive(int i, uint64_t offset, std::span<const uint8_t> bytes, Outbox* out);
  void Execute(const coll::Step& s);
  void Complete(int i);
  void SendData(int i, Outbox* out);
  // Takes a large message announced by a proven member straight from its memory and tells
  // it (kFin); false when it cannot (the caller asks for the data instead). When the
  // member's process is gone the step waits for the runtime's peer event, which fails it.
  bool ReadAnnounced(int i, Outbox* out);
  // A combining step announced before its turn (a later round, or an ordered sequence
  // waiting for a lower rank): reads the data at once into a stash piece and tells the
  // sender (kFin), so the sender is free and the copy is done while this member waits; the
  // combination still happens in the schedule's order. Nothing when it cannot read.
  void ReadEarly(int i, Outbox* out);
  // Starts a shared copy of step i when it qualifies (see above); false when not.
  bool StartSharedCopy(int i, Outbox* out);
  // The sender's side of a kPut / the receiver's of a kWrote.
  void OnPut(int i, const coll::Header& h, Outbox* out);
  void OnWrote(int i, const coll::Header& h, Outbox* out);
  // Completes a shared step once both halves are in, or fails it when the sender's half
  // cannot come.
  void SettleShared(int i, Outbox* out);
  void PutAnswered(int i);
  void SendRange(int i, uint64_t begin, uint64_t end, Outbox* out);
  void Emit(coll::MsgKind kind, int dst, uint32_t tag, uint64_t total, uint64_t offset,
            std::span<const uint8_t> body, Outbox* out);
  void Finish(const Status& s, Outbox* out);
  Status CheckSignature(const coll::Header& h) const;
  // The per-operation state Reset and ResetSlotBarrier start from.
  void ResetProgress();
  // The signature as a slot carries it, and the mismatch errors of slot operations.
  uint64_t SlotSignature() const { return SlotSignatureOf(init_.sig); }
  Status SlotMismatch(int rank, const std::string& theirs) const;

  Init init_;
  coll::Combiner combiner_;
  std::unique_ptr<uint8_t[]> tmp_heap_, send_copy_;
  uint8_t* tmp_ = nullptr;  // the scratch: tmp_small_ when it fits, else tmp_heap_
  uint64_t tmp_capacity_ = 0;
  size_t st_capacity_ = 0;
  alignas(16) uint8_t tmp_small_[64];
  StepState* st_ = nullptr;  // one per schedule step: st_small_ when it fits
  std::unique_ptr<StepState[]> st_heap_;
  StepState st_small_[8];
  // Data that came before their step was ready: (step, piece), in arrival order.
  std::vector<std::pair<int, Piece>> stash_;
  std::vector<std::vector<uint8_t>> spare_;  // ReadEarly's buffers, kept for reuse
  int round_ = 0;
  bool round_started_ = false;
  int pending_round_ = 0;  // steps of the current round not complete
  int pending_bg_ = 0;     // background steps not complete
  uint32_t ordered_next_ = 0;
  int puts_out_ = 0;  // shared copies whose kWrote is still to come (each holds in_flight_)
  bool slot_written_ = false;
  int slot_next_ = 0;  // slot operations: the first member whose contribution was not seen
  bool finished_ = false;
  std::atomic<bool> finished_flag_{false};  // finished_, for TryComplete outside the lock
  Status status_;
  std::atomic<int> in_flight_{0};
  std::atomic<bool> done_{false};
  std::vector<uint8_t> align_scratch_;
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_COLL_COLL_OP_H_
