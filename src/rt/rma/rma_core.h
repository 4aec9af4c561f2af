// RmaCore: the state behind an Rma object, shared with the RSR handlers it registers (they
// hold a shared_ptr, so a late request after ~Rma finds `closed` set and is dropped).
// Target side (rma_target.cc): segments, access ID, handlers, blocked processes, the reply
// routes of initiators. Initiator side (rma.cc): operations in flight and their acks.
//
// Thread safety: `mu_` guards the target tables, `ops_mu_` the operation table; counters are
// atomics. Handlers run on the progress thread.
#ifndef UKAI_RT_RMA_RMA_CORE_H_
#define UKAI_RT_RMA_RMA_CORE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "rt/rma/rma_direct.h"
#include "rt/rma/rma_wire.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::trace {
class Location;
enum class RmaKind : uint8_t;
}  // namespace ukai::rt::trace

namespace ukai::rt::internal {

inline constexpr HandlerId kRmaRequestHandler = HandlerId::Of("ukai.rma.request");
inline constexpr HandlerId kRmaReplyHandler = HandlerId::Of("ukai.rma.reply");
// The handle of an operation the direct path completed at once (never in the op table).
inline constexpr uint64_t kDirectOpId = ~uint64_t{0};

struct RmaCounters {
  std::atomic<uint64_t> packets_sent{0}, fast_path{0}, translation_faults{0}, fault_errors{0},
      process_mismatch{0}, access_rejected{0}, blocked_rejected{0}, forged_rejected{0},
      malformed{0}, boundary_rejected{0}, atomic_ops{0}, vnode_redirects{0}, direct_accesses{0},
      direct_fallbacks{0}, onesided_accesses{0}, onesided_fallbacks{0}, onesided_granted{0},
      onesided_released{0}, onesided_revoked_in_flight{0};
};

// One operation in flight at the initiator.
struct OpState {
  RmaWireOp op = RmaWireOp::kPut;
  ProcessId target;
  uint64_t length = 0;          // data bytes (put/get) or ops (atomic)
  uint8_t* get_out = nullptr;   // get destination
  uint64_t* fetched = nullptr;  // atomic results
  std::atomic<uint64_t>* flag = nullptr;
  std::atomic<uint32_t> packets_left{0};
  std::atomic<bool> done{false};
  std::mutex mu;  // guards status
  Status status;
  uint64_t window = 0;  // one-sided ask: the granted window address (0 = use packets)
  // OTF2 recording: the matching id of its RmaPut/RmaGet/RmaAtomic record and its location
  // (0: not recorded); set under ops_mu_, read when the op is reclaimed.
  uint64_t trace_match = 0;
  trace::Location* trace_location = nullptr;
};

class RmaCore {
 public:
  RmaCore(Context& ctx, RmaOptions options, Endpoint* endpoint);

  // Target side (rma_target.cc).
  void OnRequest(Rsr& m);
  Result<RemoteKey> AddSegment(uint8_t* data, uint64_t length, bool lazy);
  Status RemoveSegment(uint32_t segment);
  Result<RemoteKey> MakeKey(uint32_t segment) const;
  uint32_t NewAccessId();
  // The direct path (rma_shared.cc): a segment in shared memory, publishing the state direct
  // initiators check (PublishDirectLocked: mu_ held), and closing it when the Rma goes.
  Result<RemoteKey> AllocateShared(uint64_t length, std::span<uint8_t>* memory);
  void PublishDirect();
  void PublishDirectLocked();
  void CloseDirect();
  // Initiator: the operation done on the direct path (true), or to be started on the
  // software path (false: not mappable, a protection event, or an argument Start rejects).
  bool DirectPut(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                 std::atomic<uint64_t>* flag);
  bool DirectGet(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out);
  bool DirectAtomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                    std::span<uint64_t> fetched);

  // The MPI one-sided path (rma_onesided.cc). Target: attach a segment's memory to the
  // module's window (its window address, 0 when not attached), detach, answer an ask.
  // Initiator: the operation done one-sided or refused by the target (true; *op's Wait
  // returns its status), or to be started on the packet path (false).
  uint64_t AttachWindow(uint8_t* data, uint64_t length);
  void DetachWindow(uint8_t* data, uint64_t window);
  void DetachAllWindows();
  void OnAsk(const RmaRequest& r, const Startpoint& to);
  void OnRelease(const RmaRequest& r);
  // Waits (at most op_timeout_ms) until no grant on `segment` (0: on any) is in flight; not
  // inside this runtime's progress pass, where no release could arrive.
  void AwaitGrants(uint32_t segment);
  // Counts the grants in flight that a revocation overtakes: all of them (`process` and
  // `segment` null/0), those of one process, or those on one segment (mu_ held).
  void CountRevokedGrantsLocked(const ProcessId* process, uint32_t segment);
  bool OneSidedPut(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                   std::atomic<uint64_t>* flag, RmaOp* op);
  bool OneSidedGet(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out, RmaOp* op);

  // Initiator side (rma.cc).
  void OnReply(Rsr& m);
  Result<RmaOp> Start(const RemoteKey& key, RmaWireOp op, uint64_t offset,
                      std::span<const uint8_t> put, std::span<uint8_t> get,
                      std::span<const AtomicOp> atomics, std::span<uint64_t> fetched,
                      std::atomic<uint64_t>* flag);
  // Waits for op `id` and reclaims it; `state` (optional) receives it.
  Status WaitOp(uint64_t id, std::shared_ptr<OpState>* state = nullptr);
  bool TestOp(uint64_t id);
  // Waits until nothing is outstanding to `target` (all targets when null) and reclaims the
  // completed operations, returning the first error among them.
  Status Drain(const ProcessId* target);
  // OTF2 recording (no-ops when the runtime does not record): the issue of op `id` (an
  // RmaOp's id, kDirectOpId for one the direct path completed at once) to `target`.
  void TraceIssue(uint64_t id, trace::RmaKind kind, RuntimeId target, uint64_t bytes_sent,
                  uint64_t bytes_received, uint8_t atomic_type = 0);
  // The reclaimed op's completion (Wait, Flush, Fence).
  void TraceComplete(const OpState& op);

  Runtime& runtime() const { return *runtime_; }
  const ProcessId& self() const { return self_; }
  uint32_t access_id() const { return access_id_.load(std::memory_order_acquire); }
  RmaCounters& counters() { return counters_; }
  int timeout_ms() const { return options_.op_timeout_ms; }

  std::atomic<bool> closed{false};
  std::atomic<bool> scheduled{true};
  std::mutex mu_;  // target tables below
  FaultHandler fault_handler_;
  ProtectionHandler protection_handler_;
  std::set<ProcessId> blocked_;
  std::atomic<VnodeTable*> vnodes_{nullptr};  // the context's virtual node table (vnode.cc)

 private:
  struct Segment {
    uint8_t* data = nullptr;
    uint64_t length = 0;
    bool lazy = false;
    bool live = false;
    std::shared_ptr<DirectSegment> shared;  // Allocate'd: its shared-memory object
    uint64_t window = 0;  // window address of `data` (one-sided path), 0 = not attached
  };
  // Admission of a request (blocked, process ID, access ID with the protection handler).
  Status Admit(const RmaRequest& r);
  // Bounds of a put/get/ask or atomic request in `seg` (mu_ held).
  static Status InBounds(const RmaRequest& r, const Segment& seg);
  // One-sided ask: the window address to grant, 0 for the packet path, or the refusal.
  Result<uint64_t> Grant(const RmaRequest& r);
  bool TryOneSided(const RemoteKey& key, RmaWireOp ask, uint64_t offset, uint8_t* local,
                   uint64_t length, std::atomic<uint64_t>* flag, RmaOp* op);
  // Tells the target a granted transfer is over (wire op 6).
  void Release(const RemoteKey& key, uint64_t offset, uint64_t length, uint64_t op_id);
  // An operation that is complete with `s`, for Wait/Fence to report.
  RmaOp Completed(const ProcessId& target, RmaWireOp op, const Status& s);
  struct Access {  // a validated target access, from CheckRequest
    uint8_t* data = nullptr;
    Startpoint reply_to;
  };
  Result<Access> CheckRequest(Rsr& m, const RmaRequest& r, bool* reply_possible);
  Status Resolve(const RmaRequest& r, uint8_t** data, std::shared_ptr<DirectSegment>* keep);
  Status Fault(uint32_t segment, Segment* seg);
  Status RunAtomics(const RmaRequest& r, uint8_t* data, std::vector<uint8_t>* old);
  void SendReply(const Startpoint& to, const RmaRequest& r, const Status& s,
                 std::span<const uint8_t> data);
  void Finish(OpState* op, const Status& s, uint32_t packets);
  bool SendPacket(const RemoteKey& key, RmaRequest& r, OpState* op);
  Status SendRequest(const Startpoint& to, const RmaRequest& r);

  Runtime* runtime_;
  ProcessId self_;
  RmaOptions options_;
  uint32_t page_size_;
  Startpoint route_;
  std::vector<uint8_t> route_bytes_;
  std::atomic<uint32_t> access_id_;
  std::vector<Segment> segments_;            // id - 1
  std::map<ProcessId, Startpoint> replies_;  // initiators' reply routes (mu_)
  // One-sided grants not released yet, per (initiator, segment) (mu_).
  std::map<std::pair<ProcessId, uint32_t>, uint32_t> grants_;
  std::mutex atomic_mu_;  // one atomic sequence at a time
  RmaCounters counters_;
  std::unique_ptr<DirectTarget> direct_target_;  // made by the first Allocate (mu_)
  std::unique_ptr<DirectInitiator> direct_;      // null when RmaOptions::direct is false

  std::mutex ops_mu_;
  uint64_t next_op_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<OpState>> ops_;
  std::set<ProcessId> route_known_;  // targets that answered (they have our reply route)
  std::atomic<uint64_t> outstanding_{0};
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_RMA_RMA_CORE_H_
