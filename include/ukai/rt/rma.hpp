// Protected remote memory access and remote atomics (docs/rma.md; spec/rma-nic.md), a layer
// over remote service requests: an Rma object attaches to a Context, creates one endpoint
// (kRmaEndpointId) in it and registers the handlers that serve requests on arrival (the
// active-message emulation of a NIC's remote memory access).
//
// Concepts:
//  * Process ID: (runtime id, context id) of a context — the paper's process ID.
//  * Access ID: one per Rma (per context), random, never 0. A peer may access a context's
//    memory only with a RemoteKey, which carries the owner's process ID and access ID (the
//    paper's explicit exchange of process ID and access ID). ChangeAccessId() revokes every
//    key handed out before.
//  * Segments: memory registered in the Rma (ours: the paper protects a whole process). A
//    RemoteKey names (process, access ID, segment, base, length, page size, reply route) and
//    serialises to bytes (Serialize/Parse) for exchange by any means.
//  * Put/Get by (key, offset), any size: split into packets of at most kRmaMaxPacketBytes that
//    never cross a page boundary of the target address, checked at send and at receive.
//  * The initiator's process ID and access ID are stamped by this library from the Rma's own
//    identity (no call takes them); the target refuses a request whose claimed initiator
//    runtime is not the runtime the connection delivered it from.
//  * Arrival paths (each counted in RmaStats): fast path; translation fault (a lazily backed
//    segment: the fault handler supplies memory and the access completes, or an error without
//    a handler); process ID mismatch (the context is descheduled from the fast path: the
//    software path resolves and completes it); access ID mismatch (rejected before any byte is
//    written; the protection handler learns the offender and may block it).
//  * Direct path (docs/rma.md): segments from Allocate() live in shared memory; an initiator on
//    the same host reaching the owner over shm (or mpi) maps them and does put/get/atomics
//    itself, completing at once, when the owner's published state allows it (same access ID,
//    scheduled, not blocked, segment live); every other case takes the software path above.
//  * MPI one-sided path (docs/rma.md): a put/get of at least RmaOptions::mpi_onesided_min_bytes
//    to a peer over the mpi module sends one ask through the request path; the target runs
//    every check above and grants it only when the access would take the fast path (then
//    the initiator completes it with MPI_Put/MPI_Get into the target's dynamic window); any
//    other answer takes the packet path or returns the packet path's error. Deregister and
//    ~Rma wait (at most op_timeout_ms; not inside a non-threaded handler) until transfers
//    granted on the memory ended.
//  * Ordering: relaxed between operations; Fence(target) / Flush() wait for acks. A put may
//    name a completion flag (an std::atomic<uint64_t> of the initiator) set when its ack
//    arrives (SS-Wait): WaitFlag / TestFlag spin on it.
//  * Atomics: fetch-and-op add/and/or/xor/swap/min/max (unsigned) and compare-and-swap on 32-
//    and 64-bit words; a sequence of ops travels as one request and runs atomically at the
//    target with respect to every other remote request to that Rma; each op is also atomic
//    with respect to local std::atomic_ref operations on the same word.
//
// Thread safety: every method is thread safe. Handlers (fault, protection) run on the target's
// progress thread and must not block. The Rma must be destroyed before its Context; requests
// arriving afterwards are dropped. Registered memory must stay valid until Deregister or
// destruction. Wait/Flush need a progress thread or another thread calling Progress().
#ifndef UKAI_RT_RMA_HPP_
#define UKAI_RT_RMA_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ukai/rt/runtime.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

namespace internal {
class RmaCore;
}  // namespace internal
class VnodeTable;  // <ukai/rt/vnode.hpp>

// The endpoint id the Rma creates in its context ("RMA\0").
inline constexpr EndpointId kRmaEndpointId = 0x00414D52;
// Largest data bytes of one packet (the paper's 4 KB).
inline constexpr uint32_t kRmaMaxPacketBytes = 4096;
// Most atomic operations in one request.
inline constexpr size_t kRmaMaxAtomicOps = 128;

struct ProcessId {
  RuntimeId runtime = 0;
  ContextId context = 0;
  bool operator==(const ProcessId&) const = default;
  auto operator<=>(const ProcessId&) const = default;
};

struct RemoteKey {
  ProcessId process;       // the owner
  uint32_t access_id = 0;  // the owner's access ID when the key was made
  uint32_t segment = 0;    // segment id in the owner's Rma
  uint64_t base = 0;       // the segment's address in the owner (0 for lazy segments)
  uint64_t length = 0;     // bytes
  uint32_t page_size = 0;  // the owner's page size
  Startpoint route;        // the owner's RMA endpoint
  // Segments from Rma::Allocate (nonce != 0): what a same-host peer needs to map them for
  // the direct path (docs/rma.md): the owner's host identity, a random nonce checked against
  // the mapped segment, the names of the owner's control object and of the segment's object.
  uint64_t host = 0;
  uint64_t nonce = 0;
  std::string control_name;
  std::string memory_name;

  std::vector<uint8_t> Serialize() const;
  // Errors (kParseError) name the field; trailing bytes are an error.
  static Result<RemoteKey> Parse(std::span<const uint8_t> bytes);
};

// A handle of one non-blocking operation; pass to Wait/Test.
struct RmaOp {
  uint64_t id = 0;
};

enum class AtomicOpcode : uint8_t {
  kAdd = 1,
  kAnd = 2,
  kOr = 3,
  kXor = 4,
  kSwap = 5,
  kMin = 6,  // unsigned
  kMax = 7,  // unsigned
  kCas = 8,  // if word == compare then word = operand; fetches the old word
};

struct AtomicOp {
  AtomicOpcode code = AtomicOpcode::kAdd;
  uint8_t width = 8;     // 4 or 8 bytes; the offset must be a multiple of it
  uint64_t offset = 0;   // within the segment
  uint64_t operand = 0;  // (truncated to 32 bits for width 4)
  uint64_t compare = 0;  // kCas only
};

struct RmaStats {
  uint64_t packets_sent = 0;
  uint64_t fast_path = 0;           // accesses completed with no handler involved
  uint64_t translation_faults = 0;  // lazily backed segment: fault handler called
  uint64_t fault_errors = 0;        // translation fault with no handler / handler failed
  uint64_t process_mismatch = 0;    // resolved by the software path
  uint64_t access_rejected = 0;     // access ID mismatch
  uint64_t blocked_rejected = 0;    // from a blocked process
  uint64_t forged_rejected = 0;     // claimed initiator is not the connection's peer
  uint64_t malformed = 0;           // undecodable request or reply
  uint64_t boundary_rejected = 0;   // packet over 4 KiB or across a page at receive
  uint64_t atomic_ops = 0;          // atomic operations executed here
  uint64_t vnode_redirects = 0;     // blocking vnode ops reissued at a new location
  // Initiator side of the direct path (over shm, Allocate'd segments; docs/rma.md):
  uint64_t direct_accesses = 0;   // operations done in the target's mapped memory
  uint64_t direct_fallbacks = 0;  // refused by the target's published state: software path
  // The MPI one-sided path (large put/get to peers reached over mpi; docs/rma.md):
  uint64_t onesided_accesses = 0;   // initiator: granted, done with MPI_Put/MPI_Get + flush
  uint64_t onesided_fallbacks = 0;  // initiator: the target answered "use packets"
  uint64_t onesided_granted = 0;    // target: asks it granted (all checks of the fast path passed)
  uint64_t onesided_released = 0;   // target: granted transfers the initiator said were over
  // target: grants still in flight (not released) when a revocation took effect
  // (ChangeAccessId, a block, Deregister): the race of docs/rma.md, counted
  uint64_t onesided_revoked_in_flight = 0;
};

// Supplies memory for a lazily backed segment on its first access (the OS allocating a page
// in the paper). Returns page-aligned memory of at least `length` bytes that stays valid
// until the segment is deregistered, or an error passed to the initiator.
using FaultHandler = std::function<Result<std::span<uint8_t>>(uint32_t segment, uint64_t length)>;
// Told about an access ID mismatch: the offender's process ID and access ID. Returns true to
// block that process (every later request from it is refused).
using ProtectionHandler = std::function<bool(const ProcessId& offender, uint32_t access_id)>;

// Virtual node IDs: the context's VnodeTable (<ukai/rt/vnode.hpp>; the paper's virtual node
// ID -> route table, shared with RSRs) names where a node lives, including its segment key.
using VirtualNodeId = uint64_t;

struct RmaOptions {
  // Wait/Flush/Fence give up with kUnavailable after this long without the ack (ms).
  int op_timeout_ms = 60000;
  // The direct path: access the Allocate'd segments of same-host peers reached over shm in
  // mapped memory when the target's published state allows it (docs/rma.md). false: every
  // operation takes the software path (for tests and comparison).
  bool direct = true;
  // The MPI one-sided path: a put/get of at least this many bytes to a peer reached over the
  // mpi module asks the target first (one small request, every check of the packet path)
  // and, when granted, moves the bytes with MPI_Put/MPI_Get + MPI_Win_flush instead of 4 KiB
  // packets (docs/rma.md). 0 = off (this Rma neither asks nor attaches its segments). The
  // default is where the path wins clearly on one node (docs/performance.md,
  // ukai_rma_mpi_sizes: 8 KiB put 4.3 us against 9.4 us by packets; 4 KiB 1.1-1.5x).
  uint64_t mpi_onesided_min_bytes = 8 * 1024;
};

// A segment from Rma::Allocate: its key and its memory in this process (valid until
// Deregister(key.segment) or until the Rma and its Context are gone).
struct RmaSegment {
  RemoteKey key;
  std::span<uint8_t> memory;
};

class Rma {
 public:
  // Attaches to `ctx`: creates endpoint kRmaEndpointId there and its handlers.
  static Result<std::unique_ptr<Rma>> Create(Context& ctx, RmaOptions options = {});
  ~Rma();
  Rma(const Rma&) = delete;
  Rma& operator=(const Rma&) = delete;

  ProcessId process_id() const;
  uint32_t access_id() const;
  // A new access ID: every RemoteKey made before is refused from now on.
  uint32_t ChangeAccessId();

  // Registers `memory` (kept by the caller) and returns its key.
  Result<RemoteKey> Register(std::span<uint8_t> memory);
  // Allocates `length` zeroed bytes (page-aligned) in shared memory and registers them:
  // same-host peers over shm access them directly (the direct path); others as Register's.
  Result<RmaSegment> Allocate(uint64_t length);
  // Registers `length` bytes not backed yet: the first access calls the fault handler.
  Result<RemoteKey> RegisterLazy(uint64_t length);
  Status Deregister(uint32_t segment);
  // A fresh key for a registered segment (with the current access ID).
  Result<RemoteKey> KeyOf(uint32_t segment) const;

  void SetFaultHandler(FaultHandler handler);
  void SetProtectionHandler(ProtectionHandler handler);
  // Scheduled (default) contexts are served on the fast path; descheduled ones take the
  // software path (process ID mismatch), which still completes every access.
  void SetScheduled(bool scheduled);
  // Lifts a block set by the protection handler.
  void Unblock(const ProcessId& process);

  // Non-blocking put/get; `data` / `out` must stay valid until the op completed.
  // `flag` (optional): set to 1 when the put is acknowledged, 2 when it failed.
  Result<RmaOp> Put(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data,
                    std::atomic<uint64_t>* flag = nullptr);
  Result<RmaOp> Get(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out);
  // A sequence of atomic ops sent as one request and run atomically at the target;
  // `fetched[i]` receives the old value of ops[i] (fetched.size() == ops.size()).
  Result<RmaOp> Atomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                       std::span<uint64_t> fetched);

  // Blocking conveniences.
  Status PutSync(const RemoteKey& key, uint64_t offset, std::span<const uint8_t> data);
  Status GetSync(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out);
  Result<uint64_t> FetchOp(const RemoteKey& key, uint64_t offset, AtomicOpcode code,
                           uint64_t operand, uint8_t width = 8);
  Result<uint64_t> CompareSwap(const RemoteKey& key, uint64_t offset, uint64_t expected,
                               uint64_t desired, uint8_t width = 8);

  // Waits for `op`; returns its status (the target's error for a refused access).
  Status Wait(RmaOp op);
  // Whether `op` completed; its status through Wait.
  bool Test(RmaOp op);
  // Waits for every operation issued so far to `target` / to anyone; returns the first error
  // among operations not waited on individually.
  Status Fence(const ProcessId& target);
  Status Flush();
  // Spin on a completion flag (SS-Wait): true when it is non-zero.
  static bool TestFlag(const std::atomic<uint64_t>& flag);
  Status WaitFlag(const std::atomic<uint64_t>& flag);

  // Virtual node IDs resolve through `table`, the context's VnodeTable (the one table of
  // RSRs and RMA: its resolver, Bind and Migrate), which must outlive this Rma or be replaced
  // by UseVnodeTable(nullptr) first. It also sets the table's segment hook: a node hosted with
  // a segment of this Rma that the table migrates or unhosts has that segment deregistered.
  // PutV/GetV/FetchOpV block: they run at the node's segment (VnodeRoute::segment); when the
  // target answers that the segment is gone (kNotFound: it moved away), the table asks the old
  // location where the node went (VnodeTable::Refresh: its forward address, else the
  // resolver); a new location gets the operation once more (redirected), else the error names
  // the virtual node.
  void UseVnodeTable(VnodeTable* table);
  Status PutV(VirtualNodeId vnode, uint64_t offset, std::span<const uint8_t> data);
  Status GetV(VirtualNodeId vnode, uint64_t offset, std::span<uint8_t> out);
  Result<uint64_t> FetchOpV(VirtualNodeId vnode, uint64_t offset, AtomicOpcode code,
                            uint64_t operand, uint8_t width = 8);

  RmaStats stats() const;

 private:
  // Runs `op` at the current location of `vnode`, redirecting once after a kNotFound.
  Status OnVnode(VirtualNodeId vnode, const std::function<Status(const RemoteKey&)>& op);
  explicit Rma(std::shared_ptr<internal::RmaCore> core);
  Result<uint64_t> RunOne(const RemoteKey& key, const AtomicOp& op);
  std::shared_ptr<internal::RmaCore> core_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_RMA_HPP_
