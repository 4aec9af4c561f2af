// Virtual node IDs (seed 003 §2.1, mechanism 1): a per-context table virtual node ID ->
// current location (the host's VnodeTable startpoint and the module that reaches it), the
// runtime's counterpart of the NIC's virtual node ID -> route table. docs/multicast.md
// ("Virtual node IDs") is the guide.
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
//  * Lookup(id) is the hook for other layers (RMA): the current route, resolving on a miss.
//
// Thread safety: every method may be called from any thread, except from a non-threaded
// handler while the resolver may block. Ownership: the table's handlers keep its state
// alive until its context is destroyed.
#ifndef UKAI_RT_VNODE_HPP_
#define UKAI_RT_VNODE_HPP_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ukai/rt/buffer.hpp"
#include "ukai/rt/runtime.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

using VirtualNodeId = uint64_t;

// Where a virtual node is now: the host's VnodeTable startpoint and the module chosen to
// reach it (Runtime::SelectModule).
struct VnodeRoute {
  Startpoint location;
  std::string module;
};

// Answers a miss: the startpoint of the VnodeTable that hosts `id`, or an error.
using VnodeResolver = std::function<Result<Startpoint>(VirtualNodeId id)>;
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
};

class VnodeTable {
 public:
  // Creates the table's endpoint in `context` (handlers "ukai.vn.msg", "ukai.vn.moved",
  // "ukai.vn.fail"). `resolver` may be empty (a miss is then kNotFound).
  static Result<std::unique_ptr<VnodeTable>> Attach(Context& context, VnodeResolver resolver,
                                                    VnodeErrorCallback on_error = {});
  ~VnodeTable();
  VnodeTable(const VnodeTable&) = delete;
  VnodeTable& operator=(const VnodeTable&) = delete;

  // This table's startpoint: the location others bind virtual nodes hosted here to.
  Startpoint startpoint() const;

  // Sets (or rebinds) the entry for `id`. Error: invalid startpoint.
  Status Bind(VirtualNodeId id, const Startpoint& location);
  // Drops the cached entry (the next use resolves).
  void Invalidate(VirtualNodeId id);
  // The route to `id`, from the table or (miss) the resolver. Errors: kNotFound naming the
  // id and the resolver's error; no module reaches the location.
  Result<VnodeRoute> Lookup(VirtualNodeId id);

  // Virtual node `id` is hosted by `endpoint` (of this table's context).
  Status Host(VirtualNodeId id, Endpoint* endpoint);
  // Stops hosting `id`; messages that still arrive for it go to `new_location` (a
  // VnodeTable startpoint) and their senders are told to rebind. Error: `id` not hosted.
  Status Migrate(VirtualNodeId id, const Startpoint& new_location);
  // Stops hosting `id` with no forward address. Error: `id` not hosted.
  Status Unhost(VirtualNodeId id);

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

#endif  // UKAI_RT_VNODE_HPP_
