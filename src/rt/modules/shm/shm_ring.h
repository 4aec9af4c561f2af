// ShmRing: a lock-free single-producer single-consumer ring of variable-length records in
// memory shared by two processes (the shm module's queue; see shm_segment.h for the segment
// that holds two of them).
//
// Layout (all of it lives in the shared mapping; nothing here owns memory):
//   RingControl   consumer-written tail and sleep flag, producer-written futex word, each on
//                 its own cache line so the two sides never write the same line.
//   data area     `capacity` bytes (a power of two, multiple of 64), records 64-byte aligned.
// A record is a 16-byte header {tag, length, flags} followed by the payload, padded to 64 B.
// The consumer polls the header at its read position, not a shared head index, so a small
// message costs one cache-line transfer. `tag` is the record's absolute position + 1; since
// positions grow monotonically a tag never repeats, and before publishing a record the
// producer zeroes the tag word of the position that follows it, so stale bytes of an older
// lap can never look like the next record. A record that would cross the end of the data
// area is preceded by a skip record that pads to the end.
//
// Ordering: the producer writes payload, length and flags, zeroes the next tag, then stores
// the tag with release; the consumer loads the tag with acquire. The consumer publishes its
// tail with release after it is done with a record; the producer caches the tail and reloads
// it (acquire) only when the cached value says the ring is full.
//
// Doorbell: a consumer about to sleep sets `consumer_waiting` and re-checks the ring; a
// producer calls NeedsWake() after Commit(), which tells whether the consumer may be asleep,
// and then wakes it (FutexWake on `futex_word`, or the owner's eventfd). Both sides are
// Dekker-style: the producer's last tag store and its load of `consumer_waiting`, the
// consumer's store of `consumer_waiting` and its load of the tag. By default both sides use
// seq_cst operations (the producer's tag store is an xchg on x86: it waits until the store
// buffer drained, i.e. until the record's cache line, which a polling consumer keeps
// stealing, came back: a stall per record). A producer whose process registered for
// asymmetric barriers (EnableLightBarriers, Linux membarrier GLOBAL_EXPEDITED) calls
// UseLightBarrier(): its tag stores are plain release stores and NeedsWake a plain load,
// and it says so in the ring (`light_barrier`); a consumer about to sleep then issues the
// heavy side, HeavyBarrier(), between its store of `consumer_waiting` and its load of the
// tag: the kernel makes every running thread of registered processes execute a full
// barrier, so either the producer's tag store is visible to the consumer's load or the
// producer's load sees `consumer_waiting` (the classic asymmetric Dekker; one system call
// per sleep instead of a locked instruction per record).
//
// Thread safety: one RingProducer and one RingConsumer per ring, each used by one thread at a
// time (they may live in different processes). Units: bytes.
#ifndef UKAI_RT_MODULES_SHM_SHM_RING_H_
#define UKAI_RT_MODULES_SHM_SHM_RING_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ukai::rt::shm {

inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kRecordHeader = 16;
// Payload bytes that share the record's first cache line with its header.
inline constexpr size_t kFirstLinePayload = kCacheLine - kRecordHeader;

struct RingControl {
  alignas(kCacheLine) std::atomic<uint64_t> tail;              // consumer: bytes released so far
  alignas(kCacheLine) std::atomic<uint32_t> consumer_waiting;  // consumer: 1 while it may sleep
  alignas(kCacheLine) std::atomic<uint32_t> futex_word;        // producer: bumped on each wake
  std::atomic<uint32_t> light_barrier;             // producer: 1 when it uses UseLightBarrier()
  alignas(kCacheLine) std::atomic<uint64_t> head;  // producer: bytes committed (diagnostics)
};
static_assert(sizeof(RingControl) == 4 * kCacheLine);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Record flags (low 16 bits are for the ring's user; the ring reserves the top bit).
inline constexpr uint32_t kRecordSkip = 0x80000000u;

// Bytes a record with `payload` bytes occupies in the ring.
constexpr size_t RecordFootprint(size_t payload) {
  return (kRecordHeader + payload + kCacheLine - 1) & ~(kCacheLine - 1);
}

// Largest payload a ring of `capacity` bytes accepts in one record: a record may use up to
// half the ring, so that a skip record plus the record always fit in an empty ring.
constexpr size_t MaxRecordPayload(size_t capacity) {
  return capacity / 2 - kCacheLine - kRecordHeader;
}

// True when `capacity` is a valid ring size (power of two, >= 4 KiB, <= 1 GiB).
bool ValidRingCapacity(size_t capacity);

// Registers this process for asymmetric barriers (membarrier GLOBAL_EXPEDITED): true when
// the kernel supports them and registration succeeded (then its producers may use
// UseLightBarrier). Idempotent; thread safe.
bool EnableLightBarriers();
// The heavy side: a full barrier on every running thread of every registered process.
// False when the system call failed (the caller must then not rely on it).
bool HeavyBarrier();

class RingProducer {
 public:
  RingProducer() = default;
  // `control` and `data` point into the shared mapping; `capacity` is the data area size.
  RingProducer(RingControl* control, std::byte* data, size_t capacity);

  // Reserves a record of `payload` bytes (<= MaxRecordPayload) and returns the writable
  // payload area, contiguous, or an empty span when the ring lacks space now. At most one
  // reservation is open at a time; it becomes visible only with Commit().
  std::span<std::byte> TryReserve(size_t payload);
  // Publishes the open reservation with its final `payload` size (<= the reserved size)
  // and user `flags` (low 31 bits).
  void Commit(size_t payload, uint32_t flags);
  // Reserve, copy the concatenation of `a` and `b`, commit; false when full. Copies the
  // bytes beyond the record's first cache line before those in it, so the line the
  // consumer polls is written in one short burst (prefer it to TryReserve + memcpy).
  bool TryWrite(std::span<const std::byte> a, std::span<const std::byte> b, uint32_t flags);
  // A record whose `payload` bytes (at most kFirstLinePayload) fit its first cache line:
  // `fill(area)` writes them, then the record is published with user `flags` (low 31 bits),
  // as TryReserve + Commit would, without their general cases (such a record never needs a
  // skip record: records are line-aligned). False (nothing written) when the ring lacks
  // space now. Inline: a small message's whole ring write.
  template <typename Fill>
  bool TryWriteLine(size_t payload, uint32_t flags, Fill&& fill) {
    assert(reserved_ == 0 && payload <= kFirstLinePayload);
    // The record's line and the line whose tag is zeroed before publishing (as TryReserve).
    if (capacity_ - (pos_ - cached_tail_) < 2 * kCacheLine) {
      cached_tail_ = control_->tail.load(std::memory_order_acquire);
      if (capacity_ - (pos_ - cached_tail_) < 2 * kCacheLine) return false;
    }
    std::byte* at = data_ + (pos_ & (capacity_ - 1));
    reinterpret_cast<std::atomic<uint64_t>*>(data_ + ((pos_ + kCacheLine) & (capacity_ - 1)))
        ->store(0, std::memory_order_relaxed);
    fill(at + kRecordHeader);
    *reinterpret_cast<uint32_t*>(at + 8) = static_cast<uint32_t>(payload);
    *reinterpret_cast<uint32_t*>(at + 12) = flags & ~kRecordSkip;
    Publish(pos_);
    pos_ += kCacheLine;
    control_->head.store(pos_, std::memory_order_relaxed);
    return true;
  }
  // After one or more Commit()s: true when the consumer announced it may sleep; the caller
  // must then wake it. Clears the announcement so one wake-up serves one sleep.
  bool NeedsWake() {
    if (light_) {
      // The light side of the asymmetric Dekker pair: only the compiler must keep the tag
      // store before this load; the consumer's HeavyBarrier() orders the processor. Inline:
      // it runs after every record.
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (control_->consumer_waiting.load(std::memory_order_relaxed) == 0) return false;
      return TakeWake();
    }
    return NeedsWakeSeqCst();
  }
  // Wakes a consumer sleeping in RingConsumer::WaitFutex.
  void FutexWake();
  // Light barriers from now on (see the header comment); call only when this process's
  // EnableLightBarriers() returned true. Before the producer is shared.
  void UseLightBarrier();
  // Bytes free now according to the cached tail (diagnostics and tests).
  size_t CachedFree() const { return capacity_ - (pos_ - cached_tail_); }
  // Absolute position after the last committed record, and how far the consumer released
  // (reads the shared tail): records before ConsumedUpTo() have been taken.
  uint64_t position() const { return pos_; }
  uint64_t ConsumedUpTo() const { return control_->tail.load(std::memory_order_acquire); }
  bool valid() const { return control_ != nullptr; }

 private:
  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t pos_ = 0;          // next write position (absolute)
  uint64_t cached_tail_ = 0;  // last tail seen
  uint64_t reserved_at_ = 0;  // position of the open reservation
  size_t reserved_ = 0;       // payload bytes of the open reservation (0: none)
  bool light_ = false;        // UseLightBarrier()
  // Stores the tag of the record at `position` (its last store): seq_cst, or release with
  // light barriers (see Commit). The order must be a constant at each store: GCC compiles
  // an atomic store whose order is a run-time value as seq_cst (an xchg), whatever the value.
  void Publish(uint64_t position) {
    auto* tag = reinterpret_cast<std::atomic<uint64_t>*>(data_ + (position & (capacity_ - 1)));
    if (light_) {
      tag->store(position + 1, std::memory_order_release);
    } else {
      tag->store(position + 1, std::memory_order_seq_cst);
    }
  }
  bool NeedsWakeSeqCst();  // NeedsWake without light barriers
  bool TakeWake();         // clears the consumer's announcement; true when it was set
};

// One record as the consumer sees it, in place in the shared mapping. Valid until Release().
struct RecordView {
  std::span<const std::byte> payload;
  uint32_t flags = 0;
};

class RingConsumer {
 public:
  RingConsumer() = default;
  RingConsumer(RingControl* control, std::byte* data, size_t capacity);

  // The next record if one is published, else false. Skip records are consumed silently.
  // Peek() again without Release() returns the same record. Inline: it runs once per
  // record on the receive path.
  bool Peek(RecordView* out) {
    for (;;) {
      std::byte* at = data_ + (pos_ & (capacity_ - 1));
      const uint64_t tag =
          reinterpret_cast<std::atomic<uint64_t>*>(at)->load(std::memory_order_acquire);
      if (tag != pos_ + 1) return false;
      const uint32_t length = *reinterpret_cast<const uint32_t*>(at + 8);
      const uint32_t flags = *reinterpret_cast<const uint32_t*>(at + 12);
      if (flags & kRecordSkip) {
        pos_ += length;  // freed with the next Publish()
        continue;
      }
      out->payload = {at + kRecordHeader, length};
      out->flags = flags;
      peeked_bytes_ = RecordFootprint(length == 0 ? 1 : length);
      return true;
    }
  }
  // Frees the record returned by the last Peek() and publishes the new tail.
  void Release() {
    Consume();
    Publish();
  }
  // Moves past the record returned by the last Peek() without freeing it yet: records
  // consumed this way stay readable in place until Publish().
  void Consume() {
    assert(peeked_bytes_ != 0 && "Consume without Peek");
    pos_ += peeked_bytes_;
    peeked_bytes_ = 0;
  }
  // Frees every consumed record (publishes the tail to the producer).
  void Publish();
  // Announces that the consumer may sleep. Returns false (and withdraws the announcement)
  // when a record arrived meanwhile; true means the caller may block until woken
  // (futex, eventfd, ...) and must call EndWait() afterwards.
  bool PrepareWait();
  void EndWait();
  // Blocks on the ring's futex for at most `timeout_ns` (or until FutexWake). Call between
  // PrepareWait() == true and EndWait(). Spurious returns are allowed.
  void WaitFutex(int64_t timeout_ns);
  bool valid() const { return control_ != nullptr; }

 private:
  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t pos_ = 0;         // next read position (absolute)
  size_t peeked_bytes_ = 0;  // footprint of the record returned by Peek (0: none)
  uint32_t wait_seq_ = 0;    // futex word value seen by PrepareWait
};

}  // namespace ukai::rt::shm

#endif  // UKAI_RT_MODULES_SHM_SHM_RING_H_
