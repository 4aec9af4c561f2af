// Virtual node IDs for RMA (spec/rma-nic.md, Section 2.1 mechanism 1): a per-Rma table
// virtual node ID -> current location (a RemoteKey), filled by Bind/Migrate or, on a miss, by
// the resolver; blocking operations by virtual node are redirected once when the target says
// the segment is gone.
#include <string>

#include "rt/rma/rma_core.h"
#include "ukai/rt/rma.hpp"

namespace ukai::rt {

void Rma::SetResolver(RmaVnodeResolver resolver) {
  std::lock_guard<std::mutex> lock(core_->vnode_mu_);
  core_->resolver_ = std::move(resolver);
}

void Rma::Bind(VirtualNodeId vnode, const RemoteKey& key) {
  std::lock_guard<std::mutex> lock(core_->vnode_mu_);
  core_->vnodes_[vnode] = key;
}

Result<RemoteKey> Rma::Lookup(VirtualNodeId vnode) {
  RmaVnodeResolver resolver;
  {
    std::lock_guard<std::mutex> lock(core_->vnode_mu_);
    auto it = core_->vnodes_.find(vnode);
    if (it != core_->vnodes_.end()) return it->second;
    resolver = core_->resolver_;
  }
  if (!resolver) {
    return Status::NotFound("rma: virtual node " + std::to_string(vnode) +
                            " is not bound and there is no resolver");
  }
  ++core_->counters().vnode_misses;
  Result<RemoteKey> key = resolver(vnode);  // called without the lock: it may call Bind
  if (!key.ok()) {
    return Status(key.status().code(), "rma: resolver for virtual node " + std::to_string(vnode) +
                                           ": " + key.status().message());
  }
  Bind(vnode, *key);
  return key;
}

Status Rma::OnVnode(VirtualNodeId vnode, const std::function<Status(const RemoteKey&)>& op) {
  Result<RemoteKey> key = Lookup(vnode);
  if (!key.ok()) return key.status();
  Status s = op(*key);
  if (s.code() != StatusCode::kNotFound) return s;
  // The segment is gone from where the table said: drop the binding unless someone rebound
  // it meanwhile (Migrate), and look again.
  {
    std::lock_guard<std::mutex> lock(core_->vnode_mu_);
    auto it = core_->vnodes_.find(vnode);
    if (it != core_->vnodes_.end() && it->second.process == key->process &&
        it->second.segment == key->segment) {
      core_->vnodes_.erase(it);
    }
  }
  Result<RemoteKey> moved = Lookup(vnode);
  if (!moved.ok()) {
    return Status::NotFound("rma: virtual node " + std::to_string(vnode) + ": " + s.message() +
                            "; no new location (" + moved.status().message() + ")");
  }
  if (moved->process == key->process && moved->segment == key->segment) {
    return Status::NotFound("rma: virtual node " + std::to_string(vnode) + ": " + s.message() +
                            "; the resolver names the same location again");
  }
  ++core_->counters().vnode_redirects;
  return op(*moved);
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
