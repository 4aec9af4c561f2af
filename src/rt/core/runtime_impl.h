// Internal state of a Runtime: contexts, endpoints, handler tables, the peer table, the
// progress engine and the handler pool. Not part of the public API.
//
// Locking (outermost first; no lock is held while a handler or user callback runs):
//   connect_mu_  guards connecting_ (peers being connected; module Connect itself runs
//                with no runtime lock held, one thread per peer)
//   contexts_mu_ (shared_mutex) the context map; ContextState::mu its endpoints;
//   EndpointState::mu its handler table; peers_mu_ the peer table; reinject_mu_, events_mu_.
// Delivered frames and dispatch live on the progress thread (progressing_ held).
#ifndef UKAI_RT_CORE_RUNTIME_IMPL_H_
#define UKAI_RT_CORE_RUNTIME_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "rt/core/bootstrap.h"
#include "rt/core/frame_log.h"
#include "rt/core/module.h"
#include "rt/core/requests.h"
#include "rt/core/thread_pool.h"
#include "ukai/rt/runtime.hpp"

namespace ukai::rt::trace {
class Recorder;
class Location;
}  // namespace ukai::rt::trace

namespace ukai::rt::internal {

// "0123456789abcdef"-style 16-digit hex of a runtime id (traces, messages).
std::string Hex(uint64_t v);

// The CPU a process of rank `rank` in `size` pins itself to under pin mode `pin` ("auto":
// only when started by `ukai launch` — bootstrap "launcher" — and size <= the CPUs
// allowed; "core": always; "off": never), from the CPUs it may run on (`allowed`, in
// order): allowed[rank % allowed.size()], or -1 for no pinning (fast_defaults.cc).
int PinCpu(std::string_view pin, std::string_view bootstrap, int rank, int size,
           const std::vector<int>& allowed);
// True when a job of `size` processes, all on this host (`one_host`), has more of them than
// the host has CPUs online, or when that count cannot be read (fast_defaults.cc).
bool Oversubscribed(bool one_host, int size);

// Makes `loc` the calling thread's OTF2 location for the scope (tracing.cc): request
// callbacks and peer-event callbacks run on the progress location. No-op for null.
class TraceScope {
 public:
  explicit TraceScope(trace::Location* loc);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  trace::Location* prev_;
};

class ContextState;
// The context whose handler runs on this thread, or nullptr (DestroyContext uses it to
// refuse destroying a context from its own handler).
ContextState* CurrentHandlerContext();

struct HandlerEntry {
  std::string name;
  HandlerKind kind;
  Handler fn;
};

class EndpointState {
 public:
  std::mutex mu;
  std::unordered_map<uint32_t, std::unique_ptr<HandlerEntry>> handlers;
  std::unique_ptr<Endpoint> endpoint;
  // Lookup under mu; entries are never removed, so the pointer stays valid while the
  // context lives.
  const HandlerEntry* Find(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = handlers.find(id);
    return it == handlers.end() ? nullptr : it->second.get();
  }
  // The registered names, sorted, ", "-separated ("none" when empty).
  std::string Names();
};

// Longest handler name RegisterHandler accepts.
inline constexpr size_t kMaxHandlerName = 256;
// OK when `name` is a valid handler name: 1..kMaxHandlerName characters of A-Z a-z 0-9 and
// _ . : / - (so a stray space or control character is caught at registration).
Status CheckHandlerName(std::string_view name);

// The request id of RSR `h` (0 when it is no request); trims the request trailer off
// `payload` (CheckServiceFrame made sure it is there). Inline: once per dispatched RSR.
inline uint64_t SplitRequest(const wire::FrameHeader& h, std::span<const uint8_t>* payload) {
  if ((h.flags & wire::kFlagRequest) == 0) return 0;
  const size_t n = payload->size() - wire::kRequestTrailer;
  const uint64_t id = wire::GetLe64(payload->data() + n);
  *payload = payload->first(n);
  return id;
}

// A frame kept for later dispatch (owned bytes): held while its context boots.
struct HeldFrame {
  wire::FrameHeader header;
  ByteBlock storage;
  std::span<const uint8_t> payload;
};

class ContextState {
 public:
  enum class Phase { kBooting, kReady, kClosing };
  std::unique_ptr<Context> context;
  std::function<void(Context&)> exit;
  std::shared_ptr<const DescriptorTable> table;
  mutable std::mutex mu;  // endpoints, next_endpoint, held, phase
  std::map<EndpointId, std::unique_ptr<EndpointState>> endpoints;
  EndpointId next_endpoint = 1;
  std::atomic<Phase> phase{Phase::kBooting};
  std::vector<HeldFrame> held;
  // Threaded handlers running or queued, and non-threaded ones dispatched on the slow path,
  // for this context (non-threaded ones on the route cache are covered by QuiesceProgress).
  std::atomic<int> running{0};
  // State of the runtime's layers per context (RuntimeImpl::ContextSlot), under `mu`;
  // dropped after the exit routine.
  std::map<std::string, std::shared_ptr<void>, std::less<>> slots;
  // Its OTF2 location while it is ready (null when not recording; tracing.cc).
  trace::Location* trace = nullptr;

  EndpointState* FindEndpoint(EndpointId id) const {
    std::lock_guard<std::mutex> lock(mu);
    auto it = endpoints.find(id);
    return it == endpoints.end() ? nullptr : it->second.get();
  }
};

// One peer runtime. Entries are never erased while the runtime lives (Finalize closes the
// objects but keeps the entries), and `object`, `module`, `max_payload` never change once
// `object` is set: so a Peer* with a set object may be cached and read without peers_mu_
// (see PeerFor's per-thread cache); `failed` is atomic for those readers.
struct Peer {
  std::shared_ptr<CommObject> object;
  Module* module = nullptr;
  uint64_t max_payload = 0;
  std::atomic<bool> failed{false};
  std::atomic<bool> closed{false};  // Runtime::ClosePeer: later sends fail (kFailedPrecondition)
  bool notified = false;
  FrameLog log;  // classes of the frames sent (every send goes through log.Send)
};

// A frame delivered by a module during its Progress(), dispatched right after it.
struct Delivered {
  Delivered() = default;
  Delivered(const wire::FrameHeader& h, std::span<const uint8_t> p) : header(h), payload(p) {}
  wire::FrameHeader header;
  std::span<const uint8_t> payload;
  ByteBlock storage;  // non-empty when the module gave its storage away
};

class RuntimeImpl final : public ModuleHost {
 public:
  RuntimeImpl(RuntimeOptions options, RuntimeId id);
  ~RuntimeImpl() override;

  Status Start(Runtime* self);
  Status Finalize();

  // ModuleHost.
  RuntimeId runtime_id() const override { return id_; }
  // Records every key asked for, so that LoadModules() can reject parameters no loaded
  // module knows (a typo must not be silently ignored).
  std::string Param(std::string_view key) const override;
  bool tracing() const override { return options_.trace; }
  void Trace(std::string_view line) const override;
  void Deliver(const wire::FrameHeader& header, std::span<const uint8_t> payload,
               ByteBlock* owned) override;
  Status DeliverFrame(std::span<const uint8_t> frame, ByteBlock* owned) override;
  void RejectFrame(const Status& why) override;
  void AdoptIncoming(RuntimeId peer, std::shared_ptr<CommObject> object) override;
  // Tests only: `hook` runs on the connecting thread after a module's Connect to a peer
  // succeeded and before the peer entry is recorded (set before any connect; may be empty).
  void SetConnectHookForTesting(std::function<void(RuntimeId)> hook) {
    connect_hook_for_testing_ = std::move(hook);
  }
  // Whether a working entry for `rid` is recorded (tests, diagnostics).
  bool KnowsPeer(RuntimeId rid) {
    Result<Peer*> p = RecordedPeer(rid);
    return p.ok() && *p != nullptr;
  }
  void PeerFailed(RuntimeId peer, std::string_view module, bool orderly,
                  const Status& why) override;
  void Wake() override;
  bool has_progress_thread() const override { return options_.progress_thread; }
  bool RunProgressPass() override;
  const JobSecret* job_secret() const override { return secret_.get(); }
  PeerKey KeyFor(RuntimeId peer) const override;
  bool job_on_one_host() const override { return one_host_; }
  bool oversubscribed() const override { return oversubscribed_; }
  void SetVirtualTime(VirtualTime* hooks) override { vt_ = hooks; }
  // The sim module's hooks (null without it). Set once in Init, before any other thread.
  VirtualTime* virtual_time() const { return vt_; }

  // Runtime API.
  Result<Context*> CreateContext(ContextOptions options);
  Status DestroyContext(Context* ctx);
  Context* FindContext(ContextId id) const;
  Result<Endpoint*> CreateEndpoint(Context* ctx, ContextState* state, EndpointOptions options);
  // `wait_for_room` false: the caller (TrySend) checked the peer's queue already; else
  // it waits at most `timeout` for room (0 = no limit, SendOptions).
  Status Send(ByteBlock&& frame, const Startpoint& target, HandlerId handler,
              bool wait_for_room = true,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Runtime::SendRsrBytes: `payload` copied, in place into the channel where it can
  // (CommObject::TrySendInPlace), else as a frame.
  Status SendBytes(std::span<const uint8_t> payload, const Startpoint& target, HandlerId handler,
                   std::chrono::milliseconds timeout);
  Result<std::string> SelectModule(const Startpoint& target);
  // The one-sided facility (rt/core/one_sided.h) of a loaded module (the first that has one),
  // or null; and that of the module carrying traffic to `target` with the target's descriptor
  // of that module (both null when that module has none, the target is unreachable, or the
  // caller runs inside this runtime's progress pass, e.g. a non-threaded handler).
  OneSided* LocalOneSided() const;
  // True on the thread running this runtime's progress pass (InOwnProgressPass).
  bool InProgressPass() const { return InOwnProgressPass(); }
  std::pair<OneSided*, const Descriptor*> OneSidedTo(const Startpoint& target);
  int Progress();
  Result<Startpoint> WorldStartpoint(int rank, ContextId context, EndpointId endpoint) const;
  // The bootstrap's barrier (recorded as a collective when recording; tracing.cc); under
  // the sim module, SimBarrier: its rounds are frames through the simulated network.
  Status Barrier();
  Status SimBarrier();

  RuntimeId id() const { return id_; }
  int rank() const { return bootstrap_->rank(); }
  int size() const { return bootstrap_->size(); }
  const std::shared_ptr<const DescriptorTable>& table() const { return table_; }
  std::vector<std::string> module_names() const;
  RuntimeStats stats() const;
  // Storage of >= capacity bytes from the first module that offers it (AllocateBlock), or
  // an empty block. Thread safe.
  ByteBlock AllocateBlock(size_t capacity);
  // The named counters of loaded module `module` (Module::Counters; empty if not loaded).
  std::map<std::string, uint64_t> ModuleCounters(std::string_view module) const;

  // ---- hooks for the runtime's layers (the collectives, src/rt/coll/) ----
  // The object stored under `key` for context `ctx` (null: none yet, or no such context).
  // SetContextSlot stores `value` unless the key is taken and returns what the slot holds
  // then (null when the context is gone). Slots are dropped when the context is destroyed,
  // after its exit routine. Thread safe.
  std::shared_ptr<void> ContextSlot(ContextId ctx, std::string_view key) const;
  std::shared_ptr<void> SetContextSlot(ContextId ctx, std::string_view key,
                                       std::shared_ptr<void> value);
  // Peer events for the layers, besides RuntimeOptions::on_peer_event: `fn` runs on the
  // progress thread (after the peer's requests failed) and must not block. Thread safe.
  uint64_t AddPeerListener(std::function<void(const PeerEvent&)> fn);
  void RemovePeerListener(uint64_t id);
  // OK, or kUnavailable when runtime `peer` is known to have failed or left.
  Status PeerHealth(RuntimeId peer);

  // ---- handler errors, refusals, request/reply (service.cc) ----
  // Runs `he` for `rsr`: an exception it throws (BadResultAccess from a failed unpack, or
  // any other) is caught, counted in handler_errors and reported (ErrorEvent); a request is
  // then answered with the error. Any thread.
  void InvokeHandler(const HandlerEntry* he, Rsr& rsr) {
    if (recorder_) [[unlikely]]
      return InvokeTraced(he, rsr);
    InvokeHandlerBody(he, rsr);
  }
  // Request/reply (requests.cc): registers and sends a request (frame = header room +
  // payload; the request trailer is appended here).
  Result<std::shared_ptr<PendingRequest>> SendRequest(ByteBlock&& frame, const Startpoint& target,
                                                      HandlerId handler, ReplyCallback done,
                                                      RequestOptions options);
  // Sends the answer of a Replier (body = header room + payload, or the error).
  Status SendAnswer(const Replier::State& r, ByteBlock&& body, const Status& status);
  RequestTable& requests() { return requests_; }

  // ---- OTF2 recording (tracing.cc; docs/otf2-recording.md) ----
  // The recorder, null when RuntimeOptions::otf2 is empty (then nothing below is called).
  trace::Recorder* recorder() const { return recorder_.get(); }
  // The location of the calling thread: its handler's context, else the location a
  // TraceScope set (the progress location for callbacks), else the main location.
  trace::Location* TraceLocation() const;
  // The progress location (created when first needed).
  trace::Location* ProgressLocation() const;
  // A request ended without its answer (timeout, cancel, failure): its receive is cancelled.
  void TraceRequestEnded(PendingRequest& p);

 private:
  Status LoadModules();
  // The job secret: RuntimeOptions::job_secret, else job_secret_file, else the bootstrap's.
  Status LoadSecret();
  // Remembers the join token `table` carries (its "auth" entry) for KeyFor.
  void NoteToken(const DescriptorTable& table);
  // Every --ukai-param key whose prefix names a loaded module must have been read by it.
  Status CheckParams(const std::vector<std::string>& loaded) const;
  Result<Module*> Choose(const DescriptorTable& table, std::string* why);
  Result<Peer*> PeerFor(const Startpoint& target);
  // The working peer entry of `rid` when it is this thread's cached one (see PeerFor),
  // else nullptr (then PeerFor finds, connects or says why not). No lock, no Status.
  Peer* CachedPeer(RuntimeId rid) const;
  Result<Peer*> ConnectPeer(const Startpoint& target);
  void DispatchDelivered();
  // Dispatch's common case (a non-threaded handler of a ready context on a cached route);
  // false when it did nothing and Dispatch must decide.
  bool DispatchRouted(const Delivered& d);
  void Dispatch(Delivered& d);
  void Run(const std::shared_ptr<ContextState>& cs, EndpointState* es, const HandlerEntry* he,
           Delivered& d);
  // Inlined into the dispatch paths (dispatch.cc, its only callers): once per RSR.
  [[gnu::always_inline]] void RunNonThreaded(ContextState* cs, EndpointState* es,
                                             const HandlerEntry* h, const wire::FrameHeader& header,
                                             std::span<const uint8_t> payload);
  void DrainReinjected();
  void DrainEvents();
  void ProgressLoop();
  // One pass over the modules; `all` = also poll the slow ones (see dispatch.cc).
  int ProgressPass(bool all);
  size_t current_module_ = 0;  // index of the module in Progress() (progress thread)
  uint64_t passes_ = 0;        // progress thread only
  // The last kRoutes dispatch targets (progress thread only): an RSR to one of them costs
  // no lock (else three lock round trips: context map, endpoint map, handler table). Valid
  // while the context is in phase kReady (endpoints and handler entries live as long as
  // their context).
  struct Route {
    uint32_t context = 0, endpoint = 0, handler = 0;
    std::shared_ptr<ContextState> cs;
    EndpointState* es = nullptr;
    const HandlerEntry* he = nullptr;
  };
  static constexpr size_t kRoutes = 4;
  Route routes_[kRoutes];
  size_t next_route_ = 0;
  void DestroyContextState(const std::shared_ptr<ContextState>& cs);

  // ---- service frames (service.cc) ----
  // False (and the frame rejected) when a request or reply frame is too short for its
  // trailer, has both flags, or a request id 0.
  bool CheckServiceFrame(const wire::FrameHeader& h, std::span<const uint8_t> payload);
  // Tells the sender of RSR `h` that its target context, endpoint or handler is not here
  // (naming the handlers the endpoint has): a refusal frame (kFlagReply, kNotFound), or the
  // request's error reply. Never answers a reply. Progress thread.
  void Refuse(const wire::FrameHeader& h, std::span<const uint8_t> payload);
  // "has no handler 7 on endpoint 1 of context 2 (its handlers: a, b)" and the like.
  std::string MissingTarget(const wire::FrameHeader& h) const;
  // A reply or refusal (kFlagReply) arrived. Progress thread.
  void HandleReply(Delivered& d);
  // Sends a reply frame for (`of`, `request`) carrying `body` (status OK) or the error
  // message of `status` to runtime `to`.
  Status SendReply(RuntimeId to, const wire::FrameHeader& of, uint64_t request, ByteBlock&& body,
                   const Status& status);
  // The peer entry of runtime `rid`, connecting through the bootstrap's tables or the
  // inproc fabric when there is none yet (a reply's way back). A connect to `rid` that
  // another thread has in progress is waited for first: its channel can be live in the
  // module (the peer already sends on it) before the entry is recorded.
  Result<Peer*> PeerById(RuntimeId rid);
  // The recorded working entry of `rid`, nullptr when there is none, or why it refuses.
  Result<Peer*> RecordedPeer(RuntimeId rid);
  // Calls options_.on_error (exceptions it throws are ignored).
  void ReportError(const ErrorEvent& e);
  std::atomic<uint64_t> handler_errors_{0}, rsr_refused_{0};
  std::atomic<uint64_t> answers_lost_{0};  // answers to departed peers (FlushObjects)
  // Answers a request whose handler returned (`failed`: OK, or what it threw) if the
  // handler did not.
  void AnswerIfUnanswered(const HandlerEntry* he, Rsr& rsr, const Status& failed);
  RequestTable requests_;

  // Writes the RSR header of `frame` (its first wire::kHeaderSize bytes) for `target` and
  // `handler`, with `flags` (kFlagRequest for a request; kFlagHasAddress is added when the
  // startpoint carries an address) and `payload` bytes after the header.
  void EncodeRsrHeader(ByteBlock* frame, const Startpoint& target, HandlerId handler,
                       uint32_t flags, size_t payload) const;
  // The checks of every RSR send: a valid target, a working peer (the one this
  // thread sent to last without a lookup), a payload its module carries, room in its send
  // queue (waiting as Send's arguments say). OK with *out set, or the error (counted).
  Status CheckSend(const Startpoint& target, size_t payload, bool wait_for_room,
                   std::chrono::milliseconds timeout, Peer** out);
  // CheckSend's common case without a Status: the cached peer when it passes every check,
  // else null (CheckSend then says why, or connects, or waits for room).
  Peer* ReadyPeer(const Startpoint& target, size_t payload) const;
  // Sends the RSR in place through `p`'s object when it can (not while recording); true
  // when it did (counted as sent by its frame log). Inlined into its two callers (Send,
  // SendBytes): once per small RSR.
  [[gnu::always_inline]] bool SendInPlace(Peer& p, const Startpoint& target, HandlerId handler,
                                          std::span<const uint8_t> payload);
  // Encodes `frame`'s header and sends it through `p`'s frame log (counted either way).
  Status SendFrame(Peer& p, ByteBlock&& frame, const Startpoint& target, HandlerId handler,
                   size_t payload);
  // SendBytes from the caller's memory (CommObject::SendLent; flow_control.cc): false when it
  // cannot (recording, the caller runs inside a progress pass of ours, the object declined:
  // nothing sent), else true with the send's result in `out`, returned only once the module
  // no longer reads `payload`.
  bool TrySendLent(Peer& p, const Startpoint& target, HandlerId handler,
                   std::span<const uint8_t> payload, Status* out);
  // Waits (driving progress) until `sent` is done; kUnavailable when the peer left or failed
  // by then.
  Status AwaitLent(Peer& p, RuntimeId rid, CommObject::LentSend& sent);

  // ---- OTF2 recording (tracing.cc) ----
  // Opens the recorder when options_.otf2 is set (after the bootstrap exchange).
  Status StartTracing();
  // Closes this process's part and, unless `ukai launch` merges, merges the archive on rank
  // 0 after a barrier (Finalize, after the modules closed).
  Status FinishTracing();
  // Sends `frame` (its header encoded) to `peer` through its frame log, recording an MpiSend
  // (and for a request the receive of its answer, id `answer`) when recording. Inline, and
  // the recorded fields come from the frame's header: off, it costs one branch.
  Status SendLogged(Peer& peer, FrameClass cls, ByteBlock&& frame, uint64_t answer = 0) {
    if (recorder_) [[unlikely]]
      return SendRecorded(peer, cls, std::move(frame), answer);
    return peer.log.Send(*peer.object, cls, std::move(frame));
  }
  [[gnu::cold]] Status SendRecorded(Peer& peer, FrameClass cls, ByteBlock&& frame, uint64_t answer);
  // A frame nobody posted a receive for arrived (dropped RSR, refusal, late answer);
  // `payload` with its request trailer, if any; `answer_to`: an answer's request id (0 for
  // the refusal of a plain RSR).
  void TraceArrival(const wire::FrameHeader& h, uint64_t payload, uint64_t answer_to = 0);
  // The answer (`bytes` of payload) of pending request `p` arrived: its receive completes.
  void TraceAnswered(PendingRequest& p, const wire::FrameHeader& h, uint64_t bytes);
  // InvokeHandler when recording: the context's receive completes, the handler runs, the
  // context posts its next receive.
  void InvokeTraced(const HandlerEntry* he, Rsr& rsr);
  // Runs the handler; what it throws goes to HandlerThrew. Inline: the non-threaded
  // dispatch path runs it once per RSR.
  void InvokeHandlerBody(const HandlerEntry* he, Rsr& rsr) {
    try {
      he->fn(rsr);
      if (rsr.request_id() != 0) AnswerIfUnanswered(he, rsr, Status::Ok());
    } catch (...) {
      HandlerThrew(he, rsr, std::current_exception());
    }
  }
  // Classifies what a handler threw (`thrown`) and hands it to HandlerFailed.
  [[gnu::cold]] void HandlerThrew(const HandlerEntry* he, Rsr& rsr, std::exception_ptr thrown);
  // A handler threw: counted, traced, reported (on_error) and, for a request, answered.
  [[gnu::cold]] void HandlerFailed(const HandlerEntry* he, Rsr& rsr, const Status& failed);
  std::unique_ptr<trace::Recorder> recorder_;
  bool launcher_merges_ = false;  // `ukai launch --otf2` merges the parts after the job

  // ---- Flow control and flushing (flow_control.cc) ----
 public:
  // SendRsr without blocking (Runtime::TrySendRsr).
  Status TrySend(Buffer& buffer, const Startpoint& target, HandlerId handler);
  // Runtime::ClosePeer: refuses later sends to the peer, flushes what was accepted for it
  // (up to `timeout`, driving progress), then closes its connection.
  Status ClosePeer(const Startpoint& peer_of, std::chrono::milliseconds timeout);

 private:
  // OK when `peer` holds less than options_.send_queue_bytes, else waits (driving progress)
  // for room, or returns kWouldBlock when `wait` is false.
  Status AwaitRoom(Peer& peer, RuntimeId rid, bool wait,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // Waits up to flush_timeout_ms (driving progress) until every peer object took all that
  // was accepted for it; an error naming what was not taken otherwise.
  Status FlushPeers();
  // One peer object to flush (FlushObjects).
  struct FlushEntry {
    RuntimeId id;
    const Peer* peer;  // entries live as long as the runtime
    std::shared_ptr<CommObject> object;
  };
  // Waits up to `timeout` (driving progress) until every object took all that was accepted
  // for it, or none that may still take anything is left; else an error that starts with
  // `what`, naming the frames and bytes not taken, per peer, and why.
  Status FlushObjects(const std::vector<FlushEntry>& objects, std::chrono::milliseconds timeout,
                      const std::string& what, const std::string& timeout_name);
  // OK, or why sends to `peer` (runtime `rid`) are refused: it failed, or ClosePeer closed it.
  static Status PeerRefuses(const Peer& peer, RuntimeId rid);
  // True on the thread running a progress pass of this runtime (a non-threaded handler or
  // a peer-event callback): it must not wait for progress (dispatch.cc).
  bool InOwnProgressPass() const;

  // ---- Fast defaults (fast_defaults.cc) ----
  // Runtime::Progress() from a thread of the program (not a handler): counted, so that the
  // progress thread steps aside while the program drives progress itself.
  void NoteCallerProgress();
  // Progress thread, holding the flag: when a program thread called Progress() since the
  // last look, lets go of the flag and sleeps (500 us at a time) until the program
  // stopped calling it; true when it stepped aside. Not under `ukai launch --sim` (ModuleCaps).
  bool StepAsideForCallers();
  // Progress thread, spinning idle: gives the core to another runnable thread now and then
  // (the program's own threads on an oversubscribed machine).
  void YieldWhileSpinning();
  // Runtime::Progress() returning `n`: after many idle calls in a row on this thread, gives
  // the core away once (two processes polling on one core then alternate within
  // microseconds instead of scheduler time slices); in a job that does not oversubscribe
  // this host, only once the thread has been idle for 50 us. Returns n.
  int CallerIdle(int n);
  // Pins this thread (and so the threads started after it) per options_.pin.
  Status ApplyPinning();
  alignas(64) std::atomic<uint64_t> caller_calls_{0};
  uint64_t caller_seen_ = 0;  // progress thread only
  unsigned idle_spins_ = 0;   // progress thread only

  RuntimeOptions options_;
  VirtualTime* vt_ = nullptr;  // SetVirtualTime
  uint64_t barrier_seq_ = 0;   // SimBarrier's, from the thread that calls Barrier
  mutable std::mutex params_mu_;
  mutable std::unordered_set<std::string> params_asked_;  // guarded by params_mu_
  const RuntimeId id_;
  Runtime* self_ = nullptr;
  std::unique_ptr<Bootstrap> bootstrap_;
  std::vector<std::unique_ptr<Module>> modules_;  // preference order (lowest latency first)
  std::vector<ModuleCaps> caps_;
  uint64_t min_block_bytes_ = UINT64_MAX;  // smallest ModuleCaps::min_block_bytes
  std::shared_ptr<const DescriptorTable> table_;
  std::vector<DescriptorTable> world_;  // bootstrap tables, index = rank
  std::unique_ptr<JobSecret> secret_;   // set by Start before the modules
  bool one_host_ = true;                // bootstrap's OneHost()
  // The job has more processes on this host than CPUs we may run on (Start; CallerIdle).
  bool oversubscribed_ = true;
  mutable std::mutex tokens_mu_;
  std::unordered_map<RuntimeId, SecretKey> tokens_;  // peers' join tokens (NoteToken)
  bool finalized_ = false;
  bool started_ = false;

  mutable std::shared_mutex contexts_mu_;
  std::unordered_map<ContextId, std::shared_ptr<ContextState>> contexts_;
  ContextId next_context_ = 1;

  std::mutex connect_mu_;
  std::condition_variable connect_cv_;
  // Peers being connected, with the thread connecting each (PeerById waits for another
  // thread's connect, never for its own).
  std::unordered_map<RuntimeId, std::thread::id> connecting_;
  mutable std::mutex peers_mu_;
  // Entries are never erased (a failed or closed peer stays, flagged): pointers to them stay
  // valid while the runtime lives (the thread's peer cache, stats()).
  std::unordered_map<RuntimeId, Peer> peers_;
  std::function<void(RuntimeId)> connect_hook_for_testing_;  // SetConnectHookForTesting

  // Progress exclusion (a try-lock flag, not a mutex: Progress() is called in tight spin
  // loops, and an uncontended pass should cost one read-modify-write, not two).
  std::atomic<bool> progressing_{false};
  std::atomic<bool> passes_by_modules_{false};  // RunProgressPass allowed (progress thread up)
  bool TryEnterProgress();
  void LeaveProgress();
  // Returns once every progress pass that was running when it was called has ended (holds
  // the flag once; the progress thread lets go between passes while progress_wanted_ > 0).
  void QuiesceProgress();
  std::atomic<int> progress_wanted_{0};
  // One writer at a time (the progress flag's owner): no read-modify-write needed.
  void CountDelivered() {
    rsr_delivered_.store(rsr_delivered_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  }
  std::vector<Delivered> delivered_;  // progress thread only
  std::mutex reinject_mu_;
  std::vector<HeldFrame> reinject_;
  std::atomic<bool> has_reinject_{false};
  std::mutex events_mu_;
  std::vector<PeerEvent> events_;
  std::mutex listeners_mu_;
  std::vector<std::pair<uint64_t, std::function<void(const PeerEvent&)>>> listeners_;
  uint64_t next_listener_ = 1;
  std::atomic<bool> has_events_{false};

  std::unique_ptr<ThreadPool> pool_;
  std::thread progress_thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sleeping_{false};
  int wake_fd_ = -1;

  std::atomic<uint64_t> rsr_sent_{0}, rsr_delivered_{0}, frames_rejected_{0}, rsr_dropped_{0},
      send_errors_{0};
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_CORE_RUNTIME_IMPL_H_
