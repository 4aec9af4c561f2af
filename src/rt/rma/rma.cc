// The initiator side of RMA (splitting, sending, acks, waiting) and the Rma facade.
#include "ukai/rt/rma.hpp"

#include <otf2/OTF2_Events.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt/core/thread_pool.h"
#include "rt/rma/rma_core.h"
#include "rt/trace/recorder.h"
#include "wire/rsr_frame.h"

namespace ukai::rt {
namespace internal {
namespace {

// Bytes of the next packet at `addr` (target address): at most 4 KiB, never past a page end.
uint64_t ChunkAt(uint64_t addr, uint64_t left, uint32_t page) {
  const uint64_t to_page = page - addr % page;
  return std::min<uint64_t>({left, to_page, kRmaMaxPacketBytes});
}

// Checks at send: a usable key, the byte range inside the key's segment, sane atomic ops.
Status Validate(const RemoteKey& key, RmaWireOp op, uint64_t offset, uint64_t len,
                std::span<const AtomicOp> atomics, size_t fetched) {
  if (!key.route.valid() || key.page_size == 0 || (key.page_size & (key.page_size - 1)) != 0) {
    return Status::InvalidArgument("rma: invalid remote key (no route or bad page size)");
  }
  if (op == RmaWireOp::kAtomic) {
    if (atomics.empty() || atomics.size() > kRmaMaxAtomicOps || fetched != atomics.size()) {
      return Status::InvalidArgument("rma: atomic request needs 1..128 ops and one result each");
    }
    for (const AtomicOp& a : atomics) {
      if ((a.width != 4 && a.width != 8) || a.code < AtomicOpcode::kAdd ||
          a.code > AtomicOpcode::kCas) {
        return Status::InvalidArgument("rma: atomic op with width " + std::to_string(a.width) +
                                       " or opcode " + std::to_string(int(a.code)));
      }
    }
  } else if (offset > key.length || len > key.length - offset) {
    return Status::OutOfRange("rma: bytes [" + std::to_string(offset) + ", +" +
                              std::to_string(len) + ") outside the key's segment of " +
                              std::to_string(key.length) + " bytes");
  }
  return Status::Ok();
}

}  // namespace

Result<RmaOp> RmaCore::Start(const RemoteKey& key, RmaWireOp op, uint64_t offset,
                             std::span<const uint8_t> put, std::span<uint8_t> get,
                             std::span<const AtomicOp> atomics, std::span<uint64_t> fetched,
                             std::atomic<uint64_t>* flag) {
  const bool ask = IsOneSidedAsk(op);
  const uint64_t len =
      op == RmaWireOp::kPut || op == RmaWireOp::kOneSidedPut ? put.size() : get.size();
  if (Status v = Validate(key, op, offset, len, atomics, fetched.size()); !v.ok()) return v;
  auto st = std::make_shared<OpState>();
  st->op = op;
  st->target = key.process;
  st->length = op == RmaWireOp::kAtomic ? atomics.size() : len;
  st->get_out = get.data();
  st->fetched = fetched.data();
  st->flag = flag;
  uint32_t packets = 1;
  if (op != RmaWireOp::kAtomic && !ask) {
    packets = 0;
    for (uint64_t done = 0; done < len || packets == 0;) {
      done += ChunkAt(key.base + offset + done, len - done, key.page_size);
      ++packets;
    }
  }
  st->packets_left.store(packets);
  RmaRequest r;
  bool route_known;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    r.op_id = next_op_++;
    ops_[r.op_id] = st;
    route_known = route_known_.count(key.process) != 0;
  }
  r.op = op;
  r.flags = static_cast<uint8_t>((route_known ? 0 : kReqHasReturn) | (flag ? kReqHasFlag : 0));
  r.return_route = route_bytes_;
  r.segment = key.segment;
  r.dest = key.process;
  r.dest_access_id = key.access_id;
  r.init = self_;  // stamped here, from this context's own identity
  r.init_access_id = access_id();
  r.flag = reinterpret_cast<uintptr_t>(flag);
  if (op == RmaWireOp::kAtomic || ask) {
    r.atomics.assign(atomics.begin(), atomics.end());
    r.offset = offset;
    r.length = static_cast<uint32_t>(len);  // asks: the whole operation (rma_wire.h)
    SendPacket(key, r, st.get());
    return RmaOp{r.op_id};
  }
  uint64_t done = 0;
  for (uint32_t i = 0; i < packets; ++i) {
    const uint64_t n = ChunkAt(key.base + offset + done, len - done, key.page_size);
    r.offset = offset + done;
    r.length = static_cast<uint32_t>(n);
    r.op_offset = static_cast<uint32_t>(done);
    if (op == RmaWireOp::kPut) r.data = put.subspan(done, n);
    if (!SendPacket(key, r, st.get())) {
      // The rest is never sent: count it as failed so that the op completes.
      const uint32_t unsent = packets - i - 1;
      if (unsent > 0) Finish(st.get(), Status::Unavailable("rma: packet not sent"), unsent);
      break;
    }
    done += n;
  }
  return RmaOp{r.op_id};
}

Status RmaCore::SendRequest(const Startpoint& to, const RmaRequest& r) {
  const size_t n = RequestSize(r);
  Buffer b(n);
  b.block().Resize(Buffer::kHeadroom + n);
  EncodeRequest(r, b.block().data() + Buffer::kHeadroom);
  return runtime_->SendRsr(std::move(b), to, kRmaRequestHandler);
}

bool RmaCore::SendPacket(const RemoteKey& key, RmaRequest& r, OpState* op) {
  Status s = SendRequest(key.route, r);
  if (!s.ok()) {
    Finish(op, s, 1);
    return false;
  }
  ++counters_.packets_sent;
  return true;
}

// Records `s` (the first error wins) for `packets` packets; the call that accounts for the
// last packet marks the op done and writes its completion flag.
void RmaCore::Finish(OpState* op, const Status& s, uint32_t packets) {
  bool failed;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    if (op->status.ok() && !s.ok()) op->status = s;
    failed = !op->status.ok();
  }
  if (op->packets_left.fetch_sub(packets, std::memory_order_acq_rel) != packets) return;
  {
    std::lock_guard<std::mutex> lock(op->mu);
    failed = !op->status.ok();
  }
  if (op->flag != nullptr) op->flag->store(failed ? 2 : 1, std::memory_order_release);
  op->done.store(true, std::memory_order_release);
}

void RmaCore::OnReply(Rsr& m) {
  if (closed.load(std::memory_order_acquire)) return;
  Result<RmaReply> rep = DecodeReply(m.payload());
  if (!rep.ok()) {
    ++counters_.malformed;
    return;
  }
  std::shared_ptr<OpState> op;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    auto it = ops_.find(rep->op_id);
    if (it != ops_.end()) op = it->second;
    if (op && op->target.runtime == m.source()) route_known_.insert(op->target);
  }
  if (!op || op->done.load() || op->op != rep->op) {
    ++counters_.malformed;
    return;
  }
  if (op->target.runtime != m.source()) {
    ++counters_.forged_rejected;
    return;
  }
  Status s =
      rep->code == StatusCode::kOk ? Status::Ok() : Status(rep->code, std::string(rep->message));
  if (s.ok() && op->op == RmaWireOp::kGet) {
    if (rep->op_offset > op->length || rep->data.size() > op->length - rep->op_offset) {
      s = Status::ParseError("rma: get reply outside the requested range");
    } else if (!rep->data.empty()) {
      std::memcpy(op->get_out + rep->op_offset, rep->data.data(), rep->data.size());
    }
  } else if (s.ok() && IsOneSidedAsk(op->op)) {
    if (rep->data.size() == 8 && wire::GetLe64(rep->data.data()) != 0) {
      op->window = wire::GetLe64(rep->data.data());
    } else if (!rep->data.empty()) {
      s = Status::ParseError("rma: one-sided answer of " + std::to_string(rep->data.size()) +
                             " bytes");
    }
  } else if (s.ok() && op->op == RmaWireOp::kAtomic) {
    if (rep->data.size() != 8 * op->length) {
      s = Status::ParseError("rma: atomic reply of " + std::to_string(rep->data.size()) + " bytes");
    } else {
      for (uint64_t i = 0; i < op->length; ++i)
        op->fetched[i] = wire::GetLe64(rep->data.data() + 8 * i);
    }
  }
  Finish(op.get(), s, 1);
}

template <typename Pred>
Status SpinUntil(Runtime& rt, int timeout_ms, const Pred& ready, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  WaitScope scope;  // a handler thread fencing here may make the pool grow (thread_pool.h)
  for (uint32_t i = 0; !ready(); ++i) {
    // Busy-poll first (an ack usually comes within microseconds), then let others run.
    if (scope.pool() != nullptr && scope.pool()->HelpWhileWaiting()) continue;
    if (rt.Progress() == 0 && i > (1u << 20)) std::this_thread::yield();
    if ((i & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
      return Status::Unavailable("rma: no ack within " + std::to_string(timeout_ms) + " ms for " +
                                 what);
    }
  }
  return Status::Ok();
}

Status RmaCore::WaitOp(uint64_t id, std::shared_ptr<OpState>* state) {
  if (id == kDirectOpId) return Status::Ok();
  std::shared_ptr<OpState> op;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    auto it = ops_.find(id);
    if (it == ops_.end())
      return Status::NotFound("rma: unknown or already reclaimed op " + std::to_string(id));
    op = it->second;
  }
  Status s = SpinUntil(
      *runtime_, options_.op_timeout_ms, [&] { return op->done.load(std::memory_order_acquire); },
      "op " + std::to_string(id));
  if (!s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    ops_.erase(id);
  }
  TraceComplete(*op);
  std::lock_guard<std::mutex> op_lock(op->mu);
  if (state != nullptr) *state = op;
  return op->status;
}

bool RmaCore::TestOp(uint64_t id) {
  if (id == kDirectOpId) return true;
  std::shared_ptr<OpState> op;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    auto it = ops_.find(id);
    if (it == ops_.end()) return false;
    op = it->second;
  }
  if (!op->done.load(std::memory_order_acquire)) runtime_->Progress();
  return op->done.load(std::memory_order_acquire);
}

Status RmaCore::Drain(const ProcessId* target) {
  // Direct-path operations completed at once; the fence orders their stores before what the
  // caller does after the fence.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  auto ready = [&] {
    std::lock_guard<std::mutex> lock(ops_mu_);
    for (const auto& [id, op] : ops_) {
      if ((target == nullptr || op->target == *target) && !op->done.load()) return false;
    }
    return true;
  };
  Status s = SpinUntil(*runtime_, options_.op_timeout_ms, ready, "a fence/flush");
  if (!s.ok()) return s;
  Status first;
  std::vector<std::shared_ptr<OpState>> reclaimed;
  {
    std::lock_guard<std::mutex> lock(ops_mu_);
    for (auto it = ops_.begin(); it != ops_.end();) {
      if (target == nullptr || it->second->target == *target) {
        std::lock_guard<std::mutex> op_lock(it->second->mu);
        if (first.ok() && !it->second->status.ok()) first = it->second->status;
        if (it->second->trace_match != 0) reclaimed.push_back(it->second);
        it = ops_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& op : reclaimed) TraceComplete(*op);
  return first;
}

void RmaCore::TraceIssue(uint64_t id, trace::RmaKind kind, RuntimeId target, uint64_t bytes_sent,
                         uint64_t bytes_received, uint8_t atomic_type) {
  trace::Recorder* rec = runtime_->impl()->recorder();
  if (rec == nullptr) [[likely]]
    return;
  trace::Location* loc = runtime_->impl()->TraceLocation();
  const uint64_t match = rec->RmaIssue(loc, kind, target, bytes_sent, bytes_received, atomic_type);
  if (match == 0) return;
  if (id != kDirectOpId) {
    std::lock_guard<std::mutex> lock(ops_mu_);
    auto it = ops_.find(id);
    if (it != ops_.end()) {  // completed when Wait/Flush/Fence reclaims it
      it->second->trace_match = match;
      it->second->trace_location = loc;
      return;
    }
  }
  rec->RmaComplete(loc, match, /*blocking=*/true);  // done already
}

void RmaCore::TraceComplete(const OpState& op) {
  if (op.trace_match == 0) [[likely]]
    return;
  runtime_->impl()->recorder()->RmaComplete(op.trace_location, op.trace_match, /*blocking=*/false);
}

}  // namespace internal

Result<std::unique_ptr<Rma>> Rma::Create(Context& ctx, RmaOptions options) {
  Result<Endpoint*> ep = ctx.CreateEndpoint({.id = kRmaEndpointId});
  if (!ep.ok()) {
    return Status::FailedPrecondition("rma: cannot create the RMA endpoint in context " +
                                      std::to_string(ctx.id()) +
                                      " (one Rma per context): " + ep.status().message());
  }
  auto core = std::make_shared<internal::RmaCore>(ctx, options, *ep);
  Result<HandlerId> req = (*ep)->RegisterHandler("ukai.rma.request", HandlerKind::kNonThreaded,
                                                 [core](Rsr& m) { core->OnRequest(m); });
  if (!req.ok()) return req.status();
  Result<HandlerId> rep = (*ep)->RegisterHandler("ukai.rma.reply", HandlerKind::kNonThreaded,
                                                 [core](Rsr& m) { core->OnReply(m); });
  if (!rep.ok()) return rep.status();
  return std::unique_ptr<Rma>(new Rma(std::move(core)));
}

Rma::Rma(std::shared_ptr<internal::RmaCore> core) : core_(std::move(core)) {}
Rma::~Rma() {
  core_->closed.store(true, std::memory_order_release);
  core_->CloseDirect();
  core_->DetachAllWindows();
}

ProcessId Rma::process_id() const { return core_->self(); }
uint32_t Rma::access_id() const { return core_->access_id(); }
uint32_t Rma::ChangeAccessId() { return core_->NewAccessId(); }

Result<RemoteKey> Rma::Register(std::span<uint8_t> memory) {
  if (memory.data() == nullptr && !memory.empty()) {
    return Status::InvalidArgument("rma: Register of null memory");
  }
  return core_->AddSegment(memory.data(), memory.size(), false);
}
Result<RemoteKey> Rma::RegisterLazy(uint64_t length) {
  return core_->AddSegment(nullptr, length, true);
}
Status Rma::Deregister(uint32_t segment) { return core_->RemoveSegment(segment); }
Result<RemoteKey> Rma::KeyOf(uint32_t segment) const { return core_->MakeKey(segment); }

void Rma::SetFaultHandler(FaultHandler handler) {
  std::lock_guard<std::mutex> lock(core_->mu_);
  core_->fault_handler_ = std::move(handler);
}
void Rma::SetProtectionHandler(ProtectionHandler handler) {
  std::lock_guard<std::mutex> lock(core_->mu_);
  core_->protection_handler_ = std::move(handler);
}
void Rma::SetScheduled(bool scheduled) {
  core_->scheduled.store(scheduled);
  core_->PublishDirect();
}
void Rma::Unblock(const ProcessId& process) {
  std::lock_guard<std::mutex> lock(core_->mu_);
  core_->blocked_.erase(process);
  core_->PublishDirectLocked();
}

namespace {

// The OTF2 type of an atomic request and its bytes each way (OTF2_RmaAtomicType values:
// 1 increment... see OTF2_Events.h; a mixed sequence is a fetch-and-accumulate).
struct AtomicTrace {
  uint8_t type = OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
  uint64_t sent = 0, received = 0;
};
AtomicTrace TraceOf(std::span<const AtomicOp> ops) {
  AtomicTrace t;
  for (size_t i = 0; i < ops.size(); ++i) {
    const AtomicOp& a = ops[i];
    uint8_t type = OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;  // and, or, xor, min, max
    if (a.code == AtomicOpcode::kAdd) type = OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD;
    if (a.code == AtomicOpcode::kSwap) type = OTF2_RMA_ATOMIC_TYPE_SWAP;
    if (a.code == AtomicOpcode::kCas) type = OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP;
    if (i != 0 && type != t.type) type = OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
    t.type = type;
    t.sent += a.width * (a.code == AtomicOpcode::kCas ? 2 : 1);
    t.received += a.width;
  }
  return t;
}

// Put/Get by the first path that takes them: the direct path (rma_shared.cc: done at once),
// the MPI one-sided path for large transfers to mpi peers (rma_onesided.cc), else packets.
Result<RmaOp> PutPath(internal::RmaCore& core, const RemoteKey& key, uint64_t offset,
                      std::span<const uint8_t> data, std::atomic<uint64_t>* flag) {
  if (core.DirectPut(key, offset, data, flag)) return RmaOp{internal::kDirectOpId};
  if (RmaOp op; core.OneSidedPut(key, offset, data, flag, &op)) return op;
  return core.Start(key, internal::RmaWireOp::kPut, offset, data, {}, {}, {}, flag);
}
Result<RmaOp> GetPath(internal::RmaCore& core, const RemoteKey& key, uint64_t offset,
                      std::span<uint8_t> out) {
  if (core.DirectGet(key, offset, out)) return RmaOp{internal::kDirectOpId};
  if (RmaOp op; core.OneSidedGet(key, offset, out, &op)) return op;
  return core.Start(key, internal::RmaWireOp::kGet, offset, {}, out, {}, {}, nullptr);
}

}  // namespace

Result<RmaOp> Rma::Put(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                       std::atomic<uint64_t>* flag) {
  Result<RmaOp> op = PutPath(*core_, key, offset, data, flag);
  if (op.ok()) core_->TraceIssue(op->id, trace::RmaKind::kPut, key.process.runtime, data.size(), 0);
  return op;
}
Result<RmaOp> Rma::Get(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out) {
  Result<RmaOp> op = GetPath(*core_, key, offset, out);
  if (op.ok()) core_->TraceIssue(op->id, trace::RmaKind::kGet, key.process.runtime, 0, out.size());
  return op;
}
Result<RmaOp> Rma::Atomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                          std::span<uint64_t> fetched) {
  Result<RmaOp> op =
      core_->DirectAtomic(key, ops, fetched)
          ? Result<RmaOp>(RmaOp{internal::kDirectOpId})
          : core_->Start(key, internal::RmaWireOp::kAtomic, 0, {}, {}, ops, fetched, nullptr);
  if (op.ok()) {
    const AtomicTrace t = TraceOf(ops);
    core_->TraceIssue(op->id, trace::RmaKind::kAtomic, key.process.runtime, t.sent, t.received,
                      t.type);
  }
  return op;
}

Status Rma::PutSync(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data) {
  Result<RmaOp> op = Put(key, offset, data);
  return op.ok() ? Wait(*op) : op.status();
}
Status Rma::GetSync(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out) {
  Result<RmaOp> op = Get(key, offset, out);
  return op.ok() ? Wait(*op) : op.status();
}
Result<uint64_t> Rma::FetchOp(const RemoteKey& key, uint64_t offset, AtomicOpcode code,
                              uint64_t operand, uint8_t width) {
  return RunOne(key, {code, width, offset, operand, 0});
}
Result<uint64_t> Rma::CompareSwap(const RemoteKey& key, uint64_t offset, uint64_t expected,
                                  uint64_t desired, uint8_t width) {
  return RunOne(key, {AtomicOpcode::kCas, width, offset, desired, expected});
}
Result<uint64_t> Rma::RunOne(const RemoteKey& key, const AtomicOp& a) {
  uint64_t old = 0;
  Result<RmaOp> op = Atomic(key, {&a, 1}, {&old, 1});
  if (!op.ok()) return op.status();
  Status s = Wait(*op);
  if (!s.ok()) return s;
  return old;
}

Status Rma::Wait(RmaOp op) { return core_->WaitOp(op.id); }
bool Rma::Test(RmaOp op) { return core_->TestOp(op.id); }
Status Rma::Fence(const ProcessId& target) { return core_->Drain(&target); }
Status Rma::Flush() { return core_->Drain(nullptr); }
bool Rma::TestFlag(const std::atomic<uint64_t>& flag) {
  return flag.load(std::memory_order_acquire) != 0;
}
Status Rma::WaitFlag(const std::atomic<uint64_t>& flag) {
  return internal::SpinUntil(
      core_->runtime(), core_->timeout_ms(),
      [&] { return flag.load(std::memory_order_acquire) != 0; }, "a completion flag");
}

RmaStats Rma::stats() const {
  internal::RmaCounters& c = core_->counters();
  return {c.packets_sent.load(),
          c.fast_path.load(),
          c.translation_faults.load(),
          c.fault_errors.load(),
          c.process_mismatch.load(),
          c.access_rejected.load(),
          c.blocked_rejected.load(),
          c.forged_rejected.load(),
          c.malformed.load(),
          c.boundary_rejected.load(),
          c.atomic_ops.load(),
          c.vnode_redirects.load(),
          c.direct_accesses.load(),
          c.direct_fallbacks.load(),
          c.onesided_accesses.load(),
          c.onesided_fallbacks.load(),
          c.onesided_granted.load(),
          c.onesided_released.load(),
          c.onesided_revoked_in_flight.load()};
}

}  // namespace ukai::rt
