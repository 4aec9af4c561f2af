// The shared-memory slots of a group (slots.h).
#include "rt/coll/slots.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstring>

#include "rt/modules/shm/shm_segment.h"

namespace ukai::rt::coll {
namespace {

constexpr uint64_t kSlotsMagic = 0x554b41492d534c54ull;  // "UKAI-SLT"
constexpr size_t kLine = 64;
constexpr size_t kSlotHeader = 16;  // sequence word, signature
constexpr size_t kSlotStride = (kSlotHeader + kSlotDataBytes + kLine - 1) / kLine * kLine;
constexpr size_t kMemberStride = kLine + 2 * kSlotStride;  // done line, two slots

// Header words: magic (0), member count (8), whether members may sleep (16, 32 bits), then
// per parity of the operation's number a wake word and a count of sleepers (24 + 8 * parity,
// 32 bits each), so that completing operation s does not wake the members that already wait
// for s + 1.
constexpr size_t kMaySleepOffset = 16;
size_t WakeOffset(uint32_t seq) { return 24 + 8 * (seq & 1); }
size_t SleepersOffset(uint32_t seq) { return 28 + 8 * (seq & 1); }

size_t AreaBytes(int n) { return kLine + static_cast<size_t>(n) * kMemberStride; }

std::atomic_ref<uint64_t> Word(uint8_t* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p));
}

std::atomic_ref<uint32_t> Word32(void* base, size_t offset) {
  return std::atomic_ref<uint32_t>(
      *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(base) + offset));
}

}  // namespace

CpuSet OwnCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuSet own;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {  // unknown: every CPU online
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    own.count = n > 0 ? static_cast<uint64_t>(n) : 1;
    own.low_mask = own.count >= 64 ? ~uint64_t{0} : (uint64_t{1} << own.count) - 1;
    return own;
  }
  for (int c = 0; c < 64; ++c) {
    if (CPU_ISSET(c, &set)) own.low_mask |= uint64_t{1} << c;
  }
  own.count = static_cast<uint64_t>(CPU_COUNT(&set));
  return own;
}

uint64_t UnionCpus(std::span<const CpuSet> sets) {
  uint64_t mask = 0, most = 0;
  for (const CpuSet& s : sets) {
    mask |= s.low_mask;
    most = std::max(most, s.count);
  }
  return std::max<uint64_t>(std::popcount(mask), most);
}

Result<std::unique_ptr<SlotArea>> SlotArea::Create(int n, std::string* name) {
  *name = shm::FreshShmName();
  const size_t bytes = AreaBytes(n);
  Result<void*> base = shm::CreateShmObject(*name, bytes);
  if (!base.ok()) return base.status().WithContext("shared slots");
  auto* header = static_cast<uint8_t*>(*base);
  std::memcpy(header + 8, &n, sizeof n);
  Word(header).store(kSlotsMagic, std::memory_order_release);
  return std::unique_ptr<SlotArea>(new SlotArea(*base, bytes, n));
}

Result<std::unique_ptr<SlotArea>> SlotArea::Attach(const std::string& name, int n) {
  size_t bytes = 0;
  Result<void*> base = shm::MapShmObject(name, &bytes);
  if (!base.ok()) return base.status().WithContext("shared slots");
  std::unique_ptr<SlotArea> area(new SlotArea(*base, bytes, n));
  auto* header = static_cast<uint8_t*>(*base);
  int their_n = 0;
  if (bytes >= kLine) std::memcpy(&their_n, header + 8, sizeof their_n);
  if (bytes != AreaBytes(n) || Word(header).load(std::memory_order_acquire) != kSlotsMagic ||
      their_n != n) {
    return Status::FailedPrecondition("shared slots: " + name + " is not the slot area of a " +
                                      std::to_string(n) + "-member group (" +
                                      std::to_string(bytes) + " bytes)");
  }
  return area;
}

SlotArea::~SlotArea() { munmap(base_, bytes_); }

uint8_t* SlotArea::Member(int r) const {
  return static_cast<uint8_t*>(base_) + kLine + static_cast<size_t>(r) * kMemberStride;
}

uint8_t* SlotArea::Slot(int r, int buffer) const {
  return Member(r) + kLine + static_cast<size_t>(buffer) * kSlotStride;
}

void SlotArea::Write(int r, int buffer, uint32_t seq, uint64_t signature, const void* data,
                     uint64_t bytes) {
  uint8_t* slot = Slot(r, buffer);
  if (bytes != 0) std::memcpy(slot + kSlotHeader, data, bytes);
  Word(slot + 8).store(signature, std::memory_order_relaxed);
  Word(slot).store(uint64_t{seq} + 1, std::memory_order_release);
}

const uint8_t* SlotArea::Find(int r, uint32_t seq, uint64_t* signature) const {
  for (int b = 0; b < 2; ++b) {
    uint8_t* slot = Slot(r, b);
    if (Word(slot).load(std::memory_order_acquire) == uint64_t{seq} + 1) {
      *signature = Word(slot + 8).load(std::memory_order_relaxed);
      return slot + kSlotHeader;
    }
  }
  return nullptr;
}

bool SlotArea::Has(int r, uint32_t seq) const {
  const uint64_t want = uint64_t{seq} + 1;
  return Word(Slot(r, 0)).load(std::memory_order_acquire) == want ||
         Word(Slot(r, 1)).load(std::memory_order_acquire) == want;
}

uint64_t SlotArea::Latest(int r) const {
  const uint64_t a = Word(Slot(r, 0)).load(std::memory_order_acquire);
  const uint64_t b = Word(Slot(r, 1)).load(std::memory_order_acquire);
  return a > b ? a : b;
}

void SlotArea::SetDone(int r, uint32_t seq) {
  Word(Member(r)).store(uint64_t{seq} + 1, std::memory_order_release);
}

uint64_t SlotArea::Done(int r) const { return Word(Member(r)).load(std::memory_order_acquire); }

void SlotArea::AllowSleep() { Word32(base_, kMaySleepOffset).store(1, std::memory_order_release); }

bool SlotArea::MaySleep() const {
  return Word32(base_, kMaySleepOffset).load(std::memory_order_acquire) != 0;
}

uint32_t SlotArea::BeginSleep(uint32_t seq) {
  Word32(base_, SleepersOffset(seq)).fetch_add(1, std::memory_order_seq_cst);
  return Word32(base_, WakeOffset(seq)).load(std::memory_order_seq_cst);
}

bool SlotArea::Sleep(uint32_t seq, uint32_t seen, std::chrono::microseconds timeout) {
  const timespec ts{static_cast<time_t>(timeout.count() / 1000000),
                    static_cast<long>(timeout.count() % 1000000 * 1000)};
  // Shared between processes: no FUTEX_PRIVATE_FLAG.
  const long r = syscall(SYS_futex, static_cast<uint8_t*>(base_) + WakeOffset(seq), FUTEX_WAIT,
                         seen, &ts, nullptr, 0);
  return r == 0 && Word32(base_, WakeOffset(seq)).load(std::memory_order_acquire) != seen;
}

void SlotArea::EndSleep(uint32_t seq) {
  Word32(base_, SleepersOffset(seq)).fetch_sub(1, std::memory_order_seq_cst);
}

bool SlotArea::WakeSleepers(uint32_t seq) {
  Word32(base_, WakeOffset(seq)).fetch_add(1, std::memory_order_seq_cst);
  if (Word32(base_, SleepersOffset(seq)).load(std::memory_order_seq_cst) == 0) return false;
  syscall(SYS_futex, static_cast<uint8_t*>(base_) + WakeOffset(seq), FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
  return true;
}

}  // namespace ukai::rt::coll
