// VnodeTable: the virtual node ID -> location cache (sender side) and the hosting and
// forwarding of virtual nodes (host side). Messages (Buffer typed items):
//  "ukai.vn.msg":   u64 id, u32 handler, startpoint of the sender's table, u8 redirects,
//                   bytes payload
//  "ukai.vn.moved": u64 id, startpoint of the new location, bytes segment key (empty: none)
//  "ukai.vn.fail":  u64 id, string why, u8 answers a where query (1) or a message (0)
//  "ukai.vn.where": u64 id, startpoint of the asking table (answered by moved or fail)
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "rt/core/runtime_impl.h"
#include "ukai/rt/vnode.hpp"

namespace ukai::rt {
namespace {

constexpr HandlerId kMsg = HandlerId::Of("ukai.vn.msg");
constexpr HandlerId kMoved = HandlerId::Of("ukai.vn.moved");
constexpr HandlerId kFail = HandlerId::Of("ukai.vn.fail");
constexpr HandlerId kWhere = HandlerId::Of("ukai.vn.where");
constexpr uint8_t kMaxRedirects = 8;  // a longer forward chain is a loop

Buffer RawPayload(std::span<const uint8_t> bytes) {
  Buffer b(bytes.size());
  if (!bytes.empty()) std::memcpy(b.block().Extend(bytes.size()), bytes.data(), bytes.size());
  return b;
}

std::string Name(VirtualNodeId id) { return "virtual node " + std::to_string(id); }

bool SameSegment(const std::optional<RemoteKey>& a, const std::optional<RemoteKey>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return a->process == b->process && a->segment == b->segment;
}

// Where a node hosted here lives: its endpoint (may be null: memory only) and segment.
struct Hosted {
  Startpoint endpoint;
  std::optional<RemoteKey> segment;
};

}  // namespace

struct VnodeTable::State {
  Runtime* runtime = nullptr;
  Startpoint self;
  VnodeResolver resolver;
  VnodeErrorCallback on_error;
  mutable std::mutex mu;  // the maps below
  std::unordered_map<VirtualNodeId, VnodeRoute> routes;
  std::unordered_map<VirtualNodeId, Hosted> hosted;
  std::unordered_map<VirtualNodeId, VnodeLocation> forward;  // migrated away -> new location
  std::unordered_map<VirtualNodeId, uint64_t> answers;       // where queries answered, per id
  VnodeSegmentHook segment_hook;
  std::atomic<uint64_t> hits{0}, misses{0}, resolver_failures{0}, redirected{0}, rebinds{0},
      failed{0}, rejected{0}, refreshes{0};

  Result<VnodeRoute> Route(const VnodeLocation& location) {
    auto module = runtime->SelectModule(location.table);
    if (!module.ok()) return module.status();
    return VnodeRoute{location.table, *module, location.segment};
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
    Result<VnodeLocation> where =
        resolver ? resolver(id) : Result<VnodeLocation>(Status::NotFound("no resolver"));
    if (where.ok() && !where->table.valid()) {
      where = Status::NotFound("resolver gave a null startpoint");
    }
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

  // A "moved" notice (moved_to set) or a "fail" notice (`query`: it answers a where query).
  void Notify(const Startpoint& to, HandlerId kind, VirtualNodeId id, const Status& why,
              const VnodeLocation* moved_to, bool query = false) {
    Buffer b;
    b.PutU64(id);
    if (moved_to != nullptr) {
      b.PutStartpoint(moved_to->table);
      b.PutBytes(moved_to->segment ? moved_to->segment->Serialize() : std::vector<uint8_t>());
    } else {
      b.PutString(why.message());
      b.PutU8(query ? 1 : 0);
    }
    runtime->SendRsr(std::move(b), to, kind);  // best effort: the sender may be gone
  }

  Status NotHostedHere(VirtualNodeId id, const char* why) const {
    return Status::NotFound(Name(id) + " is not hosted at runtime " +
                            internal::Hex(self.runtime()) + " context " +
                            std::to_string(self.context()) + " (" + why + ")");
  }

  void Answered(VirtualNodeId id) { ++answers[id]; }  // under mu

  // Stops hosting `id` (keeping `to` as forward address when set) and hands the node's
  // segment to the hook.
  Status StopHosting(VirtualNodeId id, const VnodeLocation* to);

  void OnMsg(Rsr& m);
  void OnMoved(Rsr& m);
  void OnFail(Rsr& m);
  void OnWhere(Rsr& m);
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
  Startpoint local;
  VnodeLocation next;
  bool memory_only = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = hosted.find(*id); it != hosted.end()) {
      local = it->second.endpoint;
      memory_only = !local.valid();
    } else if (auto f = forward.find(*id); f != forward.end()) {
      next = f->second;
    }
  }
  if (local.valid() || memory_only) {
    Status st = memory_only ? NotHostedHere(*id, "memory only: no endpoint takes its messages")
                            : runtime->SendRsr(RawPayload(*payload), local, HandlerId{*handler});
    if (!st.ok()) Notify(*reply, kFail, *id, st.WithContext(Name(*id)), nullptr);
    return;
  }
  Status why;
  if (next.table.valid() && *redirects < kMaxRedirects) {
    why = SendTo(next.table, *id, HandlerId{*handler}, *reply, uint8_t(*redirects + 1), *payload);
    if (why.ok()) {
      redirected.fetch_add(1, std::memory_order_relaxed);
      Notify(*reply, kMoved, *id, Status::Ok(), &next);
      return;
    }
    why = why.WithContext(Name(*id) + ": redirect to its new location");
  } else {
    why = NotHostedHere(*id, next.table.valid() ? "too many redirects" : "no forward address");
  }
  failed.fetch_add(1, std::memory_order_relaxed);
  Notify(*reply, kFail, *id, why, nullptr);
}

void VnodeTable::State::OnMoved(Rsr& m) {
  auto id = m.reader().GetU64();
  auto to = m.reader().GetStartpoint();
  auto key = m.reader().GetBytes();
  if (!id.ok() || !to.ok() || !to->valid() || !key.ok()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  VnodeLocation where(*to);
  if (!key->empty()) {
    auto segment = RemoteKey::Parse(*key);
    if (!segment.ok()) {
      rejected.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    where.segment = *segment;
  }
  auto route = Route(where);
  std::lock_guard<std::mutex> lock(mu);
  if (route.ok()) {
    routes[*id] = *route;
  } else {
    routes.erase(*id);
  }
  Answered(*id);
  rebinds.fetch_add(1, std::memory_order_relaxed);
}

void VnodeTable::State::OnFail(Rsr& m) {
  auto id = m.reader().GetU64();
  auto why = m.reader().GetString();
  auto query = m.reader().GetU8();
  if (!id.ok() || !why.ok() || !query.ok() || *query > 1) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    routes.erase(*id);
    if (*query == 1) Answered(*id);
  }
  // A where query is answered to Refresh, which resolves again; a message is the user's loss.
  if (*query == 0 && on_error) on_error(*id, Status::Unavailable(*why));
}

void VnodeTable::State::OnWhere(Rsr& m) {
  auto id = m.reader().GetU64();
  auto reply = m.reader().GetStartpoint();
  if (!id.ok() || !reply.ok() || !reply->valid()) {
    rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  VnodeLocation at;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = hosted.find(*id); it != hosted.end()) {
      at = VnodeLocation(self, it->second.segment);
    } else if (auto f = forward.find(*id); f != forward.end()) {
      at = f->second;
    }
  }
  if (at.table.valid()) {
    Notify(*reply, kMoved, *id, Status::Ok(), &at);
  } else {
    Notify(*reply, kFail, *id, NotHostedHere(*id, "no forward address"), nullptr, true);
  }
}

Status VnodeTable::State::StopHosting(VirtualNodeId id, const VnodeLocation* to) {
  std::optional<RemoteKey> segment;
  VnodeSegmentHook hook;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = hosted.find(id);
    if (it == hosted.end()) return Status::FailedPrecondition(Name(id) + " is not hosted here");
    segment = it->second.segment;
    hosted.erase(it);
    if (to != nullptr) forward[id] = *to;
    routes.erase(id);
    hook = segment_hook;
  }
  if (segment && hook) hook(id, *segment);  // outside mu: it deregisters the segment
  return Status::Ok();
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
      {"ukai.vn.fail", &State::OnFail},
      {"ukai.vn.where", &State::OnWhere}};
  for (const auto& [name, fn] : handlers) {
    auto h = (*ep)->RegisterHandler(name, HandlerKind::kNonThreaded,
                                    [state, fn = fn](Rsr& m) { ((*state).*fn)(m); });
    if (!h.ok()) return h.status();
  }
  return std::make_unique<VnodeTable>(std::move(state));
}

Startpoint VnodeTable::startpoint() const { return state_->self; }

Status VnodeTable::Bind(VirtualNodeId id, const VnodeLocation& location) {
  if (!location.table.valid()) return Status::InvalidArgument(Name(id) + ": null location");
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

Result<VnodeRoute> VnodeTable::Refresh(VirtualNodeId id, const VnodeRoute& from, int timeout_ms) {
  State& s = *state_;
  uint64_t before = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.routes.find(id);
    if (it != s.routes.end() &&
        (it->second.location != from.location || !SameSegment(it->second.segment, from.segment))) {
      return it->second;  // rebound meanwhile (a "moved" notice or Bind)
    }
    before = s.answers[id];
  }
  s.refreshes.fetch_add(1, std::memory_order_relaxed);
  Buffer b;
  b.PutU64(id);
  b.PutStartpoint(s.self);
  if (s.runtime->SendRsr(std::move(b), from.location, kWhere).ok()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (uint32_t i = 0;; ++i) {
      {
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.answers[id] != before) break;
      }
      if (std::chrono::steady_clock::now() > deadline) break;
      if (s.runtime->Progress() == 0 && i > 1024) std::this_thread::yield();
    }
  }
  {
    // No answer (or the old host is gone): forget the stale entry, the resolver decides.
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.routes.find(id);
    if (it != s.routes.end() && it->second.location == from.location &&
        SameSegment(it->second.segment, from.segment)) {
      s.routes.erase(it);
    }
  }
  return s.Lookup(id);
}

Status VnodeTable::Host(VirtualNodeId id, Endpoint* endpoint, std::optional<RemoteKey> segment) {
  if (endpoint == nullptr && !segment) {
    return Status::InvalidArgument(Name(id) + ": neither an endpoint nor a segment");
  }
  if (endpoint != nullptr && (endpoint->context().id() != state_->self.context() ||
                              &endpoint->context().runtime() != state_->runtime)) {
    return Status::InvalidArgument(Name(id) + ": endpoint of another context");
  }
  if (segment && (segment->process.runtime != state_->self.runtime() ||
                  segment->process.context != state_->self.context())) {
    return Status::InvalidArgument(Name(id) + ": segment of another context");
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->hosted[id] = Hosted{endpoint ? endpoint->MakeStartpoint() : Startpoint(), segment};
  state_->forward.erase(id);
  return Status::Ok();
}

Status VnodeTable::Migrate(VirtualNodeId id, const VnodeLocation& new_location) {
  if (!new_location.table.valid()) {
    return Status::InvalidArgument(Name(id) + ": null new location");
  }
  return state_->StopHosting(id, &new_location);
}

Status VnodeTable::Unhost(VirtualNodeId id) { return state_->StopHosting(id, nullptr); }

void VnodeTable::SetSegmentHook(VnodeSegmentHook hook) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->segment_hook = std::move(hook);
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
          s.rebinds.load(), s.failed.load(), s.rejected.load(),          s.refreshes.load()};
}

}  // namespace ukai::rt
