// The communication module interface (Nexus "function table", UCX transport style).
//
// A module implements one communication method. The runtime (its ModuleHost) drives it:
//   Init(host)         once, before anything else; read parameters via host->Param().
//   Query()            capabilities and cost estimates; the runtime ranks modules by them.
//   MakeDescriptor()   the bytes another runtime needs to reach this one by this module
//                      (placed in this runtime's descriptor table under name()).
//   CanReach(desc)     whether a peer descriptor of this module is reachable from here
//                      (same fabric, same host, any host, same MPI job ...).
//   Connect(peer,desc) a communication object to that peer (may be lazy: tcp connects on
//                      first use, inside Connect). Called at most once per peer unless the
//                      previous object failed.
//   Progress()         polls for incoming frames and hands each to host->Deliver* — never
//                      runs handlers; returns the number of frames delivered (0 = idle).
//   WaitFd()           an fd that turns readable when Progress() has work, or -1 if the
//                      module must be polled (the progress thread then never blocks long).
//   PrepareToBlock()   the progress thread is about to block in poll() on the WaitFd()s:
//                      arm whatever makes WaitFd() readable on new work (shm: the ring
//                      doorbell senders then ring). False = work arrived meanwhile, do not
//                      block. Unblocked() follows every PrepareToBlock() call, once the
//                      thread woke up or gave up blocking. Everything the last Progress()
//                      delivered has been dispatched by then: a module may already release
//                      it (shm returns ring space and peers' pool blocks so that senders
//                      need not wait for its next Progress). Until PrepareToBlock, a module need
//                      not signal its fd, so a busy-polled module costs its senders no system call.
//   AllocateBlock(n)   optional: storage of >= n bytes from memory the module sends from
//                      fastest (shm: its shared-memory pool), or an empty block (capacity
//                      0) when it has none or cannot serve n; any thread
//                      (Runtime::NewBuffer).
//   one_sided()        optional: the module's own remote memory access (rt/core/one_sided.h;
//                      mpi), or null; valid from Init until Close.
//   Counters()         optional: named counters for tests and diagnostics; any thread.
//   Close()            says goodbye to peers (kBye frames) and releases everything.
//
// Threading: Init/MakeDescriptor/Close are called by the thread that initialises/finalises
// the runtime. Progress() is called by one thread at a time (the progress engine), and the
// host's Deliver*/AdoptIncoming/PeerFailed are called only from inside Progress(). Connect()
// and CommObject::Send() may be called by any thread concurrently with Progress().
//
// Frames are wire/rsr_frame.h frames: a 56-byte header then the payload, one contiguous
// ByteBlock on the send side. Delivered payload spans stay valid until the module's next
// Progress() (or Close()) call: the runtime dispatches or copies everything delivered before
// it polls that module again. A module that can give the storage away passes it as `owned`
// (the runtime then keeps it for threaded handlers instead of copying).
#ifndef UKAI_RT_CORE_MODULE_H_
#define UKAI_RT_CORE_MODULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "rt/core/job_secret.h"
#include "rt/core/one_sided.h"
#include "rt/core/spin_mutex.h"
#include "rt/core/virtual_time.h"
#include "ukai/rt/byte_block.hpp"
#include "ukai/rt/startpoint.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt {

// How far a module reaches.
enum class Reach : uint8_t {
  kSameProcess = 0,  // runtimes in one process (inproc)
  kSameHost = 1,     // processes on one host (shm)
  kAnyHost = 2,      // processes anywhere (tcp, mpi)
};

struct ModuleCaps {
  Reach reach = Reach::kAnyHost;
  double latency_us = 0;              // estimated one-way latency of a small RSR (microseconds)
  double bandwidth_gbytes_s = 0;      // estimated streaming bandwidth (1e9 bytes per second)
  uint64_t max_payload_bytes = 0;     // largest RSR payload one Send() accepts
  bool detects_peer_failure = false;  // failed peers are noticed (else sends just vanish)
  bool multi_process = false;         // can connect runtimes in different processes
  // Smallest capacity AllocateBlock can serve (UINT64_MAX: none); the runtime skips the
  // module for smaller requests (Runtime::NewBuffer of a small message costs no call).
  uint64_t min_block_bytes = UINT64_MAX;
  // Future operations (spec/rma-nic.md): the runtime emulates them over RSRs when false.
  bool rma = false;
  bool atomics = false;
  // The module keeps virtual time (the `sim` module, rt/core/virtual_time.h): a frame only
  // comes when the simulated machine delivers it, and the module wakes the progress thread
  // (ModuleHost::Wake) for every arrival and peer event that no thread waiting in the
  // runtime takes. The progress thread then does not busy-poll (RuntimeOptions::spin_us)
  // after activity, and across processes (with multi_process: `ukai launch --sim`) it does
  // not step aside in timed sleeps while program threads call Progress() either: it
  // sleeps until woken, at most 10 ms (dispatch.cc). Spinning and timed wake-ups would
  // only take the host's cores from the processes and the simulation that the next
  // delivery waits for.
  bool virtual_time = false;
};

enum class CommState : uint8_t { kOk, kFailed, kClosed };

// A live connection to one peer runtime by one module. Owned by the runtime's peer table
// (shared_ptr: the module may keep a reference for its own progress). Thread safe.
class CommObject {
 public:
  virtual ~CommObject() = default;
  // Sends one frame (header already written at the front of `frame`). Takes ownership of
  // the block in every case. Errors: kUnavailable once the object failed or closed.
  virtual Status Send(ByteBlock&& frame) = 0;
  // The fields of an RSR's wire header that a connection does not imply (the source and
  // target are the connection's ends; kind and lengths follow from the payload).
  struct RsrRoute {
    uint32_t context = 0;
    uint32_t endpoint = 0;
    uint32_t handler = 0;
    uint32_t flags = 0;  // wire header flags; kFlagHasAddress: `address` is set
    uint64_t address = 0;
  };
  // Sends one RSR from its route and payload without a frame (the payload is copied before
  // it returns), when the module has such a path and can take it now: then true, and it is
  // in the channel's order exactly as Send's frames are. False when it cannot (no such path,
  // frames queued ahead of it, a full ring, a payload the module sends another way, a failed
  // or closed object): nothing was sent, and the caller builds the frame and calls Send,
  // which also reports any error. Default: false.
  virtual bool TrySendInPlace(const RsrRoute& route, std::span<const uint8_t> payload) {
    (void)route;
    (void)payload;
    return false;
  }
  // Whether TrySendInPlace can ever take an RSR (so that the runtime does not try the others).
  bool sends_in_place() const { return sends_in_place_; }

  // ---- Sends from the caller's memory (mpi; Runtime::SendRsrBytes) ----
  // A send in flight whose payload the module still reads from the caller's memory.
  class LentSend {
   public:
    virtual ~LentSend() = default;
    // True once the module no longer reads the payload (it was taken, or the transport gave
    // up on it); false until then. Drives the transport's own progress; any thread.
    virtual bool Done() = 0;
  };
  // The smallest payload SendLent may take (UINT64_MAX: the object has no such path); the
  // runtime calls SendLent only for payloads of at least this size.
  uint64_t lends_from_bytes() const { return lends_from_bytes_; }
  // Sends one frame made of `header` (its wire header, kHeaderSize bytes, then owned by the
  // object) and `payload`, which stays in the caller's memory: the caller must keep it and
  // not return before the result is Done(), driving the runtime's progress meanwhile (the
  // peer may be waiting for us to take its own lent sends). In the channel's order as
  // Send's frames are. Null: declined, nothing sent (the caller sends a frame instead).
  // Errors as Send's (nothing is then read from `payload`).
  virtual Result<std::unique_ptr<LentSend>> SendLent(ByteBlock&& header,
                                                     std::span<const uint8_t> payload) {
    (void)header;
    (void)payload;
    return std::unique_ptr<LentSend>();
  }

  // ---- A lent send lock (one lock per send) ----
  // The lock that serialises this object's sends, when the object lends it (nullptr: it
  // does not). The runtime's per-peer frame log (rt/core/frame_log.h) then keeps its records
  // under this lock instead of one of its own, so a send takes one lock and the log's order
  // is the object's. Whoever holds it calls only the *Locked methods below.
  SpinMutex* send_lock() const { return send_lock_; }
  // Send() in two steps for an object that lends its lock: PrepareSend without it (the
  // checks and the work that needs no order, e.g. a copy; an error means the frame was not
  // sent: it is dropped, as Send's errors drop it), then SendLocked with send_lock() held,
  // which cannot fail; `token` carries what PrepareSend decided. Send() does both.
  virtual Status PrepareSend(ByteBlock& frame, uint32_t* token);
  virtual void SendLocked(ByteBlock&& frame, uint32_t token);
  // TrySendInPlace with send_lock() held.
  virtual bool TrySendInPlaceLocked(const RsrRoute& route, std::span<const uint8_t> payload);
  // Closes the connection (a kBye frame first where the module has a stream).
  virtual void Close() = 0;
  virtual CommState state() const = 0;
  virtual RuntimeId peer() const = 0;

  // ---- Flow control and flushing (docs/runtime.md, "Flow control") ----
  // Bytes of frames Send() accepted that the transport has not taken yet and that this
  // object holds in memory for the peer (send queue behind a full socket or ring, frames
  // the peer still reads from our memory, sends MPI has not completed, an inproc inbox).
  // The runtime's per-peer limit (RuntimeOptions::send_queue_bytes) compares it. Cheap;
  // any thread.
  virtual size_t QueuedBytes() const { return 0; }
  // Frames (and their bytes) Send() accepted that the peer has not been seen to take:
  // queued, or in the socket / ring / inbox but not yet consumed by the peer. After the
  // object failed: those it lost then. Pushes queued frames on as a side effect (any thread;
  // may make system calls). {0, 0}: everything accepted reached the peer.
  struct Unconfirmed {
    uint64_t frames = 0;
    uint64_t bytes = 0;
  };
  virtual Unconfirmed Outstanding() { return {}; }

 protected:
  bool sends_in_place_ = false;             // set by the constructors of objects that override it
  uint64_t lends_from_bytes_ = UINT64_MAX;  // set by objects that override SendLent
  SpinMutex* send_lock_ = nullptr;          // set by the constructors of objects that lend it
};

// Defaults of the lent-lock methods: only objects that lend their lock are called with it.
inline Status CommObject::PrepareSend(ByteBlock& frame, uint32_t* token) {
  (void)frame;
  (void)token;
  return Status::Internal("CommObject::PrepareSend of an object that lends no send lock");
}
inline void CommObject::SendLocked(ByteBlock&& frame, uint32_t token) {
  (void)token;
  ByteBlock dropped = std::move(frame);
}
inline bool CommObject::TrySendInPlaceLocked(const RsrRoute& route,
                                             std::span<const uint8_t> payload) {
  (void)route;
  (void)payload;
  return false;
}

// What the runtime offers a module. Implemented by the runtime; one per Runtime.
class ModuleHost {
 public:
  virtual ~ModuleHost() = default;
  virtual RuntimeId runtime_id() const = 0;
  // Module parameter `key` (e.g. "tcp.listen"), or "" when unset.
  virtual std::string Param(std::string_view key) const = 0;
  virtual bool tracing() const = 0;
  // Prints "[ukai <runtime id>] <line>" on stderr when tracing.
  virtual void Trace(std::string_view line) const = 0;

  // Hands one decoded RSR/control frame to the runtime (only from inside Progress()).
  // `payload` must stay valid until the module's next Progress(); when `owned` is non-null
  // and holds the payload's storage, the runtime may move it out.
  virtual void Deliver(const wire::FrameHeader& header, std::span<const uint8_t> payload,
                       ByteBlock* owned) = 0;
  // Decodes a whole frame and Delivers it; a malformed frame is counted and its Status
  // returned (datagram modules: drop it and carry on).
  virtual Status DeliverFrame(std::span<const uint8_t> frame, ByteBlock* owned) = 0;
  // Counts a frame rejected by the module itself (stream modules: then fail the connection,
  // a byte stream cannot resynchronise).
  virtual void RejectFrame(const Status& why) = 0;
  // A connection the peer opened (e.g. accepted tcp socket, identified by its kHello): the
  // runtime uses it for sends to `peer` unless it already has a working object.
  virtual void AdoptIncoming(RuntimeId peer, std::shared_ptr<CommObject> object) = 0;
  // The module's object to `peer` failed (orderly = the peer said goodbye).
  virtual void PeerFailed(RuntimeId peer, std::string_view module, bool orderly,
                          const Status& why) = 0;
  // Thread safe: wakes the progress thread if it is blocked (for modules without a WaitFd
  // whose senders run in this process, like inproc).
  virtual void Wake() = 0;
  // Whether the runtime runs a progress thread (RuntimeOptions::progress_thread).
  virtual bool has_progress_thread() const { return false; }
  // Runs one progress pass (modules polled, frames dispatched, non-threaded handlers run)
  // on the calling thread, a thread of the module's own that stands in for the progress
  // thread (the sim module's driver, which must see what it delivered dispatched before it
  // goes on): waits until no other thread is in a pass (the progress thread steps aside).
  // False (nothing done) when the runtime has no progress thread (its handlers run only in
  // the program's own Progress calls), is not running (starting, finalizing), or another
  // thread kept its pass for 50 ms (it may be waiting for the caller). Any thread but one
  // inside a pass of this runtime.
  virtual bool RunProgressPass() { return false; }

  // ---- Authentication and confinement (docs/runtime.md) ----
  // This runtime's job secret (set before any module's Init; null only in test fakes, whose
  // modules then refuse every peer). Any thread.
  virtual const JobSecret* job_secret() const { return nullptr; }
  // The key to prove when connecting to `peer`: the join token its startpoint carried when
  // it is of another job, else the job secret. Any thread.
  virtual PeerKey KeyFor(RuntimeId /*peer*/) const {
    return job_secret() != nullptr ? job_secret()->KeyTowards(nullptr) : PeerKey{};
  }
  // True when every process of this runtime's job runs on this host (`ukai launch`, a
  // single process, an mpirun job on one node): the tcp module then listens on 127.0.0.1
  // unless tcp.listen says otherwise.
  virtual bool job_on_one_host() const { return false; }
  // True when the job has more processes on this host than it has CPUs (computed before the
  // modules' Init): its processes then take turns on the cores, and a module's progress
  // pass should not leave work for a later pass, which comes only after a turn of the
  // others (the shm module's coalescing polls, shm_channel.h).
  virtual bool oversubscribed() const { return false; }

  // ---- Virtual time (rt/core/virtual_time.h) ----
  // The sim module hands the runtime its hooks in Init (valid until the module's Close);
  // the runtime then reports its threads' calls and waits, and Runtime::Now() asks them.
  virtual void SetVirtualTime(internal::VirtualTime* /*hooks*/) {}
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string_view name() const = 0;
  virtual Status Init(ModuleHost* host) = 0;
  virtual ModuleCaps Query() const = 0;
  virtual Result<std::vector<uint8_t>> MakeDescriptor() = 0;
  virtual bool CanReach(std::span<const uint8_t> descriptor) const = 0;
  // Why CanReach(descriptor) is false, for the runtime's error message.
  virtual std::string Unreachable(std::span<const uint8_t> /*descriptor*/) const {
    return "unreachable";
  }
  virtual Result<std::shared_ptr<CommObject>> Connect(RuntimeId peer,
                                                      std::span<const uint8_t> descriptor) = 0;
  virtual int Progress() = 0;
  virtual int WaitFd() const { return -1; }
  // Progress thread only, in pairs (see the header comment).
  virtual bool PrepareToBlock() { return true; }
  virtual void Unblocked() {}
  virtual ByteBlock AllocateBlock(size_t /*capacity*/) { return ByteBlock(); }
  virtual OneSided* one_sided() { return nullptr; }
  virtual std::map<std::string, uint64_t> Counters() const { return {}; }
  virtual void Close() = 0;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_MODULE_H_
