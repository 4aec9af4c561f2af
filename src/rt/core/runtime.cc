// The public Runtime, Context and Endpoint calls: thin forwards to RuntimeImpl.
#include <random>

#include "rt/core/runtime_impl.h"

namespace ukai::rt {

using internal::RuntimeImpl;

namespace {

RuntimeId NewRuntimeId() {
  std::random_device rd;
  RuntimeId id = 0;
  while (id == 0) id = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return id;
}

}  // namespace

Runtime::Runtime(std::unique_ptr<RuntimeImpl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() {
  if (impl_) impl_->Finalize();
}

Result<std::unique_ptr<Runtime>> Runtime::Init(RuntimeOptions options) {
  auto rt =
      std::make_unique<Runtime>(std::make_unique<RuntimeImpl>(std::move(options), NewRuntimeId()));
  Status st = rt->impl_->Start(rt.get());
  if (!st.ok()) return st.WithContext("ukai runtime init");
  return rt;
}

Result<std::unique_ptr<Runtime>> Runtime::Init(int& argc, char** argv, RuntimeOptions base) {
  UKAI_RETURN_IF_ERROR(ApplyRuntimeEnv(&base));
  UKAI_RETURN_IF_ERROR(ParseRuntimeArgs(argc, argv, &base));
  return Init(std::move(base));
}

Status Runtime::Finalize() { return impl_->Finalize(); }
RuntimeId Runtime::id() const { return impl_->id(); }
int Runtime::rank() const { return impl_->rank(); }
int Runtime::size() const { return impl_->size(); }
const DescriptorTable& Runtime::descriptors() const { return *impl_->table(); }
std::shared_ptr<const DescriptorTable> Runtime::shared_descriptors() const {
  return impl_->table();
}
std::vector<std::string> Runtime::modules() const { return impl_->module_names(); }

Result<Context*> Runtime::CreateContext(ContextOptions options) {
  return impl_->CreateContext(std::move(options));
}
Status Runtime::DestroyContext(Context* ctx) { return impl_->DestroyContext(ctx); }
Context* Runtime::FindContext(ContextId id) const { return impl_->FindContext(id); }

Status Runtime::SendRsr(Buffer&& buffer, const Startpoint& target, HandlerId handler,
                        SendOptions options) {
  if (options.timeout.count() < 0) return Status::InvalidArgument("SendRsr: negative timeout");
  return impl_->Send(buffer.TakeBlock(), target, handler, /*wait_for_room=*/true, options.timeout);
}

Status Runtime::SendRsr(const Buffer& buffer, const Startpoint& target, HandlerId handler,
                        SendOptions options) {
  Buffer copy(buffer);
  return SendRsr(std::move(copy), target, handler, options);
}

Status Runtime::SendRsrBytes(std::span<const uint8_t> payload, const Startpoint& target,
                             HandlerId handler, SendOptions options) {
  if (options.timeout.count() < 0) {
    return Status::InvalidArgument("SendRsrBytes: negative timeout");
  }
  return impl_->SendBytes(payload, target, handler, options.timeout);
}

Status Runtime::TrySendRsr(Buffer& buffer, const Startpoint& target, HandlerId handler) {
  return impl_->TrySend(buffer, target, handler);
}

Status Runtime::ClosePeer(const Startpoint& peer_of, std::chrono::milliseconds timeout) {
  return impl_->ClosePeer(peer_of, timeout);
}

Buffer Runtime::NewBuffer(size_t payload_capacity) {
  ByteBlock b = impl_->AllocateBlock(Buffer::kHeadroom + payload_capacity);
  if (b.capacity() == 0) return Buffer(payload_capacity);
  return Buffer::FromBlock(std::move(b));
}

Result<Startpoint> Runtime::WorldStartpoint(int rank, ContextId context,
                                            EndpointId endpoint) const {
  return impl_->WorldStartpoint(rank, context, endpoint);
}
Status Runtime::Barrier() { return impl_->Barrier(); }
Result<std::string> Runtime::SelectModule(const Startpoint& target) {
  return impl_->SelectModule(target);
}
int Runtime::Progress() { return impl_->Progress(); }

std::chrono::nanoseconds Runtime::Now() const {
  if (internal::VirtualTime* vt = impl_->virtual_time(); vt != nullptr) return vt->Now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}
RuntimeStats Runtime::stats() const { return impl_->stats(); }

// ---- Context ----

Result<Endpoint*> Context::CreateEndpoint(EndpointOptions options) {
  return runtime_->impl()->CreateEndpoint(this, state_, options);
}

Endpoint* Context::FindEndpoint(EndpointId id) const {
  internal::EndpointState* es = state_->FindEndpoint(id);
  return es == nullptr ? nullptr : es->endpoint.get();
}

// ---- Endpoint ----

Result<HandlerId> Endpoint::RegisterHandler(std::string_view name, HandlerKind kind,
                                            Handler handler) {
  UKAI_RETURN_IF_ERROR(internal::CheckHandlerName(name).WithContext("RegisterHandler"));
  if (!handler)
    return Status::InvalidArgument("RegisterHandler: empty handler for " + std::string(name));
  const HandlerId id = HandlerId::Of(name);
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->handlers.find(id.value);
  if (it != state_->handlers.end()) {
    if (it->second->name == name) {
      return Status::InvalidArgument("handler '" + std::string(name) +
                                     "' is already registered on endpoint " + std::to_string(id_));
    }
    return Status::InvalidArgument("handler id collision on endpoint " + std::to_string(id_) +
                                   ": '" + std::string(name) + "' and '" + it->second->name +
                                   "' both hash to " + std::to_string(id.value));
  }
  state_->handlers[id.value] = std::make_unique<internal::HandlerEntry>(
      internal::HandlerEntry{std::string(name), kind, std::move(handler)});
  return id;
}

Result<HandlerId> Endpoint::FindHandler(std::string_view name) const {
  UKAI_RETURN_IF_ERROR(internal::CheckHandlerName(name).WithContext("FindHandler"));
  const HandlerId id = HandlerId::Of(name);
  const internal::HandlerEntry* he = state_->Find(id.value);
  if (he == nullptr || he->name != name) {
    return Status::NotFound("endpoint " + std::to_string(id_) + " has no handler '" +
                            std::string(name) + "' (its handlers: " + state_->Names() + ")");
  }
  return id;
}

Startpoint Endpoint::MakeStartpoint() const {
  return Startpoint(context_->runtime().shared_descriptors(), context_->id(), id_);
}

Startpoint Endpoint::MakeStartpoint(uint64_t address) const {
  return Startpoint(context_->runtime().shared_descriptors(), context_->id(), id_, address);
}

}  // namespace ukai::rt
