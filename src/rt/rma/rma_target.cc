// The target side of RMA: what happens when a request arrives (spec/rma-nic.md, Section 2.1):
// bind the initiator's identity to the connection, refuse blocked processes, compare the
// process ID and the access ID, translate (segment, offset) to memory — calling the fault
// handler for a lazily backed segment — check the 4 KiB / page rule, do the access, ack.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>

#include "rt/rma/rma_atomics.h"
#include "rt/rma/rma_core.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::internal {
namespace {

std::string Name(const ProcessId& p) {
  return RuntimeIdString(p.runtime) + ":" + std::to_string(p.context);
}

}  // namespace

RmaCore::RmaCore(Context& ctx, RmaOptions options, Endpoint* endpoint)
    : runtime_(&ctx.runtime()),
      self_{ctx.runtime().id(), ctx.id()},
      options_(options),
      page_size_(static_cast<uint32_t>(sysconf(_SC_PAGESIZE))),
      route_(endpoint->MakeStartpoint()),
      route_bytes_(route_.Serialize()),
      access_id_(0) {
  NewAccessId();
  if (options_.direct) direct_ = std::make_unique<DirectInitiator>(*runtime_, self_);
}

uint32_t RmaCore::NewAccessId() {
  // Random and never 0 or the current one: a revoked key cannot match again by chance soon.
  const uint32_t old = access_id_.load();
  std::random_device random;
  uint32_t id = 0;
  while (id == 0 || id == old) id = random();
  access_id_.store(id, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mu_);
    CountRevokedGrantsLocked(nullptr, 0);
  }
  PublishDirect();  // direct initiators holding older keys are refused from now on
  return id;
}

Result<RemoteKey> RmaCore::AddSegment(uint8_t* data, uint64_t length, bool lazy) {
  uint32_t id;
  const uint64_t window = lazy ? 0 : AttachWindow(data, length);
  {
    std::lock_guard<std::mutex> lock(mu_);
    segments_.push_back({data, length, lazy, true, nullptr, window});
    id = static_cast<uint32_t>(segments_.size());
  }
  return MakeKey(id);
}

Status RmaCore::RemoveSegment(uint32_t segment) {
  Segment gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (segment == 0 || segment > segments_.size() || !segments_[segment - 1].live) {
      return Status::NotFound("rma: no registered segment " + std::to_string(segment));
    }
    if (segments_[segment - 1].shared) segments_[segment - 1].shared->Retire();
    CountRevokedGrantsLocked(nullptr, segment);
    gone = segments_[segment - 1];
    segments_[segment - 1] = Segment{};  // no new access from here on
  }
  AwaitGrants(segment);  // one-sided transfers granted before end first (rma_onesided.cc)
  DetachWindow(gone.data, gone.window);
  return Status::Ok();
}

Result<RemoteKey> RmaCore::MakeKey(uint32_t segment) const {
  std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(mu_));
  if (segment == 0 || segment > segments_.size() || !segments_[segment - 1].live) {
    return Status::NotFound("rma: no registered segment " + std::to_string(segment));
  }
  const Segment& s = segments_[segment - 1];
  RemoteKey k;
  k.process = self_;
  k.access_id = access_id();
  k.segment = segment;
  k.base = s.lazy ? 0 : reinterpret_cast<uintptr_t>(s.data);
  k.length = s.length;
  k.page_size = page_size_;
  k.route = route_;
  if (s.shared) direct_target_->FillKey(*s.shared, &k);
  return k;
}

// The initiator's identity must be the connection's peer; its reply route is remembered.
static Result<Startpoint> BindInitiator(RuntimeId source, const RmaRequest& r,
                                        std::map<ProcessId, Startpoint>* routes, RmaCounters* c) {
  if (r.init.runtime != source) {
    ++c->forged_rejected;
    return Status::FailedPrecondition("rma: request claims initiator runtime " +
                                      RuntimeIdString(r.init.runtime) + " but came from " +
                                      RuntimeIdString(source));
  }
  if (r.flags & kReqHasReturn) {
    Result<Startpoint> sp = Startpoint::Deserialize(r.return_route);
    if (!sp.ok() || sp->runtime() != source || sp->context() != r.init.context ||
        sp->endpoint() != kRmaEndpointId) {
      ++c->forged_rejected;
      return Status::FailedPrecondition("rma: bad reply route from runtime " +
                                        RuntimeIdString(source));
    }
    (*routes)[r.init] = *sp;
    return *sp;
  }
  auto it = routes->find(r.init);
  if (it == routes->end()) {
    ++c->malformed;
    return Status::FailedPrecondition("rma: no reply route for " + Name(r.init));
  }
  return it->second;
}

void RmaCore::OnRequest(Rsr& m) {
  Result<RmaRequest> req = DecodeRequest(m.payload());
  // After ~Rma only releases are taken (its destructor may be waiting for them).
  const bool release = req.ok() && req->op == RmaWireOp::kOneSidedDone;
  if (closed.load(std::memory_order_acquire) && !release) return;
  if (!req.ok()) {
    ++counters_.malformed;
    return;
  }
  const RmaRequest& r = *req;
  Result<Startpoint> to = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return BindInitiator(m.source(), r, &replies_, &counters_);
  }();
  if (!to.ok()) return;  // forged or unroutable: counted, no reply possible
  if (IsOneSidedAsk(r.op)) return OnAsk(r, *to);
  if (r.op == RmaWireOp::kOneSidedDone) return OnRelease(r);
  uint8_t* data = nullptr;
  std::shared_ptr<DirectSegment> keep;  // an Allocate'd segment stays mapped until we are done
  Status s = Resolve(r, &data, &keep);
  std::vector<uint8_t> out;
  if (s.ok()) {
    if (r.op == RmaWireOp::kPut) {
      if (!r.data.empty()) std::memcpy(data, r.data.data(), r.data.size());
    } else if (r.op == RmaWireOp::kGet) {
      out.assign(data, data + r.length);
    } else {
      s = RunAtomics(r, data, &out);
    }
  }
  SendReply(*to, r, s, out);
}

Status RmaCore::Admit(const RmaRequest& r) {
  ProtectionHandler protect;
  bool mismatch = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocked_.count(r.init) != 0) {
      ++counters_.blocked_rejected;
      return Status::FailedPrecondition("rma: process " + Name(r.init) +
                                        " is blocked by the target " + Name(self_));
    }
    if (r.dest != self_) {
      return Status::NotFound("rma: request names process " + Name(r.dest) + ", this is " +
                              Name(self_));
    }
    mismatch = r.dest_access_id != access_id();
    if (mismatch) {
      ++counters_.access_rejected;
      protect = protection_handler_;
    }
  }
  if (mismatch) {
    // Access ID mismatch: tell the target's user who it was; it may block the offender.
    if (protect && protect(r.init, r.init_access_id)) {
      std::lock_guard<std::mutex> lock(mu_);
      blocked_.insert(r.init);
      CountRevokedGrantsLocked(&r.init, 0);
      PublishDirectLocked();
    }
    return Status::FailedPrecondition("rma: access ID mismatch at " + Name(self_) +
                                      " (key revoked or never handed out); nothing written");
  }
  return Status::Ok();
}

Status RmaCore::InBounds(const RmaRequest& r, const Segment& seg) {
  const uint64_t span = r.op == RmaWireOp::kAtomic ? 0 : r.length;
  if (r.offset > seg.length || span > seg.length - r.offset) {
    return Status::OutOfRange("rma: bytes [" + std::to_string(r.offset) + ", +" +
                              std::to_string(span) + ") outside segment " +
                              std::to_string(r.segment) + " of " + std::to_string(seg.length));
  }
  return Status::Ok();
}

// Admission (blocked, process ID, access ID), then translation (segment, bounds, page rule,
// fault). On success *data points at the target bytes of a put/get (the segment base for
// atomics).
Status RmaCore::Resolve(const RmaRequest& r, uint8_t** data, std::shared_ptr<DirectSegment>* keep) {
  UKAI_RETURN_IF_ERROR(Admit(r));
  // Process ID check against the scheduled context: a descheduled one is served by the
  // software path, which resolves the same tables and completes the access.
  const bool software = !scheduled.load(std::memory_order_acquire);
  std::unique_lock<std::mutex> lock(mu_);
  if (r.segment == 0 || r.segment > segments_.size() || !segments_[r.segment - 1].live) {
    return Status::NotFound("rma: no registered segment " + std::to_string(r.segment) + " at " +
                            Name(self_));
  }
  Segment seg = segments_[r.segment - 1];
  UKAI_RETURN_IF_ERROR(InBounds(r, seg));
  const uint64_t span = r.op == RmaWireOp::kAtomic ? 0 : r.length;
  const uint64_t addr = (seg.lazy ? 0 : reinterpret_cast<uintptr_t>(seg.data)) + r.offset;
  if (r.op != RmaWireOp::kAtomic &&
      (span > kRmaMaxPacketBytes || addr % page_size_ + span > page_size_)) {
    ++counters_.boundary_rejected;
    return Status::InvalidArgument("rma: packet of " + std::to_string(span) + " bytes at offset " +
                                   std::to_string(r.offset) + " crosses a page boundary");
  }
  bool faulted = false;
  if (seg.data == nullptr && seg.lazy) {  // an empty registered span has no memory either
    lock.unlock();
    Status f = Fault(r.segment, &seg);
    if (!f.ok()) return f;
    faulted = true;
  }
  if (software) {
    ++counters_.process_mismatch;
  } else if (!faulted) {
    ++counters_.fast_path;
  }
  *data = seg.data + (r.op == RmaWireOp::kAtomic ? 0 : r.offset);
  *keep = seg.shared;
  return Status::Ok();
}

// Translation fault: the fault handler supplies memory for the whole segment.
Status RmaCore::Fault(uint32_t segment, Segment* seg) {
  ++counters_.translation_faults;
  FaultHandler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    handler = fault_handler_;
  }
  if (!handler) {
    ++counters_.fault_errors;
    return Status::FailedPrecondition("rma: translation fault in segment " +
                                      std::to_string(segment) + " at " + Name(self_) +
                                      ": not backed and no fault handler");
  }
  Result<std::span<uint8_t>> mem = handler(segment, seg->length);
  if (!mem.ok() || mem->size() < seg->length ||
      reinterpret_cast<uintptr_t>(mem->data()) % page_size_ != 0) {
    ++counters_.fault_errors;
    return Status::FailedPrecondition(
        "rma: fault handler of segment " + std::to_string(segment) + " failed: " +
        (mem.ok() ? std::string("memory too small or not page-aligned") : mem.status().message()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  Segment& live = segments_[segment - 1];
  if (!live.live) return Status::NotFound("rma: segment deregistered during its fault");
  if (live.data == nullptr) live.data = mem->data();
  *seg = live;
  return Status::Ok();
}

Status RmaCore::RunAtomics(const RmaRequest& r, uint8_t* base, std::vector<uint8_t>* old) {
  uint64_t length;
  DirectTarget* shared;
  {
    std::lock_guard<std::mutex> lock(mu_);
    length = segments_[r.segment - 1].length;
    shared = direct_target_.get();
  }
  // Validate every op before running any: a bad one fails the whole request, nothing done.
  for (size_t i = 0; i < r.atomics.size(); ++i) {
    const AtomicOp& a = r.atomics[i];
    if (a.offset > length || a.width > length - a.offset ||
        (reinterpret_cast<uintptr_t>(base) + a.offset) % a.width != 0) {
      return Status::OutOfRange("rma: atomic op " + std::to_string(i) + " at offset " +
                                std::to_string(a.offset) + " (width " + std::to_string(a.width) +
                                ") is outside the segment or misaligned");
    }
  }
  old->resize(8 * r.atomics.size());
  std::lock_guard<std::mutex> lock(atomic_mu_);  // the sequence runs as one
  // ... also with respect to the sequences initiators run directly (rma_direct.h).
  SequenceLock shared_lock(shared != nullptr && r.atomics.size() > 1 ? shared->sequence_lock()
                                                                     : nullptr);
  for (size_t i = 0; i < r.atomics.size(); ++i) {
    wire::PutLe64(old->data() + 8 * i, ApplyAt(base, r.atomics[i]));
  }
  counters_.atomic_ops += r.atomics.size();
  return Status::Ok();
}

void RmaCore::SendReply(const Startpoint& to, const RmaRequest& r, const Status& s,
                        std::span<const uint8_t> data) {
  RmaReply rep;
  rep.op = r.op;
  rep.code = s.code();
  rep.op_id = r.op_id;
  rep.op_offset = r.op_offset;
  const std::string msg = s.ok() ? std::string() : s.message().substr(0, 1000);
  rep.message = msg;
  if (s.ok()) rep.data = data;
  const size_t n = ReplySize(rep);
  Buffer b(n);
  b.block().Resize(Buffer::kHeadroom + n);
  EncodeReply(rep, b.block().data() + Buffer::kHeadroom);
  (void)runtime_->SendRsr(std::move(b), to, kRmaReplyHandler);  // a dead initiator: nothing to do
}

}  // namespace ukai::rt::internal
