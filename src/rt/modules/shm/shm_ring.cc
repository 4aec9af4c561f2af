#include "rt/modules/shm/shm_ring.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstring>

namespace ukai::rt::shm {
namespace {

// The first 8 bytes of a record: its tag. Length and flags follow.
std::atomic<uint64_t>* TagAt(std::byte* data, size_t capacity, uint64_t pos) {
  return reinterpret_cast<std::atomic<uint64_t>*>(data + (pos & (capacity - 1)));
}

struct RecordMeta {
  uint32_t length;
  uint32_t flags;
};

RecordMeta* MetaAt(std::byte* data, size_t capacity, uint64_t pos) {
  return reinterpret_cast<RecordMeta*>(data + (pos & (capacity - 1)) + 8);
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) {
  // Not FUTEX_PRIVATE: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}

}  // namespace

bool ValidRingCapacity(size_t capacity) {
  return capacity >= 4096 && capacity <= (size_t{1} << 30) && (capacity & (capacity - 1)) == 0;
}

bool EnableLightBarriers() {
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0 ||
      (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0) {
    return false;
  }
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

bool HeavyBarrier() { return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0; }

RingProducer::RingProducer(RingControl* control, std::byte* data, size_t capacity)
    : control_(control), data_(data), capacity_(capacity) {
  assert(ValidRingCapacity(capacity));
  pos_ = control_->head.load(std::memory_order_relaxed);
  cached_tail_ = control_->tail.load(std::memory_order_acquire);
}

std::span<std::byte> RingProducer::TryReserve(size_t payload) {
  assert(reserved_ == 0 && "one reservation at a time");
  if (payload == 0) payload = 1;  // an empty record still has a distinct footprint
  if (payload > MaxRecordPayload(capacity_)) return {};
  const size_t footprint = RecordFootprint(payload);
  const size_t to_end = capacity_ - (pos_ & (capacity_ - 1));
  const size_t skip = footprint > to_end ? to_end : 0;
  // One extra line: the tag word after the record is zeroed before publishing.
  const size_t need = skip + footprint + kCacheLine;
  if (capacity_ - (pos_ - cached_tail_) < need) {
    cached_tail_ = control_->tail.load(std::memory_order_acquire);
    if (capacity_ - (pos_ - cached_tail_) < need) return {};
  }
  reserved_at_ = pos_ + skip;
  reserved_ = payload;
  // Zero the tag after the record now (before any byte of the record is written); Commit
  // does it again only if the record shrank.
  TagAt(data_, capacity_, reserved_at_ + footprint)->store(0, std::memory_order_relaxed);
  return {data_ + (reserved_at_ & (capacity_ - 1)) + kRecordHeader, payload};
}

void RingProducer::Commit(size_t payload, uint32_t flags) {
  assert(reserved_ != 0 && payload <= reserved_);
  const uint64_t at = reserved_at_;
  const uint64_t skip_at = pos_;
  const size_t footprint = RecordFootprint(payload == 0 ? 1 : payload);
  const uint64_t next = at + footprint;
  // The tag after the record was zeroed by TryReserve for the reserved size. The record's
  // first line (the one the consumer polls) is written last, in one short burst: every
  // store into it while the consumer spins on it costs a cache-line round trip.
  if (footprint != RecordFootprint(reserved_)) {
    TagAt(data_, capacity_, next)->store(0, std::memory_order_relaxed);
  }
  RecordMeta* meta = MetaAt(data_, capacity_, at);
  meta->length = static_cast<uint32_t>(payload);
  meta->flags = flags & ~kRecordSkip;
  // The last tag store is seq_cst (an xchg on x86): with the seq_cst load in NeedsWake and
  // the consumer's seq_cst store/load in PrepareWait it forms the Dekker pair that makes
  // lost wake-ups impossible, without a separate full fence. With light barriers it is a
  // release store; the consumer's HeavyBarrier() stands in for the fence (Publish).
  if (at == skip_at) {
    Publish(at);
  } else {
    TagAt(data_, capacity_, at)->store(at + 1, std::memory_order_release);
    // The skip record is published last so the consumer finds the record right after it.
    RecordMeta* skip_meta = MetaAt(data_, capacity_, skip_at);
    skip_meta->length = static_cast<uint32_t>(at - skip_at);
    skip_meta->flags = kRecordSkip;
    Publish(skip_at);
  }
  pos_ = next;
  control_->head.store(pos_, std::memory_order_relaxed);
  reserved_ = 0;
}

bool RingProducer::TryWrite(std::span<const std::byte> a, std::span<const std::byte> b,
                            uint32_t flags) {
  std::span<std::byte> area = TryReserve(a.size() + b.size());
  if (area.empty()) return false;
  std::byte* out = area.data();
  // Bytes past the record's first line first, the first line's share last (see Commit).
  auto copy = [&](size_t from, size_t to) {  // [from, to) of the concatenation a + b
    if (from < a.size()) {
      const size_t end = std::min(to, a.size());
      std::memcpy(out + from, a.data() + from, end - from);
      from = end;
    }
    if (from < to) std::memcpy(out + from, b.data() + (from - a.size()), to - from);
  };
  const size_t total = a.size() + b.size();
  const size_t head = std::min(total, kFirstLinePayload);
  if (total > head) copy(head, total);
  if (head > 0) copy(0, head);
  Commit(total, flags);
  return true;
}

bool RingProducer::NeedsWakeSeqCst() {
  if (control_->consumer_waiting.load(std::memory_order_seq_cst) == 0) return false;
  return TakeWake();
}

bool RingProducer::TakeWake() {
  return control_->consumer_waiting.exchange(0, std::memory_order_acq_rel) != 0;
}

void RingProducer::UseLightBarrier() {
  // seq_cst: a consumer that announced its sleep and then read 0 here is seen by our later
  // loads of consumer_waiting (it did not issue the heavy barrier, but it does not need to).
  control_->light_barrier.store(1, std::memory_order_seq_cst);
  light_ = true;
}

void RingProducer::FutexWake() {
  control_->futex_word.fetch_add(1, std::memory_order_release);
  Futex(&control_->futex_word, FUTEX_WAKE, 1, nullptr);
}

RingConsumer::RingConsumer(RingControl* control, std::byte* data, size_t capacity)
    : control_(control), data_(data), capacity_(capacity) {
  assert(ValidRingCapacity(capacity));
  pos_ = control_->tail.load(std::memory_order_acquire);
}

void RingConsumer::Publish() { control_->tail.store(pos_, std::memory_order_release); }

bool RingConsumer::PrepareWait() {
  wait_seq_ = control_->futex_word.load(std::memory_order_acquire);
  control_->consumer_waiting.store(1, std::memory_order_seq_cst);
  // A producer with light barriers needs the heavy side here; if the system refuses it,
  // do not sleep (the caller keeps polling).
  if (control_->light_barrier.load(std::memory_order_seq_cst) != 0 && !HeavyBarrier()) {
    control_->consumer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  const uint64_t tag = TagAt(data_, capacity_, pos_)->load(std::memory_order_seq_cst);
  if (tag == pos_ + 1) {
    control_->consumer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void RingConsumer::EndWait() { control_->consumer_waiting.store(0, std::memory_order_relaxed); }

void RingConsumer::WaitFutex(int64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000),
              static_cast<long>(timeout_ns % 1000000000)};
  Futex(&control_->futex_word, FUTEX_WAIT, wait_seq_, &ts);
}

}  // namespace ukai::rt::shm
