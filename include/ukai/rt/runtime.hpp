// The Nexus-style runtime: Runtime, Context, Endpoint, handlers and remote service requests.
//
// Concepts (docs/runtime.md has the tour):
//  * A Runtime is one instance of the library in a process (two may coexist; there are no
//    globals). It owns the communication modules, the progress engine, the handler thread
//    pool and the contexts. Its id (RuntimeId) is random and names it on the wire.
//  * A Context is an address-space-like unit of computation inside a Runtime (several per
//    Runtime). It is created with an init routine (NexusBoot role) and destroyed with an exit
//    routine (NexusExit role); others can reach it only after the init routine returned OK:
//    frames that arrive earlier are held and delivered after it.
//  * An Endpoint is a place in a context that RSRs target; it has a handler table. Handlers
//    are registered by name; the id is a stable hash of the name (HandlerId::Of), so sender
//    and receiver agree without exchanging tables. Two names hashing alike in one endpoint
//    are detected at registration.
//  * A Startpoint (startpoint.hpp) is a global pointer to an endpoint; many per endpoint.
//  * SendRsr(buffer, startpoint, handler) runs `handler` asynchronously at the target. No
//    receive call. Non-threaded handlers run on the progress thread, in arrival order, must
//    not block, and read the message in place; threaded handlers run on the handler pool,
//    may block, and may run concurrently with each other.
//
// Ordering: RSRs from one sending Runtime to one endpoint are delivered in send order
// (per-connection FIFO, one connection per peer and module). Non-threaded handlers for them
// therefore *run* in send order; threaded handlers are *started* in that order but may
// overlap or finish in any order. No order holds between different senders.
//
// Progress: with RuntimeOptions::progress_thread (default) a runtime-owned thread polls the
// modules (busy-polling spin_us microseconds after the last activity, then blocking in
// poll(2) on the modules' wait fds). Without it the program must call Progress() itself.
//
// Failure: when a peer dies or disconnects, its communication objects become failed
// objects: SendRsr to it returns kUnavailable, and the on_peer_failure callback is told once
// (from the progress thread, never from transport code). Other peers keep working.
#ifndef UKAI_RT_RUNTIME_HPP_
#define UKAI_RT_RUNTIME_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <array>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ukai/rt/buffer.hpp"
#include "ukai/rt/request.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

class Runtime;
class Context;
class Endpoint;
class InprocFabric;
class SimFabric;
namespace internal {
class RuntimeImpl;
class ContextState;
class EndpointState;
}  // namespace internal

// A handler id: the 32-bit FNV-1a hash of the handler name (0 is remapped to 1).
struct HandlerId {
  uint32_t value = 0;
  static constexpr HandlerId Of(std::string_view name) {
    uint32_t h = 2166136261u;
    for (char c : name) {
      h ^= static_cast<uint8_t>(c);
      h *= 16777619u;
    }
    return HandlerId{h == 0 ? 1u : h};
  }
  bool operator==(const HandlerId&) const = default;
};

enum class HandlerKind : uint8_t {
  kNonThreaded,  // runs on the progress thread; must not block; message read in place
  kThreaded,     // runs on a handler-pool thread; may block; message owned for the call
};

// What a handler sees. Valid only during the handler call: copy what must outlive it
// (for a non-threaded handler the payload is the transport's receive memory).
class Rsr {
 public:
  Runtime& runtime() const { return *runtime_; }
  Context& context() const { return *context_; }
  Endpoint& endpoint() const { return *endpoint_; }
  RuntimeId source() const { return source_; }  // the sending runtime
  HandlerId handler() const { return handler_; }
  std::optional<uint64_t> address() const { return address_; }  // the startpoint's address
  std::span<const uint8_t> payload() const { return payload_; }
  // A reader positioned at the start of the payload.
  Reader& reader() { return reader_; }

  // ---- request/reply (request.hpp) ----
  // Nonzero when this RSR is a request (Runtime::Request), which expects one answer.
  uint64_t request_id() const { return request_; }
  // Answers the request with `reply` (first answer wins). kFailedPrecondition when this RSR
  // is no request or was answered already. A handler that returns without answering and
  // without TakeReplier() answers kFailedPrecondition for it; one that throws answers the
  // error.
  Status Reply(Buffer&& reply);
  // Answers the request with an error (the requester's future completes with `error`).
  Status Fail(const Status& error);
  // The right to answer later, from any thread (an empty Replier when this is no request).
  Replier TakeReplier();

  Rsr(Runtime* rt, Context* ctx, Endpoint* ep, RuntimeId source, HandlerId handler,
      std::optional<uint64_t> address, std::span<const uint8_t> payload, uint64_t request = 0)
      : runtime_(rt),
        context_(ctx),
        endpoint_(ep),
        source_(source),
        handler_(handler),
        address_(address),
        payload_(payload),
        reader_(payload),
        request_(request) {}

 private:
  Runtime* runtime_;
  Context* context_;
  Endpoint* endpoint_;
  RuntimeId source_;
  HandlerId handler_;
  std::optional<uint64_t> address_;
  std::span<const uint8_t> payload_;
  Reader reader_;
  uint64_t request_ = 0;
  std::shared_ptr<Replier::State> replier_;  // made on the first Reply/Fail/TakeReplier
  std::shared_ptr<Replier::State>& ReplierState();
  friend class internal::RuntimeImpl;
};

using Handler = std::function<void(Rsr&)>;

// Told when a peer runtime fails (died, connection reset, malformed stream) or leaves in
// order (sent goodbye on Finalize). Runs on the progress thread; must not block.
struct PeerEvent {
  RuntimeId peer = 0;
  std::string module;  // module whose communication object failed
  bool orderly = false;
  Status reason;
};
using PeerEventCallback = std::function<void(const PeerEvent&)>;

// Told about an RSR that failed (docs/runtime.md, "Handler errors"):
//  * kHandlerFailed: a handler of this runtime threw (a failed unpack read through
//    `*reader.GetX()` throws ukai::BadResultAccess; any other exception counts too). The
//    exception was caught at the dispatch boundary; the process goes on. `peer` is the
//    RSR's sender. Runs on the thread that ran the handler (the progress thread or a
//    handler-pool thread), right after it.
//  * kRsrRefused: an RSR this runtime sent named a context, endpoint or handler the target
//    runtime (`peer`) does not have; the target said so. Runs on the progress thread.
// The callback must not block; an exception it throws is caught and ignored.
struct ErrorEvent {
  enum class Kind : uint8_t { kHandlerFailed, kRsrRefused };
  Kind kind = Kind::kHandlerFailed;
  RuntimeId peer = 0;
  ContextId context = 0;
  EndpointId endpoint = 0;
  HandlerId handler;
  std::string handler_name;  // kHandlerFailed: the registered name
  Status reason;
};
using ErrorCallback = std::function<void(const ErrorEvent&)>;

// Runtime configuration (LevelDB Options style: defaults written here). From argc/argv
// the --ukai-* options below override the UKAI_* environment, which overrides the defaults.
struct RuntimeOptions {
  // --ukai-modules=a,b / UKAI_MODULES: modules to load besides inproc (always loaded: it
  // carries traffic between contexts of this runtime). Empty = the registry's defaults.
  // Names come from the built-in table (src/rt/modules/registry.cc).
  std::vector<std::string> modules;
  // --ukai-bootstrap=NAME / UKAI_BOOTSTRAP: how rank, size and the other processes'
  // descriptor tables are learnt at start-up: "auto" (launcher env, then MPI env, else
  // "single"), "single", or one registered by src/rt/core/bootstrap_registry.cc.
  std::string bootstrap = "auto";
  // --ukai-trace / UKAI_TRACE=1: print module loading and per-peer module choice on stderr.
  bool trace = false;
  // --ukai-progress-thread=0|1: run a progress thread (else call Progress()).
  bool progress_thread = true;
  // --ukai-handler-threads=N: threads running threaded handlers (1..kMaxHandlerThreads).
  int handler_threads = 2;
  // --ukai-handler-threads-max=N / UKAI_HANDLER_THREADS_MAX: how far the pool grows when
  // every handler thread is blocked in a runtime wait (a nested Request's Wait, Barrier,
  // an RMA fence, a SendRsr waiting for room) while handlers are queued
  // (1..kMaxHandlerThreads; a value below handler_threads means handler_threads: no
  // growth). Threads beyond handler_threads end after 1 s without work.
  int handler_threads_max = 64;
  // --ukai-spin-us=N: how long the progress thread busy-polls after activity before it
  // blocks (microseconds; 0 = block at once; at most kMaxSpinUs).
  int spin_us = 200;
  // --ukai-param=KEY=VALUE (repeatable): module parameters, e.g. tcp.listen=127.0.0.1:0
  // (address the tcp module listens on), tcp.host (host name put in the descriptor).
  std::map<std::string, std::string> params;
  // Runtimes that share a fabric reach each other with the inproc module; by default each
  // Runtime has its own (API only).
  std::shared_ptr<InprocFabric> inproc_fabric;
  // The simulated machine of the "sim" module (docs/sim-module.md), shared by the runtimes
  // on it; built by the simulator side (src/rt/sim_machine/sim_machine.h) or by `ukai launch
  // --sim` (API only).
  std::shared_ptr<SimFabric> sim_fabric;
  // Told about failed or departed peers (API only).
  PeerEventCallback on_peer_event;
  // Told about handlers that failed here and RSRs that peers refused (API only; ErrorEvent).
  ErrorCallback on_error;

  // ---- Flow control (docs/runtime.md, "Flow control and nothing lost") ----
  // --ukai-send-queue-bytes=N / UKAI_SEND_QUEUE_BYTES: per peer, how many bytes of accepted
  // RSRs the module may hold in this process for that peer (queued behind a full socket or
  // ring, in flight in MPI or an inproc inbox) before SendRsr blocks — driving progress
  // while it waits — and TrySendRsr returns kWouldBlock. A frame is accepted while the held
  // bytes are below the limit, so a peer holds at most this plus one frame. 0 = no limit.
  uint64_t send_queue_bytes = uint64_t{16} << 20;
  // --ukai-flush-timeout-ms=N / UKAI_FLUSH_TIMEOUT_MS: how long Finalize waits for the peers
  // to take every RSR SendRsr accepted (milliseconds, 0 = do not wait).
  int flush_timeout_ms = 10000;

  // ---- Fast defaults (docs/runtime.md, "Fast by default") ----
  // --ukai-pin=auto|core|off / UKAI_PIN: pin the process (the thread calling Init, and the
  // progress and handler threads it starts) to one CPU: the rank-th of those it may run on
  // (modulo their number). "auto": only under `ukai launch` with no more processes than
  // CPUs (as mpirun binds by default); "core": always; "off": never.
  std::string pin = "auto";

  // ---- Authentication (docs/runtime.md, "Authentication and confinement") ----
  // The job secret to use instead of the bootstrap's (API only: never read from a command
  // line or the environment). Runtimes with one secret are one job; a runtime of another
  // job reaches them only through a startpoint of theirs (its join token).
  std::optional<std::array<uint8_t, 32>> job_secret;
  // --ukai-job-secret-file=PATH / UKAI_JOB_SECRET_FILE: read the job secret (64 hex digits)
  // from PATH, which must belong to this user with mode 0600 or 0400.
  std::string job_secret_file;
  // ---- OTF2 recording (docs/otf2-recording.md) ----
  // --ukai-otf2=DIR / UKAI_OTF2: record this process's communication (RSRs, requests and
  // answers, barriers, RMA, multicast messages) into the job's OTF2 archive DIR/traces.otf2,
  // one location per context. Empty (default) = off, which costs one branch per send and per
  // handler. Init fails when DIR cannot be created or written, or already holds an archive.
  // The processes' parts are merged by `ukai launch --otf2 DIR` after the job, else by rank 0
  // in Finalize (after a barrier of all ranks).
  std::string otf2;
};

// Bounds of the integer options (CheckRuntimeOptions, --ukai-*, UKAI_*).
inline constexpr int kMaxHandlerThreads = 1024;
inline constexpr int kMaxSpinUs = 1000000;

// Parses --ukai-* options out of argv (removing them; argc is updated, argv[argc] stays
// nullptr) on top of `base`. Both spellings work: --ukai-NAME=VALUE and --ukai-NAME VALUE
// (the next word; --ukai-trace takes a value only with '='). Errors (naming the option):
// unknown --ukai-* options, a missing value, a value out of range or of the wrong type,
// an empty module list.
Status ParseRuntimeArgs(int& argc, char** argv, RuntimeOptions* options);
// OK when the numeric fields of `options` are in range (Runtime::Init checks it).
Status CheckRuntimeOptions(const RuntimeOptions& options);
// Applies the UKAI_* environment variables (UKAI_MODULES, UKAI_BOOTSTRAP, UKAI_TRACE,
// UKAI_HANDLER_THREADS, UKAI_SPIN_US, UKAI_SEND_QUEUE_BYTES, UKAI_FLUSH_TIMEOUT_MS, UKAI_PIN,
// UKAI_OTF2) to `options`.
Status ApplyRuntimeEnv(RuntimeOptions* options);

// Creates a fabric that runtimes in this process can share (RuntimeOptions::inproc_fabric).
std::shared_ptr<InprocFabric> NewInprocFabric();

// Counters (monotonic since Init).
struct RuntimeStats {
  uint64_t rsr_sent = 0;
  uint64_t rsr_delivered = 0;    // handlers started
  uint64_t frames_rejected = 0;  // malformed/truncated frames, bad buffer of a hello, ...
  uint64_t rsr_dropped = 0;      // unknown context, endpoint or handler at the target
  uint64_t send_errors = 0;      // SendRsr calls that returned an error
  uint64_t handler_errors = 0;   // handlers of this runtime that threw (ErrorEvent)
  uint64_t rsr_refused = 0;      // RSRs sent from here that a target refused (ErrorEvent)
  // Answers of the runtime's layers (replies, refusals, RMA acks, virtual node and multicast
  // notices) that Finalize/ClosePeer could not hand to a peer that had left or failed: not
  // reported as lost RSRs (docs/runtime.md, "Flow control").
  uint64_t answers_lost = 0;
  // The most threads the handler pool had at once (handler_threads, more when handlers
  // blocked in runtime waits made it grow up to handler_threads_max).
  uint64_t handler_threads_peak = 0;
};

struct ContextOptions {
  std::string name = {};  // for traces
  // Requested id (0 = the next free one). Useful for SPMD programs that need well-known ids.
  ContextId id = 0;
  // Init routine (NexusBoot): creates endpoints and registers handlers. Runs on the
  // calling thread inside CreateContext; an error aborts the creation.
  std::function<Status(Context&)> init = {};
  // Exit routine (NexusExit): runs in DestroyContext (or Finalize) after the context stopped
  // accepting RSRs and its running handlers finished.
  std::function<void(Context&)> exit = {};
};

struct EndpointOptions {
  EndpointId id = 0;  // requested id (0 = the next free one)
};

class Endpoint {
 public:
  EndpointId id() const { return id_; }
  Context& context() const { return *context_; }

  // Registers `handler` under `name`. Errors (kInvalidArgument): a name that is empty,
  // longer than 256 bytes or has a character other than A-Z a-z 0-9 _ . : / - (a stray
  // space is a typo), the name is taken, or its id collides with a different name already
  // registered here (naming both). Thread safe; may be called while RSRs arrive (an RSR to a
  // handler not registered (yet) is dropped, counted, and refused back to its sender).
  Result<HandlerId> RegisterHandler(std::string_view name, HandlerKind kind, Handler handler);
  // The id of handler `name` registered here; kNotFound naming the registered handlers
  // otherwise (kInvalidArgument for an invalid name). Thread safe.
  Result<HandlerId> FindHandler(std::string_view name) const;

  // A startpoint to this endpoint (optionally bound to `address` in this context).
  Startpoint MakeStartpoint() const;
  Startpoint MakeStartpoint(uint64_t address) const;

  // Internal construction (by Context).
  Endpoint(Context* ctx, EndpointId id, internal::EndpointState* state)
      : context_(ctx), id_(id), state_(state) {}

 private:
  Context* context_;
  EndpointId id_;
  internal::EndpointState* state_;
};

class Context {
 public:
  ContextId id() const { return id_; }
  const std::string& name() const { return name_; }
  Runtime& runtime() const { return *runtime_; }

  // Creates an endpoint owned by this context (lives until the context is destroyed).
  // Thread safe. Error: requested id taken.
  Result<Endpoint*> CreateEndpoint(EndpointOptions options = {});
  // The endpoint with this id, or nullptr.
  Endpoint* FindEndpoint(EndpointId id) const;

  // Internal construction (by Runtime).
  Context(Runtime* rt, ContextId id, std::string name, internal::ContextState* state)
      : runtime_(rt), id_(id), name_(std::move(name)), state_(state) {}

 private:
  Runtime* runtime_;
  ContextId id_;
  std::string name_;
  internal::ContextState* state_;
};

// Options of one SendRsr.
struct SendOptions {
  // How long SendRsr may block waiting for room when the peer already holds
  // RuntimeOptions::send_queue_bytes (flow control); then it returns kTimeout and the RSR is
  // not sent. 0 (the default) = wait as long as the peer lives: the wait is back-pressure
  // from a receiver that is slower than its senders, and a bound would turn that into
  // failed sends each sender must retry; a peer that fails or leaves ends the wait
  // (kUnavailable), and so does Finalize (kFailedPrecondition). Set a bound when a stalled
  // but live peer must not hold the sender (mpi does not detect failed peers).
  std::chrono::milliseconds timeout{0};
};

class Runtime {
 public:
  // Builds a runtime from `options` (environment not consulted except by "auto" bootstrap).
  static Result<std::unique_ptr<Runtime>> Init(RuntimeOptions options);
  // Defaults + UKAI_* environment + --ukai-* options from argv (consumed; the rest of argv
  // is left to the program, in order).
  static Result<std::unique_ptr<Runtime>> Init(int& argc, char** argv, RuntimeOptions base = {});
  // Finalizes if not done yet.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Destroys all contexts (running exit routines), hands every RSR SendRsr accepted over to
  // its peer (waiting up to flush_timeout_ms, progress still running), says goodbye to
  // connected peers, stops the threads, closes the modules. Idempotent. Must not be called
  // from a handler. Returns kUnavailable naming the count of frames (and bytes) the peers
  // did not take — by the timeout or because a peer failed — and why: never OK after a loss.
  Status Finalize();

  RuntimeId id() const;
  // Rank and size from the bootstrap (0 and 1 for a single process).
  int rank() const;
  int size() const;
  // This runtime's descriptor table (one descriptor per loaded module).
  const DescriptorTable& descriptors() const;
  std::shared_ptr<const DescriptorTable> shared_descriptors() const;
  // Loaded module names, in preference order (best first).
  std::vector<std::string> modules() const;

  // Creates a context: allocates its id, runs options.init, then makes it reachable.
  // Thread safe. Errors: id taken, init routine failed (its Status, with context).
  Result<Context*> CreateContext(ContextOptions options);
  // Stops RSR delivery to `ctx`, waits for its running handlers, runs its exit routine and
  // frees it. Must not be called from one of its own handlers (kFailedPrecondition).
  Status DestroyContext(Context* ctx);
  Context* FindContext(ContextId id) const;

  // Sends an RSR: runs handler `handler` of the endpoint named by `target`, with `buffer`'s
  // payload. The moved-in overload hands the buffer's storage to the module (no payload
  // copy); the const& one copies. Thread safe. Returns when the module accepted the frame
  // (it may still be in flight). Errors: null startpoint, payload over the module's limit,
  // no module reaches the target, peer failed (kUnavailable), no room in time (kTimeout,
  // SendOptions::timeout). An RSR is one-way: when the handler throws or fails at the
  // target, the sender is not told; the target's RuntimeOptions::on_error sees it
  // (ErrorEvent) and counts it (stats().handler_errors). Use Request to learn the outcome.
  Status SendRsr(Buffer&& buffer, const Startpoint& target, HandlerId handler,
                 SendOptions options = {});
  Status SendRsr(const Buffer& buffer, const Startpoint& target, HandlerId handler,
                 SendOptions options = {});
  // Sends an RSR whose payload is the bytes of `payload`, no longer referenced when it
  // returns (no Buffer: the handler reads them as Rsr::payload(), or with its reader when
  // they were packed by a Buffer); the caller may reuse the memory at once. The fastest way
  // to send a small message (as GASNet-EX's Medium AM or UCX's short send): the shm module
  // writes it straight into its ring. Large payloads are copied once into the memory the
  // module sends from (NewBuffer's), except over the mpi module, which sends payloads of
  // mpi.zero_copy_bytes and more straight from `payload` (as MPI_Send does): the call then
  // returns once MPI is done reading it, driving progress while it waits (docs/runtime.md,
  // "mpi"). Where the caller cannot wait — a non-threaded handler or a peer-event callback
  // (they run inside a progress pass), or a SendOptions::timeout — the payload is copied
  // as before. Delivery, order (with SendRsr's too), flow control, errors and options are
  // SendRsr's; over mpi a peer that leaves while it reads `payload` gives kUnavailable
  // (the RSR may or may not have been delivered).
  Status SendRsrBytes(std::span<const uint8_t> payload, const Startpoint& target, HandlerId handler,
                      SendOptions options = {});
  // Flow control: when the target peer already holds send_queue_bytes of accepted RSRs,
  // SendRsr blocks until the peer took enough of them (driving progress meanwhile; it returns
  // kUnavailable if the peer fails first, kTimeout after SendOptions::timeout). A
  // non-threaded handler or a peer-event callback (they run inside a progress pass and
  // cannot wait for it) is never blocked: its sends are accepted over the limit. TrySendRsr
  // never blocks: kWouldBlock and `buffer` left as it was when the queue is full; on OK the
  // buffer's contents were sent (moved out).
  Status TrySendRsr(Buffer& buffer, const Startpoint& target, HandlerId handler);
  // Closes the connection to the runtime `peer_of` names (any startpoint of it): from then
  // on sends to it are refused; what SendRsr accepted for it is handed over first, waiting
  // up to `timeout` (driving progress); then its connection is closed (a goodbye where the
  // module has one) and its pending requests fail. OK only when the peer took everything;
  // else kUnavailable naming the frames (and bytes) not delivered and why (timeout, or the
  // peer failed or left). Later SendRsr/Request to that runtime fail with
  // kFailedPrecondition ("closed by ClosePeer"): no reconnection while this Runtime lives.
  // Errors: kNotFound (never connected to it), kFailedPrecondition (closed already,
  // finalized, or called from a non-threaded handler or peer-event callback, which run
  // inside a progress pass). Thread safe.
  Status ClosePeer(const Startpoint& peer_of, std::chrono::milliseconds timeout);

  // ---- request/reply (request.hpp; Mercury HG_Forward style) ----
  // Sends an RSR that expects one answer from the handler (Rsr::Reply) and returns its
  // future. Errors of the send itself (as SendRsr's) give a future completed with them.
  // Thread safe.
  ReplyFuture Request(Buffer&& request, const Startpoint& target, HandlerId handler,
                      RequestOptions options = {});
  // The same with a completion callback `done`, anything callable as void(Reply&)
  // (ReplyCallback: when and where it runs). Errors of the send itself are returned, and
  // `done` is then never called. (A template, so that `Request(buf, sp, h, {})` means the
  // future overload with default RequestOptions.)
  template <std::invocable<Reply&> F>
  Status Request(Buffer&& request, const Startpoint& target, HandlerId handler, F&& done,
                 RequestOptions options = {}) {
    return RequestWithCallback(std::move(request), target, handler,
                               ReplyCallback(std::forward<F>(done)), options);
  }

  // An empty Buffer with room for `payload_capacity` payload bytes, its storage registered
  // memory where a loaded module offers it: the shm module's shared-memory pool
  // (shm.pool_bytes, default 256 MiB, 0 = none) for payloads of shm.pool_min_bytes (default
  // 16 KiB) or more. A pool Buffer sent (moved) over shm (peers map the pool at connection
  // set-up) is not copied into the ring: the receiver reads it in place, so a large RSR costs one
  // copy (the pack) instead of two. This is the way to send large messages fast. Otherwise (no
  // pool, small, pool exhausted) the storage is the heap. Either way it is a normal Buffer:
  // usable with any module and peer, copyable (copies come from the pool too when it can),
  // growable (from the pool when it can, else the heap), and it may outlive this Runtime
  // (the pool's memory is freed with its last block). The sender holds a pool block until
  // the receiver dispatched the RSR (non-threaded handlers read it in place; threaded ones
  // get a copy); blocks held for a failed peer go back to the pool. Thread safe.
  Buffer NewBuffer(size_t payload_capacity);

  // A startpoint to (context, endpoint) of process `rank`, from the bootstrap's tables.
  Result<Startpoint> WorldStartpoint(int rank, ContextId context, EndpointId endpoint) const;
  // Out-of-band barrier over the bootstrap's processes (a no-op for "single").
  Status Barrier();

  // The module that carries (or would carry) traffic to `target`, chosen as in SendRsr.
  Result<std::string> SelectModule(const Startpoint& target);

  // One progress pass: polls every module, runs the non-threaded handlers and hands the
  // threaded ones to the pool. Returns the number of RSRs dispatched. Thread safe; when
  // another thread is progressing it returns 0 at once.
  int Progress();

  // The time now: under the "sim" module the simulated time of this process (its clock on
  // the simulated machine, from 0 at the machine's start; docs/sim-module.md), otherwise the
  // steady wall clock (std::chrono::steady_clock, since its epoch). A program that times
  // itself with Now() reports simulated figures unchanged. Thread safe.
  std::chrono::nanoseconds Now() const;

  RuntimeStats stats() const;

  internal::RuntimeImpl* impl() const { return impl_.get(); }
  explicit Runtime(std::unique_ptr<internal::RuntimeImpl> impl);

 private:
  Status RequestWithCallback(Buffer&& request, const Startpoint& target, HandlerId handler,
                             ReplyCallback done, RequestOptions options);
  std::unique_ptr<internal::RuntimeImpl> impl_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_RUNTIME_HPP_
