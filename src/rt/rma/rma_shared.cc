// Rma::Allocate and the target's side of the direct path (rma_direct.h): segments in shared
// memory, and the published state (access ID, scheduled, block list) kept equal to the
// tables the software path checks.
#include <string>

#include "rt/rma/rma_core.h"

namespace ukai::rt {
namespace internal {

Result<RemoteKey> RmaCore::AllocateShared(uint64_t length, std::span<uint8_t>* memory) {
  uint32_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!direct_target_) {
      Result<std::unique_ptr<DirectTarget>> t = DirectTarget::Create(self_);
      if (!t.ok()) return Status(t.status().code(), "rma: Allocate: " + t.status().message());
      direct_target_ = std::move(*t);
      PublishDirectLocked();
    }
    id = static_cast<uint32_t>(segments_.size() + 1);
    Result<std::shared_ptr<DirectSegment>> seg = direct_target_->Allocate(id, length);
    if (!seg.ok()) return Status(seg.status().code(), "rma: Allocate: " + seg.status().message());
    segments_.push_back(
        {(*seg)->data(), length, false, true, *seg, AttachWindow((*seg)->data(), length)});
    *memory = {(*seg)->data(), length};
  }
  return MakeKey(id);
}

void RmaCore::PublishDirect() {
  std::lock_guard<std::mutex> lock(mu_);
  PublishDirectLocked();
}

void RmaCore::PublishDirectLocked() {
  if (direct_target_) {
    direct_target_->Publish(access_id(), scheduled.load(std::memory_order_acquire), blocked_);
  }
}

void RmaCore::CloseDirect() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!direct_target_) return;
  direct_target_->Close();
  for (Segment& s : segments_) {
    if (s.shared) s.shared->Retire();  // no new mappings; the memory stays until ~RmaCore
  }
}

namespace {

bool InKey(const RemoteKey& key, uint64_t offset, uint64_t length) {
  return offset <= key.length && length <= key.length - offset;
}

// Counts the outcome of a direct access: true when done.
bool Counted(DirectResult d, RmaCounters* c) {
  if (d == DirectResult::kDone) {
    c->direct_accesses.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (d == DirectResult::kRefused) c->direct_fallbacks.fetch_add(1, std::memory_order_relaxed);
  return false;
}

}  // namespace

bool RmaCore::DirectPut(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                        std::atomic<uint64_t>* flag) {
  if (!direct_ || key.nonce == 0 || !InKey(key, offset, data.size())) return false;
  if (!Counted(direct_->Put(key, offset, data), &counters_)) return false;
  if (flag != nullptr) flag->store(1, std::memory_order_release);
  return true;
}

bool RmaCore::DirectGet(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out) {
  if (!direct_ || key.nonce == 0 || !InKey(key, offset, out.size())) return false;
  return Counted(direct_->Get(key, offset, out), &counters_);
}

bool RmaCore::DirectAtomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                           std::span<uint64_t> fetched) {
  if (!direct_ || key.nonce == 0 || ops.empty() || ops.size() > kRmaMaxAtomicOps ||
      fetched.size() != ops.size()) {
    return false;
  }
  return Counted(direct_->Atomic(key, ops, fetched), &counters_);
}

}  // namespace internal

Result<RmaSegment> Rma::Allocate(uint64_t length) {
  std::span<uint8_t> memory;
  Result<RemoteKey> key = core_->AllocateShared(length, &memory);
  if (!key.ok()) return key.status();
  return RmaSegment{std::move(*key), memory};
}

}  // namespace ukai::rt
