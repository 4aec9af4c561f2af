// The per-context collectives endpoint (hub.h).
#include "rt/coll/hub.h"

#include <chrono>
#include <thread>

#include "rt/coll/group_state.h"
#include "rt/core/runtime_impl.h"
#include "wire/rsr_frame.h"

namespace ukai::rt::internal {
namespace {

constexpr char kSlotKey[] = "ukai.coll.hub";

// What the context's slot holds: its destruction (with the context) closes the hub.
struct HubLink {
  std::shared_ptr<Hub> hub;
  ~HubLink() {
    if (hub) hub->ContextClosing();
  }
};

}  // namespace

Hub::Hub(Context* ctx, Endpoint*)
    : runtime_(&ctx->runtime()),
      runtime_id_(ctx->runtime().id()),
      context_id_(ctx->id()),
      context_(ctx) {}

Hub::~Hub() {
  if (listener_ != 0) runtime_->impl()->RemovePeerListener(listener_);
}

Result<std::shared_ptr<Hub>> Hub::For(Context& ctx) {
  RuntimeImpl* impl = ctx.runtime().impl();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    if (auto slot = impl->ContextSlot(ctx.id(), kSlotKey)) {
      return std::static_pointer_cast<HubLink>(slot)->hub;
    }
    Result<Endpoint*> ep = ctx.CreateEndpoint({kGroupEndpointId});
    if (!ep.ok()) {  // another thread is making the hub, or the id is someone else's
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::FailedPrecondition(
            "collectives: endpoint " + std::to_string(kGroupEndpointId) + " of context " +
            std::to_string(ctx.id()) + " is taken by something else (" + ep.status().ToString() +
            ")");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    auto hub = std::make_shared<Hub>(&ctx, *ep);
    std::weak_ptr<Hub> weak = hub;
    UKAI_RETURN_IF_ERROR((*ep)
                             ->RegisterHandler(coll::kCollHandler, HandlerKind::kNonThreaded,
                                               [weak](Rsr& m) {
                                                 if (auto h = weak.lock()) {
                                                   h->OnMessage(m.source(), m.payload());
                                                 }
                                               })
                             .status());
    UKAI_RETURN_IF_ERROR((*ep)
                             ->RegisterHandler(coll::kCollHelloHandler, HandlerKind::kNonThreaded,
                                               [weak](Rsr& m) {
                                                 if (auto h = weak.lock()) {
                                                   h->OnHello(m);
                                                 } else {
                                                   (void)m.Fail(Status::NotFound("closing"));
                                                 }
                                               })
                             .status());
    hub->listener_ = impl->AddPeerListener([weak](const PeerEvent& e) {
      if (auto h = weak.lock()) h->OnPeerEvent(e);
    });
    auto link = std::make_shared<HubLink>();
    link->hub = hub;
    std::shared_ptr<void> stored = impl->SetContextSlot(ctx.id(), kSlotKey, link);
    if (stored == nullptr) {
      link->hub = nullptr;
      return Status::FailedPrecondition("collectives: context " + std::to_string(ctx.id()) +
                                        " is being destroyed");
    }
    return std::static_pointer_cast<HubLink>(stored)->hub;
  }
}

Context* Hub::context() const {
  std::lock_guard<std::mutex> lock(mu_);
  return context_;
}

std::weak_ptr<GroupState>* Hub::FindGroup(uint64_t id) {
  for (auto& [gid, w] : groups_) {
    if (gid == id) return &w;
  }
  return nullptr;
}

Status Hub::Register(const std::shared_ptr<GroupState>& g) {
  std::vector<Unknown> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (context_ == nullptr) {
      return Status::FailedPrecondition("the group's context is being destroyed");
    }
    std::weak_ptr<GroupState>* known = FindGroup(g->id());
    if (known != nullptr && !known->expired()) {
      return Status::InvalidArgument(
          "a group with the same members and tag (id " + std::to_string(g->id()) +
          ") exists in this context already; GroupOptions::tag tells groups apart");
    }
    if (known != nullptr) {
      *known = g;
    } else {
      groups_.emplace_back(g->id(), g);
    }
    closed_.erase(g->id());
    auto u = unknown_.find(g->id());
    if (u != unknown_.end()) {
      waiting = std::move(u->second);
      for (const Unknown& m : waiting) unknown_bytes_ -= m.payload.size();
      unknown_.erase(u);
    }
  }
  for (const Unknown& m : waiting) OnMessage(m.from, m.payload);
  return Status::Ok();
}

void Hub::Unregister(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(groups_, [id](const auto& e) { return e.first == id; });
  closed_.insert(id);
}

bool Hub::Has(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::weak_ptr<GroupState>* w = FindGroup(id);
  return w != nullptr && !w->expired();
}

void Hub::Reject(const Status& why) {
  rejected_.fetch_add(1);
  runtime_->impl()->Trace("collectives: dropped a message: " + why.ToString());
}

void Hub::OnMessage(RuntimeId from, std::span<const uint8_t> payload) {
  Result<coll::Header> h = coll::DecodeMessage(payload);
  if (!h.ok()) return Reject(h.status());
  std::shared_ptr<GroupState> g;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (std::weak_ptr<GroupState>* w = FindGroup(h->group)) g = w->lock();
    if (g == nullptr) {
      if (closed_.count(h->group) != 0 || context_ == nullptr) return;  // a departed group's
      if (unknown_bytes_ + payload.size() > kUnknownLimitBytes) {
        rejected_.fetch_add(1);
        return;
      }
      unknown_bytes_ += payload.size();
      unknown_[h->group].push_back(Unknown{from, {payload.begin(), payload.end()}});
      return;
    }
  }
  g->OnMessage(from, *h, payload.subspan(coll::kCollHeaderBytes));
}

void Hub::OnHello(Rsr& m) {
  const std::span<const uint8_t> p = m.payload();
  if (p.size() != 8) {
    (void)m.Fail(Status::InvalidArgument("collectives: malformed group hello"));
    return;
  }
  const uint64_t id = wire::GetLe64(p.data());
  if (Has(id)) {
    (void)m.Reply(Buffer());
  } else {
    (void)m.Fail(Status::NotFound("group " + std::to_string(id) + " is not created here (yet)"));
  }
}

std::vector<std::shared_ptr<GroupState>> Hub::Groups() {
  std::vector<std::shared_ptr<GroupState>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, w] : groups_) {
    if (auto g = w.lock()) out.push_back(std::move(g));
  }
  return out;
}

void Hub::OnPeerEvent(const PeerEvent& e) {
  for (const auto& g : Groups()) g->OnPeerEvent(e);
}

void Hub::ContextClosing() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    context_ = nullptr;
    unknown_.clear();
    unknown_bytes_ = 0;
  }
  for (const auto& g : Groups()) g->ContextClosed();
}

}  // namespace ukai::rt::internal
