// Runtime start-up, shutdown, contexts, endpoints, module choice and the send path.
// Delivery and the progress engine are in dispatch.cc.
#include "rt/core/runtime_impl.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>
#include <thread>

#include "rt/modules/inproc/inproc_module.h"
#include "rt/modules/registry.h"
#include "rt/trace/recorder.h"

namespace ukai::rt::internal {

std::string Hex(uint64_t v) { return RuntimeIdString(v); }

RuntimeImpl::RuntimeImpl(RuntimeOptions options, RuntimeId id)
    : options_(std::move(options)), id_(id) {}

RuntimeImpl::~RuntimeImpl() {
  Finalize();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::string RuntimeImpl::Param(std::string_view key) const {
  {
    std::lock_guard<std::mutex> lock(params_mu_);
    params_asked_.insert(std::string(key));
  }
  auto it = options_.params.find(std::string(key));
  return it == options_.params.end() ? std::string() : it->second;
}

void RuntimeImpl::Trace(std::string_view line) const {
  if (!options_.trace) return;
  std::fprintf(stderr, "[ukai %s] %.*s\n", Hex(id_).c_str(), static_cast<int>(line.size()),
               line.data());
}

Status RuntimeImpl::Start(Runtime* self) {
  self_ = self;
  UKAI_RETURN_IF_ERROR(CheckRuntimeOptions(options_));
  if (options_.flush_timeout_ms < 0) {
    return Status::InvalidArgument("flush_timeout_ms must be >= 0");
  }
  Result<std::unique_ptr<Bootstrap>> boot = CreateBootstrap(options_.bootstrap);
  if (!boot.ok()) return boot.status();
  bootstrap_ = std::move(*boot);
  UKAI_RETURN_IF_ERROR(
      bootstrap_->Start().WithContext("bootstrap " + std::string(bootstrap_->name())));
  UKAI_RETURN_IF_ERROR(LoadSecret());
  one_host_ = bootstrap_->OneHost();
  oversubscribed_ = Oversubscribed(one_host_, bootstrap_->size());
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::IoError("eventfd failed");
  UKAI_RETURN_IF_ERROR(LoadModules());
  Result<std::vector<DescriptorTable>> world = bootstrap_->Exchange(*table_);
  if (!world.ok()) return world.status().WithContext("bootstrap exchange");
  world_ = std::move(*world);
  UKAI_RETURN_IF_ERROR(StartTracing());  // --ukai-otf2 (tracing.cc)
  Trace("bootstrap " + std::string(bootstrap_->name()) + ": rank " +
        std::to_string(bootstrap_->rank()) + " of " + std::to_string(bootstrap_->size()));
  UKAI_RETURN_IF_ERROR(ApplyPinning());  // before the threads start: they inherit it
  try {  // the system may refuse threads (limits): an error, not an abort
    pool_ = std::make_unique<ThreadPool>(
        options_.handler_threads, std::max(options_.handler_threads, options_.handler_threads_max));
    if (options_.progress_thread) {
      progress_thread_ = std::thread([this] { ProgressLoop(); });
      passes_by_modules_.store(true);
    }
  } catch (const std::system_error& e) {
    if (pool_) pool_->Stop();
    for (auto& m : modules_) m->Close();
    bootstrap_->Finish();
    return Status::Unavailable(std::string("cannot start the runtime's threads: ") + e.what());
  }
  started_ = true;
  return Status::Ok();
}

Status RuntimeImpl::LoadSecret() {
  if (options_.job_secret) {
    secret_ = std::make_unique<JobSecret>(JobSecret::FromKey(*options_.job_secret));
    return Status::Ok();
  }
  Result<JobSecret> s = !options_.job_secret_file.empty()
                            ? JobSecret::ReadFile(options_.job_secret_file)
                            : bootstrap_->Secret();
  if (!s.ok()) return s.status().WithContext("job secret");
  secret_ = std::make_unique<JobSecret>(*s);
  return Status::Ok();
}

void RuntimeImpl::NoteToken(const DescriptorTable& table) {
  const Descriptor* d = table.Find(kAuthDescriptor);
  if (d == nullptr || table.runtime == id_) return;
  Result<SecretKey> token = DecodeAuthDescriptor(d->bytes);
  if (!token.ok()) return;  // then the job secret is proved (and refused by another job)
  std::lock_guard<std::mutex> lock(tokens_mu_);
  tokens_[table.runtime] = *token;
}

PeerKey RuntimeImpl::KeyFor(RuntimeId peer) const {
  std::lock_guard<std::mutex> lock(tokens_mu_);
  auto it = tokens_.find(peer);
  return secret_->KeyTowards(it == tokens_.end() ? nullptr : &it->second);
}

Status RuntimeImpl::LoadModules() {
  std::vector<std::string> names = {"inproc"};
  const bool sim =
      std::find(options_.modules.begin(), options_.modules.end(), "sim") != options_.modules.end();
  if (sim) {  // every frame through the simulated machine: no other module, no bypass
    for (const std::string& n : options_.modules) {
      if (n != "sim") {
        return Status::InvalidArgument("module '" + n +
                                       "' cannot be loaded beside 'sim': under sim every frame "
                                       "goes through the simulated machine");
      }
    }
    names = {"sim"};
  } else if (options_.modules.empty()) {
    for (const ModuleEntry& e : ModuleTable()) {
      if (e.default_on && std::string_view(e.name) != "inproc") names.push_back(e.name);
    }
  } else {
    for (const std::string& n : options_.modules) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  ModuleEnv env{options_.inproc_fabric ? options_.inproc_fabric : NewInprocFabric(),
                options_.sim_fabric};
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = id_;
  std::vector<std::pair<std::unique_ptr<Module>, ModuleCaps>> loaded;
  for (const std::string& n : names) {
    Result<const ModuleEntry*> entry = FindModule(n);
    if (!entry.ok()) return entry.status();
    std::unique_ptr<Module> m = (*entry)->create(env);
    UKAI_RETURN_IF_ERROR(m->Init(this).WithContext("module " + n));
    Result<std::vector<uint8_t>> desc = m->MakeDescriptor();
    if (!desc.ok()) return desc.status().WithContext("module " + n + " descriptor");
    if (desc->size() > kMaxDescriptorBytes) {
      return Status::Internal("module " + n + " descriptor too large");
    }
    table->entries.push_back({n, std::move(*desc)});
    ModuleCaps caps = m->Query();
    Trace("loaded module " + n + " (latency ~" + std::to_string(caps.latency_us) + " us)");
    loaded.emplace_back(std::move(m), caps);
  }
  std::stable_sort(loaded.begin(), loaded.end(), [](const auto& a, const auto& b) {
    return a.second.latency_us < b.second.latency_us;
  });
  for (auto& [m, caps] : loaded) {
    min_block_bytes_ = std::min(min_block_bytes_, caps.min_block_bytes);
    modules_.push_back(std::move(m));
    caps_.push_back(caps);
  }
  // The join token (rt/core/job_secret.h): a startpoint of ours lets its holder connect.
  table->entries.push_back(
      {std::string(kAuthDescriptor), EncodeAuthDescriptor(secret_->join_token())});
  table_ = std::move(table);
  return CheckParams(names);
}

Status RuntimeImpl::CheckParams(const std::vector<std::string>& loaded) const {
  std::lock_guard<std::mutex> lock(params_mu_);
  for (const auto& [key, value] : options_.params) {
    const std::string prefix = key.substr(0, key.find('.'));
    if (!FindModule(prefix).ok()) {
      return Status::InvalidArgument("runtime parameter '" + key + "': no module named '" + prefix +
                                     "' (parameters are MODULE.NAME=VALUE)");
    }
    // A parameter of a module that is not loaded in this run is ignored: one command line
    // may serve runs with different --ukai-modules.
    if (std::find(loaded.begin(), loaded.end(), prefix) == loaded.end()) continue;
    if (params_asked_.count(key) == 0) {
      std::string known;
      for (const std::string& k : params_asked_) {
        if (k.rfind(prefix + ".", 0) != 0) continue;
        known += known.empty() ? "" : ", ";
        known += k;
      }
      return Status::InvalidArgument(
          "runtime parameter '" + key + "': module " + prefix +
          " has no such parameter (known: " + (known.empty() ? "none" : known) + ")");
    }
  }
  return Status::Ok();
}

std::vector<std::string> RuntimeImpl::module_names() const {
  std::vector<std::string> out;
  for (const auto& m : modules_) out.emplace_back(m->name());
  return out;
}

ByteBlock RuntimeImpl::AllocateBlock(size_t capacity) {
  if (capacity < min_block_bytes_) return ByteBlock();
  for (const auto& m : modules_) {
    ByteBlock b = m->AllocateBlock(capacity);
    if (b.capacity() >= capacity && b.capacity() != 0) return b;
  }
  return ByteBlock();
}

std::map<std::string, uint64_t> RuntimeImpl::ModuleCounters(std::string_view module) const {
  for (const auto& m : modules_) {
    if (m->name() == module) return m->Counters();
  }
  return {};
}

Status RuntimeImpl::Finalize() {
  if (finalized_ || !started_) {
    finalized_ = true;
    return Status::Ok();
  }
  finalized_ = true;
  requests_.FailAll(Status::Unavailable("runtime finalized"));  // before handlers wait
  std::vector<std::shared_ptr<ContextState>> all;
  {
    std::unique_lock<std::shared_mutex> lock(contexts_mu_);
    for (auto& [id, cs] : contexts_) all.push_back(cs);
  }
  for (auto& cs : all) DestroyContextState(cs);
  const Status flushed = FlushPeers();  // while progress still runs (peers may wait for us)
  stop_.store(true);
  sleeping_.store(true);
  Wake();
  if (progress_thread_.joinable()) progress_thread_.join();
  pool_->Stop();
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (auto& [id, peer] : peers_) {
      if (peer.object) peer.object->Close();
    }
  }
  for (auto& m : modules_) m->Close();
  // peers_ keeps its entries (closed objects) until the destructor: threads may hold
  // cached Peer pointers (PeerFor).
  const Status traced = FinishTracing();  // the OTF2 part (and the merge on rank 0)
  bootstrap_->Finish();
  return flushed.ok() ? traced : flushed;
}

// ---- contexts and endpoints ----

Result<Context*> RuntimeImpl::CreateContext(ContextOptions options) {
  if (finalized_) return Status::FailedPrecondition("runtime is finalized");
  auto cs = std::make_shared<ContextState>();
  cs->table = table_;
  cs->exit = std::move(options.exit);
  ContextId id = options.id;
  {
    std::unique_lock<std::shared_mutex> lock(contexts_mu_);
    if (id == 0) {
      while (contexts_.count(next_context_) != 0 || next_context_ == 0) ++next_context_;
      id = next_context_++;
    } else if (contexts_.count(id) != 0) {
      return Status::InvalidArgument("context id " + std::to_string(id) + " is taken");
    }
    cs->context = std::make_unique<Context>(self_, id, options.name, cs.get());
    contexts_[id] = cs;
  }
  Trace("context " + std::to_string(id) + " '" + options.name + "' booting");
  Status st = options.init ? options.init(*cs->context) : Status::Ok();
  if (!st.ok()) {
    {
      std::unique_lock<std::shared_mutex> lock(contexts_mu_);
      contexts_.erase(id);
    }
    rsr_dropped_ += cs->held.size();
    if (recorder_) {
      for (const HeldFrame& f : cs->held) TraceArrival(f.header, f.payload.size());
    }
    return st.WithContext("init routine of context '" + options.name + "'");
  }
  {
    std::lock_guard<std::mutex> lock(cs->mu);
    if (!cs->held.empty()) {
      std::lock_guard<std::mutex> rl(reinject_mu_);
      for (HeldFrame& f : cs->held) reinject_.push_back(std::move(f));
      cs->held.clear();
      has_reinject_.store(true);
    }
    if (recorder_) cs->trace = recorder_->OpenContext(id, options.name);
    cs->phase.store(ContextState::Phase::kReady);
  }
  Wake();
  return cs->context.get();
}

Context* RuntimeImpl::FindContext(ContextId id) const {
  std::shared_lock<std::shared_mutex> lock(contexts_mu_);
  auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second->context.get();
}

Status RuntimeImpl::DestroyContext(Context* ctx) {
  if (ctx == nullptr) return Status::InvalidArgument("DestroyContext: null context");
  std::shared_ptr<ContextState> cs;
  {
    std::unique_lock<std::shared_mutex> lock(contexts_mu_);
    auto it = contexts_.find(ctx->id());
    if (it == contexts_.end() || it->second->context.get() != ctx) {
      return Status::NotFound("DestroyContext: context " + std::to_string(ctx->id()) +
                              " is not alive in this runtime");
    }
    if (CurrentHandlerContext() == it->second.get()) {
      return Status::FailedPrecondition("DestroyContext called from a handler of context " +
                                        std::to_string(ctx->id()));
    }
    cs = it->second;
  }
  DestroyContextState(cs);
  return Status::Ok();
}

void RuntimeImpl::DestroyContextState(const std::shared_ptr<ContextState>& cs) {
  {
    std::lock_guard<std::mutex> lock(cs->mu);
    cs->phase.store(ContextState::Phase::kClosing);
    rsr_dropped_ += cs->held.size();
    if (recorder_) {
      for (const HeldFrame& f : cs->held) TraceArrival(f.header, f.payload.size());
    }
    cs->held.clear();
  }
  {
    std::unique_lock<std::shared_mutex> lock(contexts_mu_);
    contexts_.erase(cs->context->id());
  }
  // Handlers already dispatched finish first: non-threaded ones run inside a progress pass
  // that read the phase before we changed it (wait for that pass to end), the others are
  // counted in `running` (Dekker pairing with Dispatch: it counts itself before it reads
  // the phase).
  QuiesceProgress();
  while (cs->running.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (recorder_) recorder_->CloseContext(cs->trace);
  Trace("context " + std::to_string(cs->context->id()) + " exiting");
  if (cs->exit) cs->exit(*cs->context);
  std::map<std::string, std::shared_ptr<void>, std::less<>> slots;
  {
    std::lock_guard<std::mutex> lock(cs->mu);
    slots.swap(cs->slots);
  }
  slots.clear();  // outside the lock: a slot's destructor may use the runtime
}

std::shared_ptr<void> RuntimeImpl::ContextSlot(ContextId ctx, std::string_view key) const {
  std::shared_ptr<ContextState> cs;
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mu_);
    auto it = contexts_.find(ctx);
    if (it == contexts_.end()) return nullptr;
    cs = it->second;
  }
  std::lock_guard<std::mutex> lock(cs->mu);
  auto it = cs->slots.find(key);
  return it == cs->slots.end() ? nullptr : it->second;
}

std::shared_ptr<void> RuntimeImpl::SetContextSlot(ContextId ctx, std::string_view key,
                                                  std::shared_ptr<void> value) {
  std::shared_ptr<ContextState> cs;
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mu_);
    auto it = contexts_.find(ctx);
    if (it == contexts_.end()) return nullptr;
    cs = it->second;
  }
  std::lock_guard<std::mutex> lock(cs->mu);
  if (cs->phase.load() == ContextState::Phase::kClosing) return nullptr;
  auto [it, added] = cs->slots.emplace(std::string(key), std::move(value));
  return it->second;
}

uint64_t RuntimeImpl::AddPeerListener(std::function<void(const PeerEvent&)> fn) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  listeners_.emplace_back(next_listener_, std::move(fn));
  return next_listener_++;
}

void RuntimeImpl::RemovePeerListener(uint64_t id) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  std::erase_if(listeners_, [id](const auto& l) { return l.first == id; });
}

Status RuntimeImpl::PeerHealth(RuntimeId peer) {
  std::lock_guard<std::mutex> lock(peers_mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end() || !it->second.failed.load()) return Status::Ok();
  return Status::Unavailable("peer runtime " + Hex(peer) + " failed or left");
}

Result<Endpoint*> RuntimeImpl::CreateEndpoint(Context* ctx, ContextState* cs,
                                              EndpointOptions options) {
  std::lock_guard<std::mutex> lock(cs->mu);
  EndpointId id = options.id;
  if (id == 0) {
    while (cs->endpoints.count(cs->next_endpoint) != 0 || cs->next_endpoint == 0) {
      ++cs->next_endpoint;
    }
    id = cs->next_endpoint++;
  } else if (cs->endpoints.count(id) != 0) {
    return Status::InvalidArgument("endpoint id " + std::to_string(id) + " is taken in context " +
                                   std::to_string(ctx->id()));
  }
  auto es = std::make_unique<EndpointState>();
  es->endpoint = std::make_unique<Endpoint>(ctx, id, es.get());
  Endpoint* ep = es->endpoint.get();
  cs->endpoints[id] = std::move(es);
  return ep;
}

// ---- peers and sending ----

Result<Module*> RuntimeImpl::Choose(const DescriptorTable& table, std::string* why) {
  for (const auto& m : modules_) {
    const Descriptor* d = table.Find(m->name());
    if (d == nullptr) {
      *why += std::string(m->name()) + ": not in peer table; ";
      continue;
    }
    if (!m->CanReach(d->bytes)) {
      *why += std::string(m->name()) + ": " + m->Unreachable(d->bytes) + "; ";
      continue;
    }
    return m.get();
  }
  std::string theirs;
  for (const Descriptor& d : table.entries) {
    if (d.module != kAuthDescriptor) theirs += (theirs.empty() ? "" : ",") + d.module;
  }
  return Status::Unavailable("no module reaches runtime " + Hex(table.runtime) +
                             " (its modules: " + theirs + "; " + *why + ")");
}

Result<std::string> RuntimeImpl::SelectModule(const Startpoint& target) {
  Result<Peer*> p = PeerFor(target);
  if (!p.ok()) return p.status();
  return std::string((*p)->module->name());
}

OneSided* RuntimeImpl::LocalOneSided() const {
  for (const auto& m : modules_) {
    if (OneSided* o = m->one_sided(); o != nullptr) return o;
  }
  return nullptr;
}

std::pair<OneSided*, const Descriptor*> RuntimeImpl::OneSidedTo(const Startpoint& target) {
  // Not inside a pass of ours (a non-threaded handler): the rendezvous waits for an answer
  // that only a later pass could dispatch.
  if (InOwnProgressPass()) return {nullptr, nullptr};
  Result<Peer*> p = PeerFor(target);
  if (!p.ok() || (*p)->module->one_sided() == nullptr) return {nullptr, nullptr};
  const Descriptor* d = target.descriptors().Find((*p)->module->name());
  if (d == nullptr) return {nullptr, nullptr};
  return {(*p)->module->one_sided(), d};
}

namespace {

// The last peer a thread sent to, per thread: a stream of sends to one peer costs no lock
// and no hash lookup. Keyed by the runtime's address and its random id (a new runtime at a
// recycled address has another id); valid while that runtime lives (Peer entries are never
// erased before its destructor).
struct PeerCache {
  const void* runtime = nullptr;
  RuntimeId self = 0;
  RuntimeId peer = 0;
  Peer* entry = nullptr;
};
thread_local PeerCache tls_peer_cache;

}  // namespace

Peer* RuntimeImpl::CachedPeer(RuntimeId rid) const {
  const PeerCache& cache = tls_peer_cache;
  if (cache.runtime != this || cache.self != id_ || cache.peer != rid) return nullptr;
  Peer* p = cache.entry;
  if (p->failed.load(std::memory_order_acquire) || p->closed.load(std::memory_order_acquire)) {
    return nullptr;  // PeerFor says why
  }
  return p;
}

Result<Peer*> RuntimeImpl::PeerFor(const Startpoint& target) {
  const RuntimeId rid = target.runtime();
  PeerCache& cache = tls_peer_cache;
  if (cache.runtime == this && cache.self == id_ && cache.peer == rid) {
    UKAI_RETURN_IF_ERROR(PeerRefuses(*cache.entry, rid));
    return cache.entry;
  }
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    auto it = peers_.find(rid);
    if (it != peers_.end() && it->second.object) {
      UKAI_RETURN_IF_ERROR(PeerRefuses(it->second, rid));
      cache = PeerCache{this, id_, rid, &it->second};
      return &it->second;
    }
  }
  // Connection set-up runs without any runtime-wide lock held: one thread per peer
  // connects (others wanting the same peer wait for it), so a slow or unreachable peer
  // never stalls sends to other peers.
  {
    std::unique_lock<std::mutex> lock(connect_mu_);
    connect_cv_.wait(lock, [&] { return !connecting_.contains(rid); });
    {
      std::lock_guard<std::mutex> plock(peers_mu_);
      auto it = peers_.find(rid);
      if (it != peers_.end() && it->second.object) {  // raced: connected meanwhile
        UKAI_RETURN_IF_ERROR(PeerRefuses(it->second, rid));
        return &it->second;
      }
    }
    connecting_.emplace(rid, std::this_thread::get_id());
  }
  Result<Peer*> result = ConnectPeer(target);
  {
    std::lock_guard<std::mutex> lock(connect_mu_);
    connecting_.erase(rid);
  }
  connect_cv_.notify_all();
  return result;
}

Result<Peer*> RuntimeImpl::ConnectPeer(const Startpoint& target) {
  const RuntimeId rid = target.runtime();
  std::string why;
  Result<Module*> m = Choose(target.descriptors(), &why);
  if (!m.ok()) return m.status();
  const Descriptor* d = target.descriptors().Find((*m)->name());
  NoteToken(target.descriptors());
  Result<std::shared_ptr<CommObject>> obj = (*m)->Connect(rid, d->bytes);
  if (!obj.ok()) return obj.status().WithContext("connect to " + Hex(rid));
  if (connect_hook_for_testing_) connect_hook_for_testing_(rid);
  Trace("peer " + Hex(rid) + " via " + std::string((*m)->name()) +
        " (skipped: " + (why.empty() ? "none" : why) + ")");
  size_t index = 0;
  while (modules_[index].get() != *m) ++index;
  std::lock_guard<std::mutex> lock(peers_mu_);
  Peer& peer = peers_[rid];
  if (!peer.object) {
    peer.object = std::move(*obj);
    peer.module = *m;
    peer.max_payload = caps_[index].max_payload_bytes;
  }  // else an incoming connection was adopted meanwhile: keep that one (as before)
  return &peer;
}

inline Peer* RuntimeImpl::ReadyPeer(const Startpoint& target, size_t payload) const {
  if (!target.valid()) return nullptr;
  Peer* p = CachedPeer(target.runtime());
  if (p == nullptr || payload > p->max_payload) return nullptr;
  const uint64_t limit = options_.send_queue_bytes;
  return limit != 0 && p->object->QueuedBytes() >= limit ? nullptr : p;
}

Status RuntimeImpl::CheckSend(const Startpoint& target, size_t payload, bool wait_for_room,
                              std::chrono::milliseconds timeout, Peer** out) {
  if (!target.valid()) {
    ++send_errors_;
    return Status::InvalidArgument("SendRsr: null startpoint");
  }
  // Fast path: the peer this thread sent to last, working (no Status built on the way).
  Peer* p = CachedPeer(target.runtime());
  if (p == nullptr) {
    Result<Peer*> peer = PeerFor(target);
    if (!peer.ok()) {
      ++send_errors_;
      return peer.status();
    }
    p = *peer;
  }
  if (payload > p->max_payload) {
    ++send_errors_;
    return Status::OutOfRange("SendRsr: payload of " + std::to_string(payload) +
                              " bytes exceeds the " + std::string(p->module->name()) +
                              " limit of " + std::to_string(p->max_payload));
  }
  const uint64_t limit = options_.send_queue_bytes;
  if (limit != 0 && p->object->QueuedBytes() >= limit) {
    if (Status room = AwaitRoom(*p, target.runtime(), wait_for_room, timeout); !room.ok()) {
      ++send_errors_;
      return room;
    }
  }
  *out = p;
  return Status::Ok();
}

namespace {

CommObject::RsrRoute RouteOf(const Startpoint& target, HandlerId handler) {
  CommObject::RsrRoute r;
  r.context = target.context();
  r.endpoint = target.endpoint();
  r.handler = handler.value;
  if (target.address()) {
    r.flags = wire::kFlagHasAddress;
    r.address = *target.address();
  }
  return r;
}

}  // namespace

inline bool RuntimeImpl::SendInPlace(Peer& p, const Startpoint& target, HandlerId handler,
                                     std::span<const uint8_t> payload) {
  // Recording needs the frame (SendRecorded); in place, the RSR never becomes one.
  if (!p.object->sends_in_place() || recorder_) return false;
  const FrameClass cls = IsAnswerHandler(handler) ? FrameClass::kAnswer : FrameClass::kUser;
  return p.log.TrySendInPlace(*p.object, cls, RouteOf(target, handler), payload);
}

Status RuntimeImpl::Send(ByteBlock&& frame, const Startpoint& target, HandlerId handler,
                         bool wait_for_room, std::chrono::milliseconds timeout) {
  const size_t payload = frame.size() - wire::kHeaderSize;
  Peer* p = ReadyPeer(target, payload);
  if (p == nullptr) [[unlikely]] {
    if (Status st = CheckSend(target, payload, wait_for_room, timeout, &p); !st.ok()) return st;
  }
  // A heap frame the channel would copy into one ring record anyway goes there without its
  // header being encoded (the channel declines the sizes it sends another way).
  if (frame.source() == nullptr &&
      SendInPlace(*p, target, handler, frame.span().subspan(wire::kHeaderSize))) {
    return Status::Ok();
  }
  return SendFrame(*p, std::move(frame), target, handler, payload);
}

Status RuntimeImpl::SendBytes(std::span<const uint8_t> payload, const Startpoint& target,
                              HandlerId handler, std::chrono::milliseconds timeout) {
  Peer* p = ReadyPeer(target, payload.size());
  if (p == nullptr) [[unlikely]] {
    if (Status st = CheckSend(target, payload.size(), /*wait_for_room=*/true, timeout, &p);
        !st.ok()) {
      return st;
    }
  }
  if (SendInPlace(*p, target, handler, payload)) return Status::Ok();
  // From the caller's memory (waiting until the module no longer reads it) where the module
  // can and the caller may wait: no timeout asked for (a lent send cannot be taken back).
  if (payload.size() >= p->object->lends_from_bytes() && timeout.count() == 0) [[unlikely]] {
    if (Status st; TrySendLent(*p, target, handler, payload, &st)) return st;
  }
  // As a frame: in the memory the module sends from fastest when it has some (NewBuffer's).
  const size_t size = wire::kHeaderSize + payload.size();
  ByteBlock frame = AllocateBlock(size);
  if (frame.capacity() < size) frame = ByteBlock(size);
  frame.Resize(size);
  if (!payload.empty())
    std::memcpy(frame.data() + wire::kHeaderSize, payload.data(), payload.size());
  return SendFrame(*p, std::move(frame), target, handler, payload.size());
}

Status RuntimeImpl::SendFrame(Peer& p, ByteBlock&& frame, const Startpoint& target,
                              HandlerId handler, size_t payload) {
  EncodeRsrHeader(&frame, target, handler, /*flags=*/0, payload);
  if (Status st = SendLogged(p, IsAnswerHandler(handler) ? FrameClass::kAnswer : FrameClass::kUser,
                             std::move(frame));
      !st.ok()) {
    ++send_errors_;
    return st;
  }
  rsr_sent_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();  // built in place: no move of a Status on the hot path
}

void RuntimeImpl::EncodeRsrHeader(ByteBlock* frame, const Startpoint& target, HandlerId handler,
                                  uint32_t flags, size_t payload) const {
  wire::FrameHeader h;
  h.kind = wire::FrameKind::kRsr;
  h.flags = flags;
  h.payload_len = static_cast<uint32_t>(payload);
  h.source = id_;
  h.target = target.runtime();
  h.context = target.context();
  h.endpoint = target.endpoint();
  h.handler = handler.value;
  if (target.address()) {
    h.flags |= wire::kFlagHasAddress;
    h.address = *target.address();
  }
  wire::EncodeHeader(h, {frame->data(), wire::kHeaderSize});
}

Result<Startpoint> RuntimeImpl::WorldStartpoint(int rank, ContextId context,
                                                EndpointId endpoint) const {
  if (rank < 0 || rank >= static_cast<int>(world_.size())) {
    return Status::OutOfRange("rank " + std::to_string(rank) + " outside 0.." +
                              std::to_string(world_.size() - 1));
  }
  if (context == 0 || endpoint == 0) {
    return Status::InvalidArgument("WorldStartpoint: context and endpoint ids must be >= 1");
  }
  return Startpoint(std::make_shared<const DescriptorTable>(world_[rank]), context, endpoint);
}

RuntimeStats RuntimeImpl::stats() const {
  RuntimeStats s;
  s.rsr_sent = rsr_sent_.load();
  std::vector<const FrameLog*> logs;  // peers are never erased: read without peers_mu_ held
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (const auto& [rid, p] : peers_) logs.push_back(&p.log);
  }
  for (const FrameLog* log : logs) s.rsr_sent += log->in_place_sends();
  s.rsr_delivered = rsr_delivered_.load();
  s.frames_rejected = frames_rejected_.load();
  s.rsr_dropped = rsr_dropped_.load();
  s.send_errors = send_errors_.load();
  s.handler_errors = handler_errors_.load();
  s.rsr_refused = rsr_refused_.load();
  s.answers_lost = answers_lost_.load();
  if (pool_) s.handler_threads_peak = static_cast<uint64_t>(pool_->peak_threads());
  return s;
}

}  // namespace ukai::rt::internal
