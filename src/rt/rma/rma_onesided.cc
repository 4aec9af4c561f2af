// The MPI one-sided path of RMA (docs/rma.md, "The MPI one-sided path"): large put/get to a
// peer reached over a module with its own remote memory access (rt/core/one_sided.h: mpi).
//
// Target: every segment with memory is attached to the module's window at registration
// (Register, Allocate; lazily backed segments never are) and detached at Deregister and
// when the Rma goes. An ask (rma_wire.h) passes the checks of a packet — identity bound to
// the connection, blocked list, process ID, access ID (with the protection handler), live
// segment, bounds — and is granted (the window address of its first byte) only when the
// access would complete on the fast path: scheduled, backed, attached. Otherwise the answer
// is "use packets" (the software path, the fault handler) or the packet path's refusal.
//
// Initiator: Put/Get of at least RmaOptions::mpi_onesided_min_bytes to such a peer send the
// ask, wait for the answer, and on a grant move the bytes with the module's Put/Get (MPI_Put
// / MPI_Get + MPI_Win_flush), completing the operation before returning.
//
// After the transfer the initiator sends a release (wire op 6); the target keeps the grants
// not released per (initiator, segment), counts those a revocation overtakes, and makes
// Deregister / ~Rma wait for them (AwaitGrants) before detaching the memory.
//
// Race (documented in docs/rma.md): an access granted before a revocation (ChangeAccessId,
// a block, Deregister) at the target may still land after it, as a packet accepted before
// the revocation does on the packet path, but for the whole operation instead of 4 KiB.
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt/rma/rma_core.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::internal {

uint64_t RmaCore::AttachWindow(uint8_t* data, uint64_t length) {
  if (data == nullptr || length == 0 || options_.mpi_onesided_min_bytes == 0) return 0;
  OneSided* o = runtime_->impl()->LocalOneSided();
  if (o == nullptr) return 0;
  Result<uint64_t> window = o->Attach(data, length);
  return window.ok() ? *window : 0;  // not attached: that segment takes the packet path
}

void RmaCore::DetachWindow(uint8_t* data, uint64_t window) {
  if (window == 0) return;
  if (OneSided* o = runtime_->impl()->LocalOneSided(); o != nullptr) o->Detach(data);
}

void RmaCore::DetachAllWindows() {
  AwaitGrants(0);
  std::lock_guard<std::mutex> lock(mu_);
  for (Segment& s : segments_) {
    DetachWindow(s.data, s.window);
    s.window = 0;
  }
}

void RmaCore::AwaitGrants(uint32_t segment) {
  auto pending = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [who, n] : grants_) {
      if (segment == 0 || who.second == segment) return true;
    }
    return false;
  };
  if (!pending() || runtime_->impl()->InProgressPass()) return;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  while (pending() && std::chrono::steady_clock::now() < deadline) {
    if (runtime_->Progress() == 0) std::this_thread::yield();
  }
}

Result<uint64_t> RmaCore::Grant(const RmaRequest& r) {
  UKAI_RETURN_IF_ERROR(Admit(r));
  std::lock_guard<std::mutex> lock(mu_);
  if (r.segment == 0 || r.segment > segments_.size() || !segments_[r.segment - 1].live) {
    return Status::NotFound("rma: no registered segment " + std::to_string(r.segment) + " at " +
                            RuntimeIdString(self_.runtime) + ":" + std::to_string(self_.context));
  }
  const Segment& seg = segments_[r.segment - 1];
  UKAI_RETURN_IF_ERROR(InBounds(r, seg));
  // Granted only what the fast path would complete: a descheduled context (process ID
  // mismatch), an unbacked lazy segment (translation fault) or memory not in the window go
  // through the packets, where those paths run and count as always.
  if (!scheduled.load(std::memory_order_acquire) || seg.data == nullptr || seg.window == 0) {
    return uint64_t{0};
  }
  ++counters_.onesided_granted;
  ++grants_[{r.init, r.segment}];
  return seg.window + r.offset;
}

void RmaCore::OnRelease(const RmaRequest& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = grants_.find({r.init, r.segment});
  if (it == grants_.end()) {  // never granted (or counted away by a failed initiator)
    ++counters_.malformed;
    return;
  }
  if (--it->second == 0) grants_.erase(it);
  ++counters_.onesided_released;
}

void RmaCore::CountRevokedGrantsLocked(const ProcessId* process, uint32_t segment) {
  for (const auto& [who, n] : grants_) {
    if ((process == nullptr || who.first == *process) && (segment == 0 || who.second == segment)) {
      counters_.onesided_revoked_in_flight += n;
    }
  }
}

void RmaCore::OnAsk(const RmaRequest& r, const Startpoint& to) {
  Result<uint64_t> grant = Grant(r);
  uint8_t window[8];
  if (!grant.ok()) return SendReply(to, r, grant.status(), {});
  if (*grant == 0) return SendReply(to, r, Status::Ok(), {});
  wire::PutLe64(window, *grant);
  SendReply(to, r, Status::Ok(), window);
}

void RmaCore::Release(const RemoteKey& key, uint64_t offset, uint64_t length, uint64_t op_id) {
  RmaRequest r;
  r.op = RmaWireOp::kOneSidedDone;
  r.op_id = op_id;
  r.segment = key.segment;
  r.dest = key.process;
  r.dest_access_id = key.access_id;
  r.init = self_;
  r.init_access_id = access_id();
  r.offset = offset;
  r.length = static_cast<uint32_t>(length);
  // The target answered the ask, so it knows our reply route; a lost release (the target
  // gone) only leaves its grant counted there.
  if (SendRequest(key.route, r).ok()) ++counters_.packets_sent;
}

RmaOp RmaCore::Completed(const ProcessId& target, RmaWireOp op, const Status& s) {
  auto st = std::make_shared<OpState>();
  st->op = op;
  st->target = target;
  st->status = s;
  st->done.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(ops_mu_);
  const uint64_t id = next_op_++;
  ops_[id] = std::move(st);
  return RmaOp{id};
}

bool RmaCore::TryOneSided(const RemoteKey& key, RmaWireOp ask, uint64_t offset, uint8_t* local,
                          uint64_t length, std::atomic<uint64_t>* flag, RmaOp* op) {
  const uint64_t min = options_.mpi_onesided_min_bytes;
  if (min == 0 || length < min || length > UINT32_MAX) return false;
  const auto [one_sided, peer] = runtime_->impl()->OneSidedTo(key.route);
  if (one_sided == nullptr) return false;
  const bool put = ask == RmaWireOp::kOneSidedPut;
  Result<RmaOp> asked = Start(
      key, ask, offset, put ? std::span<const uint8_t>(local, length) : std::span<const uint8_t>(),
      put ? std::span<uint8_t>() : std::span<uint8_t>(local, length), {}, {}, nullptr);
  if (!asked.ok()) return false;  // an argument error: the packet path reports it the same way
  std::shared_ptr<OpState> answer;
  Status s = WaitOp(asked->id, &answer);
  if (s.ok() && answer->window == 0) {  // "use packets"
    counters_.onesided_fallbacks.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (s.ok()) {
    s = put ? one_sided->Put(peer->bytes, answer->window, {local, length})
            : one_sided->Get(peer->bytes, answer->window, {local, length});
    Release(key, offset, length, asked->id);
    // MPI failed after the grant: the packet path redoes the whole operation.
    if (!s.ok()) return false;
    counters_.onesided_accesses.fetch_add(1, std::memory_order_relaxed);
  }
  if (flag != nullptr) flag->store(s.ok() ? 1 : 2, std::memory_order_release);
  *op = s.ok() ? RmaOp{kDirectOpId}
               : Completed(key.process, put ? RmaWireOp::kPut : RmaWireOp::kGet, s);
  return true;
}

bool RmaCore::OneSidedPut(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                          std::atomic<uint64_t>* flag, RmaOp* op) {
  return TryOneSided(key, RmaWireOp::kOneSidedPut, offset, const_cast<uint8_t*>(data.data()),
                     data.size(), flag, op);
}

bool RmaCore::OneSidedGet(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out,
                          RmaOp* op) {
  return TryOneSided(key, RmaWireOp::kOneSidedGet, offset, out.data(), out.size(), nullptr, op);
}

}  // namespace ukai::rt::internal
