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
#ifndef UKAI_RT_COLL_SLOTS_H_
#define UKAI_RT_COLL_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ukai/status.hpp"

namespace ukai::rt::coll {

// The largest allreduce (bytes per member) done in slots.
inline constexpr uint64_t kSlotDataBytes = 512;

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
