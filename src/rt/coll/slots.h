// SlotArea: a group's shared-memory slots, where members on one host do their barriers and
// small allreduces (up to kSlotDataBytes) without messages (GroupOptions::shared_slots).
//
// One POSIX shared-memory object per group (shm_segment.h's names, so that a crashed
// creator's leftover is swept): rank 0 creates it at group creation, the others attach, then
// rank 0 removes the name. Layout: a 64-byte header (magic, member count), then per member a
// 64-byte line with its `done` word and two slots (double buffering) of kSlotStride bytes:
// an 8-byte sequence word, an 8-byte signature, then the data, so that a contribution of up
// to 48 bytes travels in one cache line with its sequence word.
//
// Protocol (GroupState::PollSlots): a member publishes its contribution to operation `seq`
// in one of its two slots (the data, the signature, then the sequence word, release order)
// and reads every member's slot holding `seq` (acquire); it writes its next contribution into
// the other slot, and the one after that into this one again only once nobody can still be
// reading it (every other member wrote a later operation or says `done` with it). Sequence
// words hold seq + 1 (0: never written). Thread safety: words are accessed atomically;
// callers serialise the writes of one member (its GroupState lock).
//
// Sleeping waiters (GroupOptions::slot_wait): the header also holds a wake word and a count
// of sleepers per parity of the operation's number. A waiter counts itself in (BeginSleep, which
// returns the wake word), checks once more that an operation's contributions are missing, and
// sleeps on the wake word (futex) until it changes or a timeout; a member that completes a slot
// operation changes the word and wakes the sleepers (WakeSleepers: a system call only when one
// sleeps). Both sides do a read-modify-write before they look at the other's words, so either the
// waiter sees the last contribution or the completer sees the waiter counted in.
#ifndef UKAI_RT_COLL_SLOTS_H_
#define UKAI_RT_COLL_SLOTS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ukai/status.hpp"

namespace ukai::rt::coll {

// The largest allreduce (bytes per member) done in slots.
inline constexpr uint64_t kSlotDataBytes = 512;

// The CPUs a process may run on (sched_getaffinity), as group creation publishes them: the
// mask of CPUs 0-63 and the count of all. Members on one host are oversubscribed when they
// outnumber the CPUs of the union of their masks (mpirun --bind-to core gives each its own
// CPU; taskset gives a whole job fewer); hosts with more than 64 CPUs count at least each
// member's own number.
struct CpuSet {
  uint64_t low_mask = 0;
  uint64_t count = 0;
};
CpuSet OwnCpus();
uint64_t UnionCpus(std::span<const CpuSet> sets);

class SlotArea {
 public:
  // Creates the object for `n` members under a fresh name (returned in *name).
  static Result<std::unique_ptr<SlotArea>> Create(int n, std::string* name);
  // Maps the object `name` that another member created for `n` members (its size and
  // header checked).
  static Result<std::unique_ptr<SlotArea>> Attach(const std::string& name, int n);
  ~SlotArea();
  SlotArea(const SlotArea&) = delete;
  SlotArea& operator=(const SlotArea&) = delete;

  int size() const { return n_; }
  // Member r publishes `bytes` (<= kSlotDataBytes) of `data` for operation `seq` in its slot
  // `buffer` (0 or 1).
  void Write(int r, int buffer, uint32_t seq, uint64_t signature, const void* data, uint64_t bytes);
  // Member r's contribution to `seq` (its data; *signature set), or null when not there.
  const uint8_t* Find(int r, uint32_t seq, uint64_t* signature) const;
  // Whether member r published its contribution to `seq` (Find without the signature; the
  // waiters' poll, so it reads only the two sequence words).
  bool Has(int r, uint32_t seq) const;
  // The highest operation member r published, + 1 (0: none).
  uint64_t Latest(int r) const;
  // Member r ended operation `seq` (completed or failed): Done(r) returns seq + 1 then.
  void SetDone(int r, uint32_t seq);
  uint64_t Done(int r) const;

  // ---- sleeping waiters ----
  // Marks the area as one where members may sleep (before the group's first operation;
  // every member reads it after creation's last step: MaySleep).
  void AllowSleep();
  bool MaySleep() const;
  // Counts the caller in as a sleeper for operation `seq`; returns the wake word to pass to
  // Sleep. Every BeginSleep needs an EndSleep with the same `seq`.
  uint32_t BeginSleep(uint32_t seq);
  // Sleeps until the wake word of `seq` differs from `seen`, `timeout` passed, or a signal
  // came; true when a wake ended it (not a timeout, and the word had not changed before).
  bool Sleep(uint32_t seq, uint32_t seen, std::chrono::microseconds timeout);
  void EndSleep(uint32_t seq);
  // A member completed operation `seq`: changes its wake word and wakes its sleepers; false
  // when nobody slept (no system call). The words are per parity of `seq`, so the members
  // that already wait for seq + 1 sleep on.
  bool WakeSleepers(uint32_t seq);

 private:
  SlotArea(void* base, size_t bytes, int n) : base_(base), bytes_(bytes), n_(n) {}
  uint8_t* Member(int r) const;
  uint8_t* Slot(int r, int buffer) const;
  void* base_;
  size_t bytes_;
  int n_;
};

}  // namespace ukai::rt::coll

#endif  // UKAI_RT_COLL_SLOTS_H_
