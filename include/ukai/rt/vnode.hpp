// Virtual node IDs (seed 003 §2.1, mechanism 1): THE per-context table virtual node ID ->
// current location (the host's VnodeTable startpoint, the module that reaches it and, when the
// node has memory, its RMA segment key), the runtime's counterpart of the NIC's virtual node
// ID -> route table. Used by RSRs (Send) and by RMA (Rma::UseVnodeTable, Rma::PutV/GetV/
// FetchOpV): one table, one resolver, one Migrate. docs/multicast.md ("Virtual node IDs") is
// the guide.
//
//  * A miss calls the resolver callback (the OS's role in the paper: "on a miss, interrupt
//    the OS and resolve in software"); its answer is cached.
//  * Send(id, buffer, handler) runs `handler` of the endpoint that hosts virtual node `id`
//    (Host) wherever it is now. The message goes to the host's VnodeTable, which hands it to
//    the hosting endpoint (the handler's Rsr::source() is then the host's own runtime).
//  * Migrate(id, new_location) at the old host stops hosting `id` and keeps a forward
//    address: messages still in flight to the old location are redirected to the new one,
//    and their senders are told to rebind (their tables then point at the new location).
//    Unhost(id) without a forward address makes such messages fail: the sender's on_error
//    callback gets a clear error ("virtual node N is not hosted at ...") and its entry is
//    dropped (the next Send resolves again).
//  * A send that fails at once because the host is gone (kUnavailable) drops the entry,
//    resolves again and retries once.
//  * Lookup(id) gives the current route (resolving on a miss); Refresh(id, from) asks the
//    table at `from` where the node is now (its forward address), for layers whose own
//    messages do not pass through the host's table (RMA: a request to a segment that Migrate
//    retired answers "not found", and the initiator refreshes and reissues).
//  * A node hosted with a segment (Host(id, endpoint, key)): Migrate/Unhost call the segment
//    hook (set by Rma::UseVnodeTable), which deregisters that segment, so late RMA requests
//    to the old location are refused (and redirected by the initiator) instead of writing
//    stale memory.
//
// Thread safety: every method may be called from any thread, except from a non-threaded
// handler while the resolver may block. Ownership: the table's handlers keep its state
// alive until its context is destroyed.
#ifndef UKAI_RT_VNODE_HPP_
#define UKAI_RT_VNODE_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ukai/rt/buffer.hpp"
#include "ukai/rt/rma.hpp"
#include "ukai/rt/runtime.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

using VirtualNodeId = uint64_t;

// Where a virtual node lives: the host's VnodeTable startpoint and, when the node has memory
// reachable by RMA, that segment's key (of the host context's Rma). Implicit from a Startpoint
// (a node without memory).
struct VnodeLocation {
  Startpoint table;
  std::optional<RemoteKey> segment;
  VnodeLocation() = default;
  VnodeLocation(Startpoint t, std::optional<RemoteKey> s = std::nullopt)  // NOLINT: implicit
      : table(std::move(t)), segment(std::move(s)) {}
};

// Where a virtual node is now: the host's VnodeTable startpoint, the module chosen to reach it
// (Runtime::SelectModule) and the node's segment key, if any.
struct VnodeRoute {
  Startpoint location;
  std::string module;
  std::optional<RemoteKey> segment;
};

// Answers a miss: where `id` lives (the host's VnodeTable startpoint and, for RMA, the
// node's segment key), or an error.
using VnodeResolver = std::function<Result<VnodeLocation>(VirtualNodeId id)>;
// Told (on the thread that called Migrate/Unhost) that this table stopped hosting a node
// whose memory is `segment`; Rma::UseVnodeTable sets it to deregister the segment.
using VnodeSegmentHook = std::function<void(VirtualNodeId id, const RemoteKey& segment)>;
// Told (on the progress thread; must not block) when a message to `id` could not be
// delivered after it was sent.
using VnodeErrorCallback = std::function<void(VirtualNodeId id, const Status& why)>;

struct VnodeStats {
  uint64_t hits = 0, misses = 0;  // Lookup/Send answered by the table / by the resolver
  uint64_t resolver_failures = 0;
  uint64_t redirected = 0;  // messages this table forwarded to a node's new location
  uint64_t rebinds = 0;     // entries updated by a "moved" notice
  uint64_t failed = 0;      // messages that arrived for a node not hosted, no forward
  uint64_t rejected = 0;    // malformed vnode messages (dropped)
  uint64_t refreshes = 0;   // Refresh calls (where-is queries sent to an old location)
};

class VnodeTable {
 public:
  // Creates the table's endpoint in `context` (handlers "ukai.vn.msg", "ukai.vn.moved",
  // "ukai.vn.fail", "ukai.vn.where"). `resolver` may be empty (a miss is then kNotFound).
  static Result<std::unique_ptr<VnodeTable>> Attach(Context& context, VnodeResolver resolver,
                                                    VnodeErrorCallback on_error = {});
  ~VnodeTable();
  VnodeTable(const VnodeTable&) = delete;
  VnodeTable& operator=(const VnodeTable&) = delete;

  // This table's startpoint: the location others bind virtual nodes hosted here to.
  Startpoint startpoint() const;

  // Sets (or rebinds) the entry for `id`. Error: invalid startpoint.
  Status Bind(VirtualNodeId id, const VnodeLocation& location);
  // Drops the cached entry (the next use resolves).
  void Invalidate(VirtualNodeId id);
  // The route to `id`, from the table or (miss) the resolver. Errors: kNotFound naming the
  // id and the resolver's error; no module reaches the location.
  Result<VnodeRoute> Lookup(VirtualNodeId id);
  // `id` was not found where the table's entry says (`from`, e.g. an RMA request answered
  // "no such segment"): asks the table at `from.location` where the node is now and waits (at
  // most `timeout_ms`, progressing the runtime) for the answer, which rebinds the entry (it
  // moved) or drops it (not hosted there, no forward address: the resolver is asked). An
  // entry already rebound elsewhere meanwhile is returned as is. Errors: those of Lookup.
  Result<VnodeRoute> Refresh(VirtualNodeId id, const VnodeRoute& from, int timeout_ms);

  // Virtual node `id` is hosted here: its messages run at `endpoint` (of this table's
  // context) and its memory, if any, is `segment` (a key of this context's Rma). Error: both
  // absent, endpoint of another context.
  Status Host(VirtualNodeId id, Endpoint* endpoint,
              std::optional<RemoteKey> segment = std::nullopt);
  // Stops hosting `id`; messages that still arrive for it go to `new_location` (a
  // VnodeTable startpoint and the node's new segment) and their senders are told to rebind;
  // the old segment goes to the segment hook. Error: `id` not hosted.
  Status Migrate(VirtualNodeId id, const VnodeLocation& new_location);
  // Stops hosting `id` with no forward address (segment hook as for Migrate). Error: `id`
  // not hosted.
  Status Unhost(VirtualNodeId id);
  // See VnodeSegmentHook (one hook per table; a later call replaces it).
  void SetSegmentHook(VnodeSegmentHook hook);

  // Runs `handler` with `buffer`'s payload at the endpoint hosting `id`. Errors: those of
  // Lookup, and of SendRsr after one retry with a fresh resolution.
  Status Send(VirtualNodeId id, const Buffer& buffer, HandlerId handler);

  VnodeStats stats() const;

  struct State;
  explicit VnodeTable(std::shared_ptr<State> state);

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_VNODE_HPP_
