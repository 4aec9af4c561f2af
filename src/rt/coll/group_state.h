// GroupState: one member's view of one group — the members, the sequence of operations, the
// operations in flight, what the members' failures and departures mean for them, and the
// point-to-point and shrink state. Shared by the Group object, its operations' handles and
// the context's Hub. Locking: mu_ guards everything mutable; operations run under it; sends
// happen after it is released (Flush).
#ifndef UKAI_RT_COLL_GROUP_STATE_H_
#define UKAI_RT_COLL_GROUP_STATE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "rt/coll/coll_op.h"
#include "rt/coll/cross_memory.h"
#include "rt/coll/hub.h"
#include "rt/coll/schedule.h"
#include "rt/coll/select.h"
#include "rt/coll/slots.h"
#include "ukai/rt/group.hpp"

namespace ukai::rt::internal {

// A collective as GroupState::Post takes it, checked by the caller (group.cc).
struct PostArgs {
  coll::CollArgs args;
  OpSignature sig;
  const void* send = nullptr;
  void* recv = nullptr;
  uint64_t send_bytes = 0;
  bool in_place = false;
  bool slot = false;        // done in the group's shared slots (GroupState::PollSlots)
  coll::Combiner combiner;  // reductions: made (and checked) by the caller
  std::shared_ptr<const Reduction> user;  // a user reduction's function, kept alive
  Status error;  // an argument error: the operation fails, and so do the others' (abort)
};

class GroupState : public std::enable_shared_from_this<GroupState> {
 public:
  struct Member {
    Startpoint sp;        // its collectives endpoint
    bool failed = false;  // its runtime failed or left without a goodbye
    bool left = false;    // said goodbye: operations from left_from on cannot complete
    uint32_t left_from = 0;
    Status why;
  };

  GroupState(std::shared_ptr<Hub> hub, uint64_t id, int rank, std::vector<Startpoint> members,
             GroupOptions options, coll::Overrides overrides);

  uint64_t id() const { return id_; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(members_.size()); }
  Runtime& runtime() const { return hub_->runtime(); }
  const std::shared_ptr<Hub>& hub() const { return hub_; }
  const Startpoint& member(int r) const { return members_[r].sp; }
  const GroupOptions& options() const { return options_; }
  const coll::Overrides& overrides() const { return overrides_; }
  const std::string& module() const { return module_; }
  void set_module(std::string m) { module_ = std::move(m); }
  // This member's proof for single-copy reads (its nonce lives in this object).
  coll::MemberProof OwnProof() const;
  // The members proven readable (cross_memory.h), by rank; set at creation.
  void set_proofs(std::vector<coll::MemberProof> proofs);
  // Set at creation (before any operation): the shared slots (slots.h), or null.
  void set_slots(std::unique_ptr<coll::SlotArea> area) {
    slots_ = std::move(area);
    slot_wake_ = slots_ != nullptr && slots_->MaySleep();
    slot_sleep_ = slot_wake_ && sleeps_in_slots();
    const auto forced = overrides_.find(Collective::kBarrier);
    slot_barrier_ =
        slots_ != nullptr && (forced == overrides_.end() || forced->second == Algorithm::kAuto);
  }
  bool shared_slots() const { return slots_ != nullptr; }
  // Runs the slot operations in order as far as the members' slots allow (any thread);
  // returns how many completed.
  int PollSlots();
  // Whether a Barrier with options `o` goes to the shared slots (as MakePost decides: the
  // group has slots, the automatic choice, no forced barrier algorithm).
  bool SlotBarrier(const CollOptions& o) const {
    return slot_barrier_ && o.algorithm == Algorithm::kAuto;
  }
  // Posts a barrier in the shared slots: what Post does for it, without building a PostArgs
  // and an operation's Init (it reuses a finished operation); falls back to Post when other
  // slot operations are queued, or the group has failed members, stashed messages or aborts.
  CollRequest PostSlotBarrier();
  // A waiter's poll of the slots (CollOp::Wait): looks up to kSlotPeeks times at the words
  // the first queued slot operation waits for (no lock, no progress pass) and runs PollSlots
  // once they show; `force`: also when they did not (the watch may be stale: the operation
  // it names failed). Returns how many operations completed.
  int AwaitSlots(const CollOp& op, bool force);
  static constexpr int kSlotPeeks = 64;
  // A waiter that found nothing to do for a while (CollOp::Wait): when this member sleeps
  // in the slots (sleeps_in_slots), it sleeps on the slot area until a member
  // completes a slot operation or kSlotSleep passed, unless the contributions of the
  // operation it waits for are all there; then polls the slots. Returns how many
  // operations completed (0 at once when it does not sleep or has nothing to wait for).
  int SleepOnSlots(const CollOp& op);
  // The longest sleep: a member's failure or departure (a message, a peer event) is seen
  // only by a progress pass, which the waiter runs between two sleeps.
  static constexpr std::chrono::microseconds kSlotSleep{1000};
  // Set at creation: more members on this host than it has CPUs.
  void set_oversubscribed(bool v) { oversubscribed_ = v; }
  bool oversubscribed() const { return oversubscribed_; }
  // Whether this member's waiters sleep in the slots: once the slots are set up (slot_sleep),
  // and as asked (GroupOptions::slot_wait: sleeps_in_slots). A member wakes sleepers when
  // any member asked (slot_wake_).
  bool slot_sleep() const { return slot_sleep_; }
  bool sleeps_in_slots() const { return options_.slot_wait == SlotWait::kSleep; }
  // "group member 2 (runtime 1f.., context 1)".
  std::string MemberName(int r) const;

  // Takes the next sequence number and runs the operation (or fails it: p.error, a failed
  // member, an abort that came first, the group closed).
  CollRequest Post(const PostArgs& p);
  // The sequence number the next operation takes.
  uint32_t next_seq();

  // ---- point-to-point (p2p.cc) ----
  CollRequest PostSend(const PostArgs& p, int dest, int tag, const CollOptions& o);
  CollRequest PostRecv(const PostArgs& p, int source, int tag);

  // ---- shrink (shrink.cc) ----
  // Agrees with the other survivors on the failed set (blocking, up to options().timeout).
  Result<std::vector<int>> AgreeFailed(uint32_t* instance);

  // ---- from the hub ----
  void OnMessage(RuntimeId from, const coll::Header& h, std::span<const uint8_t> body);
  void OnPeerEvent(const PeerEvent& e);
  // The Group object is gone: operations in flight are cancelled, members told (kBye).
  void Close();
  // The context is being destroyed.
  void ContextClosed();

  std::vector<int> FailedMembers();
  const CollCounters& counters() const { return *counters_; }
  // Sends what operations produced (outside mu_); completes finished operations.
  void Flush(Outbox* out);

 private:
  using Key = std::tuple<int, int, uint32_t>;  // p2p: (peer, tag, sequence)
  struct Stashed {
    coll::Header h;
    std::vector<uint8_t> body;
  };
  struct P2pRecv {
    std::shared_ptr<CollOp> op;
    uint8_t* data = nullptr;
    uint64_t bytes = 0;
    uint64_t got = 0;
    bool any = false;
  };
  struct ShrinkInstance {
    bool decided = false;
    std::vector<int> failed;                                  // the decision
    std::map<int, std::pair<bool, std::vector<int>>> states;  // rank -> (decided, its set)
  };

  std::shared_ptr<CollOp> MakeOp(const PostArgs& p, uint32_t seq,
                                 std::shared_ptr<const coll::Schedule> schedule);
  // The cached schedule of `a` (mu_ held), or null.
  std::shared_ptr<const coll::Schedule> CachedSchedule(const coll::CollArgs& a);
  // kUnavailable naming the member when operation `seq` cannot complete, else OK. mu_ held.
  Status MemberProblem(uint32_t seq) const;
  void FailOps(const Status& why, uint32_t from_seq, Outbox* out);
  // Member r failed (or left, `orderly`) for `reason`: every operation fails naming it.
  // mu_ held.
  void MarkFailed(int r, bool orderly, const Status& reason, Outbox* out);
  // PollSlots with mu_ held.
  int PollSlotsLocked(Outbox* out);
  // Whether this member may overwrite its older slot (slots.h's rule). mu_ held.
  bool SlotMayWrite() const;
  // A slot barrier's operation `seq`: a finished one reused, else a new one. mu_ held.
  std::shared_ptr<CollOp> SlotBarrierOp(uint32_t seq);
  // Member r will not answer shared copies any more (failed, left, or this group closed).
  // mu_ held.
  void ReleasePutsOf(int r);
  // A message for an operation that ended here (a shared copy's kPut or kWrote). mu_ held.
  void OnEndedOpMessage(const coll::Header& h, Outbox* out);
  void CloseWith(const Status& why);
  void OnP2p(const coll::Header& h, std::span<const uint8_t> body, Outbox* out);
  void OnRelay(const coll::Header& h, std::span<const uint8_t> body, Outbox* out);
  void DeliverP2p(P2pRecv& r, const coll::Header& h, std::span<const uint8_t> body, Outbox* out);
  // Large direct point-to-point messages (rendezvous, as the collectives' large steps).
  struct P2pSend {
    std::shared_ptr<CollOp> op;
    const uint8_t* data = nullptr;
    coll::Header h;  // the data messages' header (kind kP2p)
  };
  void OnP2pControl(const coll::Header& h, Outbox* out);
  // The receiver of `r` answers the announcement `h`: reads the data from the sender's
  // memory when it can (then kFin), else asks for them (kCts).
  void AnswerAnnouncement(const Key& key, P2pRecv& r, const coll::Header& h, Outbox* out);
  uint64_t Segment() const {
    return options_.segment_bytes == 0 ? uint64_t{4} << 20 : options_.segment_bytes;
  }
  void EmitP2p(coll::MsgKind kind, int dst, const coll::Header& like, Outbox* out,
               const std::shared_ptr<CollOp>& op = nullptr);
  void OnShrink(const coll::Header& h, std::span<const uint8_t> body, Outbox* out);
  std::vector<int> KnownFailed() const;
  void EmitGroup(coll::MsgKind kind, int dst, uint32_t seq, uint32_t tag,
                 std::span<const uint8_t> body, Outbox* out);

  const std::shared_ptr<Hub> hub_;
  const uint64_t id_;
  const int rank_;
  const GroupOptions options_;
  const coll::Overrides overrides_;
  std::string module_ = "tcp";
  const uint64_t nonce_ = coll::NewNonce();
  bool oversubscribed_ = false;
  std::shared_ptr<const std::vector<coll::MemberProof>> proofs_;  // under mu_

  mutable std::mutex mu_;
  std::condition_variable cv_;  // shrink waits
  std::vector<Member> members_;
  int troubled_ = 0;  // members failed or left (MemberProblem has nothing to find at 0)
  bool closed_ = false;
  Status closed_why_;
  uint32_t next_seq_ = 0;
  // Operations in flight, ascending sequence numbers (usually a handful: a flat list).
  std::vector<std::pair<uint32_t, std::shared_ptr<CollOp>>> ops_;
  // Index in ops_ of operation `seq`, or -1. mu_ held.
  int FindOp(uint32_t seq) const;
  void EraseOp(uint32_t seq);
  // Finished operations kept for reuse (only those nobody else refers to are reused).
  std::vector<std::shared_ptr<CollOp>> spare_;
  // Shared slots: the area (set before the first operation, then constant), the slot
  // operations in posting order (under mu_), which slot this member writes next, and what
  // its two slots hold.
  std::unique_ptr<coll::SlotArea> slots_;
  std::deque<std::shared_ptr<CollOp>> slot_queue_;
  // What the first queued slot operation waits for, as (member << 33) | (seq + 1), set by
  // PollSlotsLocked; 0: nothing to peek at (PollSlots decides). Read without mu_.
  std::atomic<uint64_t> slot_watch_{0};
  bool slot_barrier_ = false;  // barriers of the automatic choice go to the slots
  bool slot_sleep_ = false;    // this member's waiters sleep in the slots (SleepOnSlots)
  bool slot_wake_ = false;     // some member's may: wake them on completing an operation
  // Wakes the slot area's sleepers for operation `seq` (when some member may sleep). mu_ held.
  void WakeSlotSleepers(uint32_t seq);
  // The handle of every slot barrier that completed as it was posted (done, OK; never reused).
  std::shared_ptr<CollOp> slot_done_;
  int slot_buffer_ = 0;
  uint64_t slot_held_[2] = {0, 0};  // seq + 1 of the operation in each slot (0: none)
  bool slot_prev_ok_ = true;        // the last slot operation completed successfully
  const std::shared_ptr<const coll::Schedule> no_schedule_ =
      std::make_shared<const coll::Schedule>();
  // Ended operations whose shared copies wait for the sender's answer (coll_op.h).
  std::vector<std::shared_ptr<CollOp>> orphans_;
  const std::shared_ptr<CollCounters> counters_ = std::make_shared<CollCounters>();
  // Messages of operations not posted here yet (another member is ahead), arrival order.
  std::vector<Stashed> unexpected_;
  std::map<uint32_t, Status> aborted_;
  // point-to-point
  std::map<std::pair<int, int>, uint32_t> send_seq_, recv_seq_;  // (peer, tag) -> next
  std::map<Key, P2pRecv> recvs_;
  std::map<Key, std::vector<Stashed>> p2p_stash_;
  std::map<Key, P2pSend> sends_;                  // (dest, tag, seq): announced, not yet taken
  std::map<Key, coll::Header> announced_;         // (source, tag, seq): kRts before the Recv
  std::vector<std::shared_ptr<CollOp>> p2p_ops_;  // pending sends and receives
  // shrink
  uint32_t shrinks_ = 0;
  std::map<uint32_t, ShrinkInstance> shrink_;
  // schedule cache (under mu_)
  std::vector<std::pair<coll::CollArgs, std::shared_ptr<const coll::Schedule>>> cache_;
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_COLL_GROUP_STATE_H_
