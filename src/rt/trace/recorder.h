// The OTF2 recorder of one Runtime (docs/otf2-recording.md): it writes this process's part of
// the job's OTF2 archive — one event file per location — with the standard MPI event records,
// so that any OTF2 tool (otf2-print, Vampir, the simulator's replay) reads the merged archive.
//
// Mapping of the runtime onto OTF2's MPI model:
//  * A process (Runtime, bootstrap rank R) is MPI rank R of communicator 0 ("MPI_COMM_WORLD",
//    the job's runtimes) and location group R. Its locations are CPU threads:
//      location R                 "rank R main": the program's threads outside any handler
//                                 (sends from main(), Barrier, replies to requests sent there);
//      location (k << 32) | R     "rank R context C 'name'", the k-th context the runtime created
//                                 (k >= 1): events of that context's handlers.
//      location (k << 32) | R     "rank R progress" (created when first needed, taking the next
//                                 slot): what arrives or runs asynchronously, outside handlers
//                                 and the program's flow — answers of callback-form requests and
//                                 what those callbacks send, peer-event callbacks, frames nobody
//                                 posted a receive for.
//    Location R is rank R's entry in the COMM_LOCATIONS group (the "master thread", as Score-P
//    and the OTF2 MPI example do); OTF2's rule "location group id = MPI rank" holds for every
//    location.
//  * An RSR sent is an MpiSend (receiver = the target runtime's rank, communicator 0, tag =
//    handler id, length = payload bytes) on the sending location; an answer is an MpiSend on
//    communicator 1 with tag = AnswerTag(the request's id) (below). A context receives its RSRs
//    like a server loop of MPI_Irecv: a receive is posted (MpiIrecvRequest) when the context
//    becomes ready and each time one of its handlers returns, and completes (MpiIrecv: sender, tag,
//    length) when the next handler starts. A request is an MpiSend plus an MpiIrecvRequest for its
//    answer, completed by MpiIrecv when the answer arrives (cancelled, MpiRequestCancelled, on a
//    timeout, a cancellation or a failure); for a request with a callback that receive is on
//    the progress location (the program did not wait for it). Frames nobody expected (an RSR
//    dropped for an unknown target, a late answer, a refusal) are received on the progress
//    location at arrival (MpiIrecvRequest + MpiIrecv at one time).
//  * Barrier() is MpiCollectiveBegin + MpiCollectiveEnd(BARRIER, comm 0, no root).
//  * RMA put/get/atomics are RmaPut/RmaGet/RmaAtomic on window 0 (communicator 0; remote = the
//    owner's rank) with a matching id, completed by RmaOpCompleteBlocking (direct path, done at
//    once) or RmaOpCompleteNonBlocking (when Wait/Flush/Fence reclaims the operation). The RSRs
//    the RMA layer sends internally (handlers ukai.rma.*) are not recorded as messages.
//
// Files: DIR/traces.parts/rank-R.otf2 (+ .def) and DIR/traces.parts/rank-R/<location>.evt,
// a serial OTF2 archive of this process alone; archive.h merges the parts into DIR/traces.otf2.
//
// Clock: CLOCK_MONOTONIC in nanoseconds (timer resolution 1e9 ticks/s), the same clock for all
// processes of one host. Timestamps are taken under the location's lock, so each location's
// events are in time order.
//
// Thread safety: every method may be called from any thread. Each location has a mutex that
// orders its events; SendAndRecord holds it across the send, so that a receive completed by an
// answer to that send is never recorded before the send. Memory: at most kChunksPerLocation
// chunks of kChunkBytes per open location; a full buffer is written to the event file by the
// recording thread.
#ifndef UKAI_RT_TRACE_RECORDER_H_
#define UKAI_RT_TRACE_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/status.h"
#include "ukai/rt/startpoint.hpp"

struct OTF2_Archive_struct;
struct OTF2_EvtWriter_struct;

namespace ukai::rt::trace {

// Nanoseconds of CLOCK_MONOTONIC (the recorder's clock).
uint64_t Now();

// Event buffer chunk size (OTF2's minimum) and chunks kept per location before a flush.
inline constexpr uint64_t kChunkBytes = 256 * 1024;
inline constexpr int kChunksPerLocation = 4;
// Communicators, RMA window and location-id layout of the archive. RSRs and requests travel
// on kWorldComm (tag = handler id); answers on kAnswerComm (a duplicate of it) with tag =
// AnswerTag(the requester's request id), so that an answer matches exactly the receive its
// request posted, as MPI's matching rule (communicator, source, tag, in order) requires: with
// the handler as tag, a request and an answer between two ranks, or two answers of one handler,
// would be the same envelope.
inline constexpr uint32_t kWorldComm = 0;
inline constexpr uint32_t kAnswerComm = 1;
inline constexpr uint32_t AnswerTag(uint64_t request) { return static_cast<uint32_t>(request); }
inline constexpr uint32_t kRmaWindow = 0;
inline constexpr uint64_t LocationId(uint32_t rank, uint32_t slot) {
  return (uint64_t{slot} << 32) | rank;
}

class Recorder;

// One OTF2 location. Owned by its Recorder; pointers stay valid while the Recorder lives.
class Location {
 public:
  uint64_t id() const { return id_; }

 private:
  friend class Recorder;
  Location(const Recorder* owner, uint64_t id, std::string name)
      : owner_(owner), id_(id), name_(std::move(name)) {}
  const Recorder* const owner_;
  const uint64_t id_;
  const std::string name_;
  std::mutex mu_;                            // orders the events below
  OTF2_EvtWriter_struct* writer_ = nullptr;  // null once closed
  uint64_t first_ = 0, last_ = 0;            // timestamps of the first and last event
  uint64_t events_ = 0;                      // events written (set when closed)
  uint64_t next_request_ = 1;                // MpiIrecvRequest ids
  std::deque<uint64_t> posted_;              // a context's receives posted, not completed (FIFO)
  std::unordered_set<uint64_t> answers_;     // receives posted for requests' answers
};

// Request ids of the receives posted for requests' answers: the runtime's request id with this
// bit set (the other receives of a location count from 1).
inline constexpr uint64_t kAnswerRequestBit = uint64_t{1} << 63;

// RMA operations as OTF2 records them.
enum class RmaKind : uint8_t { kPut, kGet, kAtomic };

struct RecorderOptions {
  std::string dir;  // the archive directory (created when missing)
  int rank = 0;     // this process's rank, 0..size-1
  int size = 1;
  std::vector<RuntimeId> world;  // the runtime id of each rank (index = rank)
  std::string host;              // this host's name (system tree node)
};

struct RecorderStats {
  uint64_t events = 0;      // written so far (closed locations) — exact after Finish
  uint64_t unrecorded = 0;  // messages with a peer outside the job (no rank): not recorded
  uint64_t locations = 0;
};

class Recorder {
 public:
  // Creates DIR and DIR/traces.parts when missing and opens this process's part. Errors
  // (kInvalidArgument / kIoError, naming the path): DIR cannot be created or written, DIR
  // already holds an archive (traces.otf2, traces/), this rank's part exists (a previous run's
  // leftover), the rank is outside the world.
  static Result<std::unique_ptr<Recorder>> Open(RecorderOptions options);
  ~Recorder();  // Finish() if not done
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The location of the program's threads outside handlers.
  Location* main() const { return main_; }
  // The progress location (created on the first call; null after Finish).
  Location* progress();
  // A new location for a context that becomes ready (posts its first receive).
  Location* OpenContext(uint32_t context, std::string_view name);
  // The context is gone: its posted receives are cancelled and its event file is closed.
  void CloseContext(Location* loc);
  // Whether `loc` belongs to this recorder (a handler of another runtime runs on this thread).
  bool Owns(const Location* loc) const { return loc != nullptr && loc->owner_ == this; }

  // ---- point-to-point ----
  // Runs `send` (a callable returning Status) holding `loc`'s lock and, when it returns OK,
  // records an MpiSend to `to`'s rank on communicator `comm` and, for a request
  // (`answer_request` != 0), posts the receive of its answer with that id (MpiIrecvRequest).
  template <typename Send>
  Status SendAndRecord(Location* loc, RuntimeId to, uint32_t comm, uint32_t tag, uint64_t bytes,
                       Send&& send, uint64_t answer_request = 0) {
    std::lock_guard<std::mutex> lock(loc->mu_);
    Status st = send();
    if (st.ok()) RecordSentLocked(loc, to, comm, tag, bytes, answer_request);
    return st;
  }
  // A handler of the context of `loc` starts for an RSR from `from`: completes the oldest
  // posted receive (or posts one now).
  void HandlerStart(Location* loc, RuntimeId from, uint32_t tag, uint64_t bytes);
  // That handler returned: the context posts its next receive.
  void HandlerEnd(Location* loc);
  // Posts the receive of request `request`'s answer from runtime `from` on `loc` before the
  // request is sent from another location (a callback-form request: `loc` is the progress
  // location). Nothing for a runtime outside the job.
  void PostAnswer(Location* loc, uint64_t request, RuntimeId from);
  // The answer to request `request` (posted on `loc` by SendAndRecord or PostAnswer) arrived.
  // Nothing is recorded for a receive that was not posted (the send failed or was not recorded).
  void CompleteReceive(Location* loc, uint64_t request, RuntimeId from, uint32_t comm, uint32_t tag,
                       uint64_t bytes);
  // Request `request` ended without an answer (timeout, cancellation, failure): its posted
  // receive, if any, is cancelled (MpiRequestCancelled).
  void CancelReceive(Location* loc, uint64_t request);
  // A frame nobody posted a receive for arrived (received at once).
  void Arrival(Location* loc, RuntimeId from, uint32_t comm, uint32_t tag, uint64_t bytes);

  // ---- collectives ----
  void BarrierBegin(Location* loc);
  void BarrierEnd(Location* loc);

  // ---- RMA ----
  // A put/get/atomic to the context owned by runtime `target` was issued; returns its matching
  // id (0 when not recorded). `atomic_type` is an OTF2_RmaAtomicType (atomics only).
  uint64_t RmaIssue(Location* loc, RmaKind kind, RuntimeId target, uint64_t bytes_sent,
                    uint64_t bytes_received, uint8_t atomic_type = 0);
  // The operation `matching` completed: `blocking` = done within the issuing call.
  void RmaComplete(Location* loc, uint64_t matching, bool blocking);

  // Closes every location and writes this process's part (its definitions). Idempotent;
  // events recorded afterwards are ignored. Errors name the file.
  Status Finish();

  const std::string& dir() const { return options_.dir; }
  int rank() const { return options_.rank; }
  int size() const { return options_.size; }
  RecorderStats stats() const;

 private:
  explicit Recorder(RecorderOptions options);
  Status OpenArchive();
  Location* AddLocation(uint32_t slot, std::string name);
  // The rank of runtime `id`, or -1 (counted in unrecorded) when it is outside the job.
  int64_t RankOf(RuntimeId id);
  // Timestamp for the next event of `loc` (mu_ held): never below its last one.
  uint64_t Stamp(Location* loc);
  void RecordSentLocked(Location* loc, RuntimeId to, uint32_t comm, uint32_t tag, uint64_t bytes,
                        uint64_t answer_request);
  void CloseLocationLocked(Location* loc);  // loc->mu_ held
  void Check(int otf2_error, const char* what);
  Status WritePartDefinitions();

  RecorderOptions options_;
  std::unordered_map<RuntimeId, uint32_t> ranks_;
  int64_t realtime_offset_ = 0;  // CLOCK_REALTIME - CLOCK_MONOTONIC at Open (ns)
  OTF2_Archive_struct* archive_ = nullptr;
  mutable std::mutex mu_;  // archive_ (writers), locations_, slots, finished_
  std::vector<std::unique_ptr<Location>> locations_;
  uint32_t next_slot_ = 1;
  Location* main_ = nullptr;
  Location* progress_ = nullptr;
  bool finished_ = false;
  std::atomic<uint64_t> unrecorded_{0};
  std::atomic<uint64_t> next_match_{1};
  std::mutex error_mu_;
  std::string error_;  // the first OTF2 error while recording
};

}  // namespace ukai::rt::trace

#endif  // UKAI_RT_TRACE_RECORDER_H_
