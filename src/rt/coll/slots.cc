// The shared-memory slots of a group (slots.h).
#include "rt/coll/slots.h"

#include <sys/mman.h>

#include <atomic>
#include <cstring>

#include "rt/modules/shm/shm_segment.h"

namespace ukai::rt::coll {
namespace {

constexpr uint64_t kSlotsMagic = 0x554b41492d534c54ull;  // "UKAI-SLT"
constexpr size_t kLine = 64;
constexpr size_t kSlotHeader = 16;  // sequence word, signature
constexpr size_t kSlotStride = (kSlotHeader + kSlotDataBytes + kLine - 1) / kLine * kLine;
constexpr size_t kMemberStride = kLine + 2 * kSlotStride;  // done line, two slots

size_t AreaBytes(int n) { return kLine + static_cast<size_t>(n) * kMemberStride; }

std::atomic_ref<uint64_t> Word(uint8_t* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p));
}

}  // namespace

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

}  // namespace ukai::rt::coll
