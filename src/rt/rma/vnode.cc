// Virtual node IDs for RMA (spec/rma-nic.md, Section 2.1 mechanism 1): operations by virtual
// node resolve through the context's VnodeTable (the one table shared with RSRs), whose
// entries carry the node's segment key; blocking operations are redirected once when the
// target says the segment is gone (VnodeTable::Refresh asks the old location where it went).
#include <string>

#include "rt/rma/rma_core.h"
#include "ukai/rt/rma.hpp"
#include "ukai/rt/vnode.hpp"

namespace ukai::rt {
namespace {

std::string Name(VirtualNodeId vnode) { return "rma: virtual node " + std::to_string(vnode); }

Result<RemoteKey> SegmentOf(VirtualNodeId vnode, const VnodeRoute& route) {
  if (!route.segment) {
    return Status::FailedPrecondition(Name(vnode) + " has no RMA segment at runtime " +
                                      std::to_string(route.location.runtime()) + " (hosted " +
                                      "without one, or bound/resolved to a table only)");
  }
  return *route.segment;
}

}  // namespace

void Rma::UseVnodeTable(VnodeTable* table) {
  core_->vnodes_.store(table, std::memory_order_release);
  if (table == nullptr) return;
  std::weak_ptr<internal::RmaCore> weak = core_;
  table->SetSegmentHook([weak](VirtualNodeId, const RemoteKey& segment) {
    auto core = weak.lock();
    if (core && segment.process == core->self()) core->RemoveSegment(segment.segment);
  });
}

Status Rma::OnVnode(VirtualNodeId vnode, const std::function<Status(const RemoteKey&)>& op) {
  VnodeTable* table = core_->vnodes_.load(std::memory_order_acquire);
  if (table == nullptr) {
    return Status::FailedPrecondition(Name(vnode) + ": no VnodeTable (Rma::UseVnodeTable)");
  }
  Result<VnodeRoute> route = table->Lookup(vnode);
  if (!route.ok()) return route.status().WithContext("rma");
  Result<RemoteKey> key = SegmentOf(vnode, *route);
  if (!key.ok()) return key.status();
  Status s = op(*key);
  if (s.code() != StatusCode::kNotFound) return s;
  // The segment is gone from where the table said: ask that location where the node is now.
  Result<VnodeRoute> moved = table->Refresh(vnode, *route, core_->timeout_ms());
  if (!moved.ok()) {
    return Status::NotFound(Name(vnode) + ": " + s.message() + "; no new location (" +
                            moved.status().message() + ")");
  }
  Result<RemoteKey> next = SegmentOf(vnode, *moved);
  if (!next.ok()) return next.status();
  if (next->process == key->process && next->segment == key->segment) {
    return Status::NotFound(Name(vnode) + ": " + s.message() +
                            "; the table names the same location again");
  }
  ++core_->counters().vnode_redirects;
  return op(*next);
}

Status Rma::PutV(VirtualNodeId vnode, uint64_t offset, std::span<const uint8_t> data) {
  return OnVnode(vnode, [&](const RemoteKey& k) { return PutSync(k, offset, data); });
}

Status Rma::GetV(VirtualNodeId vnode, uint64_t offset, std::span<uint8_t> out) {
  return OnVnode(vnode, [&](const RemoteKey& k) { return GetSync(k, offset, out); });
}

Result<uint64_t> Rma::FetchOpV(VirtualNodeId vnode, uint64_t offset, AtomicOpcode code,
                               uint64_t operand, uint8_t width) {
  uint64_t old = 0;
  Status s = OnVnode(vnode, [&](const RemoteKey& k) {
    Result<uint64_t> r = FetchOp(k, offset, code, operand, width);
    if (r.ok()) old = *r;
    return r.ok() ? Status::Ok() : r.status();
  });
  if (!s.ok()) return s;
  return old;
}

}  // namespace ukai::rt
