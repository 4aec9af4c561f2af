// VnodeTable: the virtual node ID -> location cache (sender side) and the hosting and
// forwarding of virtual nodes (host side). Messages (Buffer typed items):
//  "ukai.vn.msg":   u64 id, u32 handler, startpoint of the sender's table, u8 redirects,
//                   bytes payload
//  "ukai.vn.moved": u64 id, startpoint of the new location
//  "ukai.vn.fail":  u64 id, string why
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "rt/core/runtime_impl.h"
#include "ukai/rt/vnode.hpp"

namespace ukai::rt {
namespace {

constexpr HandlerId kMsg = HandlerId::Of("ukai.vn.msg");
constexpr HandlerId kMoved = HandlerId::Of("ukai.vn.moved");
constexpr HandlerId kFail = HandlerId::Of("ukai.vn.fail");
constexpr uint8_t kMaxRedirects = 8;  // a longer forward chain is a loop

Buffer RawPayload(std::span<const uint8_t> bytes) {
  Buffer b(bytes.size());
  if (!bytes.empty()) std::memcpy(b.block().Extend(bytes.size()), bytes.data(), bytes.size());
  return b;
}

std::string Name(VirtualNodeId id) { return "virtual node " + std::to_string(id); }

}  // namespace

struct VnodeTable::State {
  Runtime* runtime = nullptr;
  Startpoint self;
  VnodeResolver resolver;
  VnodeErrorCallback on_error;
  mutable std::mutex mu;  // the maps below
  std::unordered_map<VirtualNodeId, VnodeRoute> routes;
  std::unordered_map<VirtualNodeId, Startpoint> hosted;   // -> local endpoint
  std::unordered_map<VirtualNodeId, Startpoint> forward;  // migrated away -> new location
  std::atomic<uint64_t> hits{0}, misses{0}, resolver_failures{0}, redirected{0}, rebinds{0},
      failed{0}, rejected{0};

  Result<VnodeRoute> Route(const Startpoint& location) {
    auto module = runtime->SelectModule(location);
    if (!module.ok()) return module.status();
    return VnodeRoute{location, *module};
  }

  Result<VnodeRoute> Lookup(VirtualNodeId id) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = routes.find(id);
      if (it != routes.end()) {
        hits.fetch_add(1, std::memory_order_relaxed);
        return it->second;
      }
    }
    misses.fetch_add(1, std::memory_order_relaxed);
    Result<Startpoint> where =
        resolver ? resolver(id) : Result<Startpoint>(Status::NotFound("no resolver"));
    if (where.ok() && !where->valid()) where = Status::NotFound("resolver gave a null startpoint");
    if (!where.ok()) {
      resolver_failures.fetch_add(1, std::memory_order_relaxed);
      return Status::NotFound(Name(id) +
                              ": not in the table and not resolved: " + where.status().message());
    }
    auto route = Route(*where);
    if (!route.ok()) return route.status().WithContext(Name(id));
    std::lock_guard<std::mutex> lock(mu);
    routes[id] = *route;
    return *route;
  }

  Status SendTo(const Startpoint& location, VirtualNodeId id, HandlerId handler,
                const Startpoint& reply, uint8_t redirects, std::span<const uint8_t> payload) {
    Buffer b(payload.size() + 256);
    b.PutU64(id);
    b.PutU32(handler.value);
    b.PutStartpoint(reply);
    b.PutU8(redirects);
    b.PutBytes(payload);
    return runtime->SendRsr(std::move(b), location, kMsg);
  }

  void Notify(const Startpoint& to, HandlerId kind, VirtualNodeId id, const Status& why,
              const Startpoint* moved_to) {
    Buffer b;
    b.PutU64(id);
    if (moved_to != nullptr) {
      b.PutStartpoint(*moved_to);
    } else {
      b.PutString(why.message());
    }
    runtime->SendRsr(std::move(b), to, kind);  // best effort: the sender may be gone
  }

  void OnMsg(Rsr& m);
  void OnMoved(Rsr& m);
  void OnFail(Rsr& m);
};

void VnodeTable::State::OnMsg(Rsr& m) {
  Reader& r = m.reader();
  auto id = r.GetU64();
  auto handler = r.GetU32();
  auto reply = r.GetStartpoint();
  auto redirects = r.GetU8();
  auto payload = r.GetBytes();
  if (!id.ok() || !handler.ok() || !reply.ok() || !redirects.ok() || !payload.ok()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Startpoint local, next;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = hosted.find(*id); it != hosted.end()) {
      local = it->second;
    } else if (auto f = forward.find(*id); f != forward.end()) {
      next = f->second;
    }
  }
  if (local.valid()) {
    Status st = runtime->SendRsr(RawPayload(*payload), local, HandlerId{*handler});
    if (!st.ok()) Notify(*reply, kFail, *id, st.WithContext(Name(*id)), nullptr);
    return;
  }
  Status why;
  if (next.valid() && *redirects < kMaxRedirects) {
    why = SendTo(next, *id, HandlerId{*handler}, *reply, uint8_t(*redirects + 1), *payload);
    if (why.ok()) {
      redirected.fetch_add(1, std::memory_order_relaxed);
      Notify(*reply, kMoved, *id, Status::Ok(), &next);
      return;
    }
    why = why.WithContext(Name(*id) + ": redirect to its new location");
  } else {
    why =
        Status::NotFound(Name(*id) + " is not hosted at runtime " + internal::Hex(self.runtime()) +
                         " context " + std::to_string(self.context()) +
                         (next.valid() ? " (too many redirects)" : " (no forward address)"));
  }
  failed.fetch_add(1, std::memory_order_relaxed);
  Notify(*reply, kFail, *id, why, nullptr);
}

void VnodeTable::State::OnMoved(Rsr& m) {
  auto id = m.reader().GetU64();
  auto to = m.reader().GetStartpoint();
  if (!id.ok() || !to.ok() || !to->valid()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto route = Route(*to);
  std::lock_guard<std::mutex> lock(mu);
  if (route.ok()) {
    routes[*id] = *route;
  } else {
    routes.erase(*id);
  }
  rebinds.fetch_add(1, std::memory_order_relaxed);
}

void VnodeTable::State::OnFail(Rsr& m) {
  auto id = m.reader().GetU64();
  auto why = m.reader().GetString();
  if (!id.ok() || !why.ok()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    routes.erase(*id);
  }
  if (on_error) on_error(*id, Status::Unavailable(*why));
}

VnodeTable::VnodeTable(std::shared_ptr<State> state) : state_(std::move(state)) {}
VnodeTable::~VnodeTable() = default;

Result<std::unique_ptr<VnodeTable>> VnodeTable::Attach(Context& context, VnodeResolver resolver,
                                                       VnodeErrorCallback on_error) {
  auto ep = context.CreateEndpoint();
  if (!ep.ok()) return ep.status().WithContext("vnode endpoint");
  auto state = std::make_shared<State>();
  state->runtime = &context.runtime();
  state->self = (*ep)->MakeStartpoint();
  state->resolver = std::move(resolver);
  state->on_error = std::move(on_error);
  const std::pair<const char*, void (State::*)(Rsr&)> handlers[] = {
      {"ukai.vn.msg", &State::OnMsg},
      {"ukai.vn.moved", &State::OnMoved},
      {"ukai.vn.fail", &State::OnFail}};
  for (const auto& [name, fn] : handlers) {
    auto h = (*ep)->RegisterHandler(name, HandlerKind::kNonThreaded,
                                    [state, fn](Rsr& m) { ((*state).*fn)(m); });
    if (!h.ok()) return h.status();
  }
  return std::make_unique<VnodeTable>(std::move(state));
}

Startpoint VnodeTable::startpoint() const { return state_->self; }

Status VnodeTable::Bind(VirtualNodeId id, const Startpoint& location) {
  if (!location.valid()) return Status::InvalidArgument(Name(id) + ": null location");
  auto route = state_->Route(location);
  if (!route.ok()) return route.status().WithContext(Name(id));
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->routes[id] = *route;
  return Status::Ok();
}

void VnodeTable::Invalidate(VirtualNodeId id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->routes.erase(id);
}

Result<VnodeRoute> VnodeTable::Lookup(VirtualNodeId id) { return state_->Lookup(id); }

Status VnodeTable::Host(VirtualNodeId id, Endpoint* endpoint) {
  if (endpoint == nullptr) return Status::InvalidArgument(Name(id) + ": null endpoint");
  if (endpoint->context().id() != state_->self.context()) {
    return Status::InvalidArgument(Name(id) + ": endpoint of another context");
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->hosted[id] = endpoint->MakeStartpoint();
  state_->forward.erase(id);
  return Status::Ok();
}

Status VnodeTable::Migrate(VirtualNodeId id, const Startpoint& new_location) {
  if (!new_location.valid()) return Status::InvalidArgument(Name(id) + ": null new location");
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->hosted.erase(id) == 0) {
    return Status::FailedPrecondition(Name(id) + " is not hosted here");
  }
  state_->forward[id] = new_location;
  state_->routes.erase(id);
  return Status::Ok();
}

Status VnodeTable::Unhost(VirtualNodeId id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->hosted.erase(id) == 0) {
    return Status::FailedPrecondition(Name(id) + " is not hosted here");
  }
  return Status::Ok();
}

Status VnodeTable::Send(VirtualNodeId id, const Buffer& buffer, HandlerId handler) {
  Status st;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto route = state_->Lookup(id);
    if (!route.ok()) return route.status();
    st = state_->SendTo(route->location, id, handler, state_->self, 0, buffer.payload());
    if (st.code() != StatusCode::kUnavailable) break;
    Invalidate(id);  // the host is gone: resolve again once
  }
  return st.ok() ? st : st.WithContext(Name(id));
}

VnodeStats VnodeTable::stats() const {
  const State& s = *state_;
  return {s.hits.load(),    s.misses.load(), s.resolver_failures.load(), s.redirected.load(),
          s.rebinds.load(), s.failed.load(), s.rejected.load()};
}

}  // namespace ukai::rt
