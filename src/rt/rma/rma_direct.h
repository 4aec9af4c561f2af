// The direct path of RMA over shm (docs/rma.md, "The direct path"): the fast arrival
// path "identities match and the address is backed: the access completes with no handler
// involved (over shm, a direct copy into the mapped segment)".
//
// Target side: Rma::Allocate puts a segment in a named POSIX shared-memory object (created
// with the shm module's helpers, shm_segment.h), and the Rma publishes a control page (one
// more object) with its current access ID, whether it is scheduled, the processes it
// blocked, and the lock word of atomic sequences. Deregister clears the segment's `live`
// word and removes its name. A RemoteKey of such a segment carries the owner's host
// identity, both object names and the segment's random nonce.
//
// Initiator side: when the key's owner is on this host and reached over the shm module, the
// initiator maps the control page and the segment once (checking magic, owner, segment id
// and nonce against the key) and then does each put/get/atomic itself with memcpy /
// std::atomic_ref, completing it at once, provided the target's published state allows it
// now: same access ID as the key, scheduled, not blocked, segment live. Any other case (a
// protection event, a key it cannot map) goes to the software path (the RSR emulation),
// where the target's counters and handlers behave as they always did.
//
// Protection model (ours): the initiator library enforces the target's published access ID
// and block list, as the paper's NIC hardware checks the packet header; a process that does
// not use this library but runs as the same user can open the objects by name and bypass it
// (the objects are mode 0600, so other users cannot).
//
// Thread safety: DirectTarget's mutators are serialised by the caller (RmaCore::mu_);
// DirectInitiator is thread safe (lock-free lookup of mapped segments; a mutex on a miss).
#ifndef UKAI_RT_RMA_RMA_DIRECT_H_
#define UKAI_RT_RMA_RMA_DIRECT_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <unordered_map>

#include "core/status.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::internal {

inline constexpr size_t kDirectMaxBlocked = 64;

// The control page an Rma publishes (the first bytes of its control object).
struct DirectControl {
  uint64_t magic;
  uint32_t version;
  int32_t owner_pid;
  uint64_t nonce;  // random; every segment header of this Rma repeats it
  uint64_t runtime;
  uint32_t context;
  uint32_t reserved;
  alignas(64) std::atomic<uint32_t> access_id;
  std::atomic<uint32_t> scheduled;      // 0 while descheduled (SetScheduled(false))
  std::atomic<uint32_t> open;           // 0 once the Rma is destroyed
  std::atomic<uint32_t> blocked_count;  // entries, or kDirectMaxBlocked + 1 (too many: all)
  std::atomic<uint32_t> blocked_seq;    // odd while the list is rewritten (a seqlock)
  // The lock of atomic sequences (pid of its holder, 0 when free), taken by the target's
  // software path and by direct initiators for sequences of more than one op.
  alignas(64) std::atomic<int32_t> sequence_owner;
  struct Blocked {
    std::atomic<uint64_t> runtime;
    std::atomic<uint32_t> context;
  };
  alignas(64) Blocked blocked[kDirectMaxBlocked];
};

// The first page of a segment object; the segment's bytes start one page later.
struct DirectSegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t segment;
  uint64_t runtime;
  uint32_t context;
  uint32_t reserved;
  uint64_t nonce;          // the key's nonce
  uint64_t control_nonce;  // DirectControl::nonce of the owner
  uint64_t length;
  std::atomic<uint32_t> live;  // 0 after Deregister
};

// This host's identity (from the kernel's boot id), never 0.
uint64_t HostIdentity();

// Holds the sequence lock while it lives; a null word means no lock. A holder that died is
// detected (its pid is gone) and its lock taken over.
class SequenceLock {
 public:
  explicit SequenceLock(std::atomic<int32_t>* word);
  ~SequenceLock();
  SequenceLock(const SequenceLock&) = delete;
  SequenceLock& operator=(const SequenceLock&) = delete;

 private:
  std::atomic<int32_t>* word_;
};

// One Allocate'd segment at its owner. Owns the mapping (unmapped on destruction, i.e. when
// the segment table and every software access in progress dropped it).
class DirectSegment {
 public:
  DirectSegment(std::string name, void* base, size_t map_size, uint64_t nonce);
  ~DirectSegment();
  DirectSegment(const DirectSegment&) = delete;
  DirectSegment& operator=(const DirectSegment&) = delete;
  // Stops direct access (live = 0) and removes the name. Idempotent.
  void Retire();
  uint8_t* data() const;
  const std::string& name() const { return name_; }
  uint64_t nonce() const { return nonce_; }

 private:
  std::string name_;
  void* base_;
  size_t map_size_;
  uint64_t nonce_;
  bool named_ = true;
};

// The owner's side of the direct path: its control object.
class DirectTarget {
 public:
  static Result<std::unique_ptr<DirectTarget>> Create(const ProcessId& self);
  ~DirectTarget();
  DirectTarget(const DirectTarget&) = delete;
  DirectTarget& operator=(const DirectTarget&) = delete;

  // A new shared segment of `length` zeroed bytes (page-aligned) for segment id `segment`.
  Result<std::shared_ptr<DirectSegment>> Allocate(uint32_t segment, uint64_t length);
  // Writes the state direct initiators check.
  void Publish(uint32_t access_id, bool scheduled, const std::set<ProcessId>& blocked);
  // The Rma is gone: direct access stops, the control's name is removed.
  void Close();
  // Adds what a same-host peer needs to map `segment` to `key`.
  void FillKey(const DirectSegment& segment, RemoteKey* key) const;
  std::atomic<int32_t>* sequence_lock() { return &control_->sequence_owner; }

 private:
  DirectTarget(std::string name, DirectControl* control, uint64_t host);
  std::string name_;
  DirectControl* control_;
  uint64_t host_;
  bool named_ = true;
};

enum class DirectResult : uint8_t {
  kDone,     // completed in the mapped segment
  kNotHere,  // not a mappable key (other host or module, no shared segment): software path
  kRefused,  // a protection event (access ID, descheduled, blocked, deregistered, closed)
};

// The initiator's side: the mapped segments of keys it used, and the accesses.
class DirectInitiator {
 public:
  DirectInitiator(Runtime& runtime, const ProcessId& self);
  ~DirectInitiator();
  DirectInitiator(const DirectInitiator&) = delete;
  DirectInitiator& operator=(const DirectInitiator&) = delete;

  // The range was validated against key.length by the caller.
  DirectResult Put(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data);
  DirectResult Get(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out);
  // kNotHere also for an op outside the segment or misaligned (the software path reports
  // the error). A sequence of more than one op holds the target's sequence lock.
  DirectResult Atomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                      std::span<uint64_t> fetched);

 private:
  struct Mapping;
  struct Slot;
  DirectResult Admit(const RemoteKey& key, Slot** slot);
  Slot* Lookup(const RemoteKey& key);
  Slot* MapSlow(const RemoteKey& key);
  std::unique_ptr<Slot> Map(const RemoteKey& key);
  const Mapping* MapControl(const RemoteKey& key);
  void Retire(Slot* slot);

  static constexpr size_t kCacheSlots = 256;
  Runtime* runtime_;
  ProcessId self_;
  uint64_t host_;
  std::array<std::atomic<Slot*>, kCacheSlots> cache_{};
  std::mutex mu_;                                              // the tables below
  std::unordered_map<uint64_t, std::unique_ptr<Slot>> slots_;  // by nonce
  std::map<std::string, std::unique_ptr<Mapping>> controls_;   // by object name
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_RMA_RMA_DIRECT_H_
