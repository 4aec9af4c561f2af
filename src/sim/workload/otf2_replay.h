// Otf2Replay: replays the MPI program an OTF2 archive recorded (workload.kind = "otf2";
// docs/workloads.md) on the simulated network, as a simulated program: each location (a
// rank's main thread, and its other threads: workload/otf2_archive.h) walks its events in
// order with its own clock; communication becomes workload messages whose deliveries move
// the locations on.
//
// Time: a location's clock starts at 0 (the archive's global offset). With
// workload.compute = "trace" the time between two events counts as compute -- it is added
// to the location's clock -- when the location is outside every MPI call (Enter/Leave of a
// region of paradigm MPI) and the event does not complete a communication (MpiRecv,
// MpiIrecv, MpiIsendComplete, MpiCollectiveEnd, RmaCollectiveEnd, RmaOpCompleteBlocking:
// the time before those is waiting, which the network replays); a BufferFlush's duration is
// the tracer's, not the program's. Ticks become cycles with the archive's timer resolution
// and router.clock_mhz. With "none" only communication takes time.
//
// Point-to-point: a send (MpiSend, MpiIsend) is matched with a receive (MpiRecv, or the
// MpiIrecvRequest whose MpiIrecv names its source and tag) by communicator, source rank,
// destination rank and tag, each in the order posted, as MPI matches them (the trace records
// wildcards already resolved); any location of the destination rank may post the receive.
// On a rank of one location "posted" is the order it walks its events. On a rank of several
// (threads), whose locations the replay walks one after the other with clocks that drift
// apart, it is the trace's order (the timestamps of the posting events, one clock per
// process): the first receive of an envelope matches only when no other location of the
// rank can still post one with an earlier timestamp (the next event of each is later, or it
// ended), so a message goes to the receive that took it when the trace was recorded.
// Unmatched sends wait in the order of the senders' clocks.
// A send of at most workload.eager_bytes leaves at once as one data message and completes
// locally at once; a larger one (rendezvous) sends a request of workload.control_bytes, and
// its data leaves when the request has arrived and the matching receive is posted; it
// completes when the data is delivered. A receive completes when its data has been
// delivered and it has been posted. Blocking calls and waits (MpiRecv, MpiIrecv,
// MpiIsendComplete, a rendezvous MpiSend) stop the location until then.
//
// Collectives: MpiCollectiveBegin ... MpiCollectiveEnd (its operation, communicator, root
// and sizes are in the End record, read ahead) become the messages of the schedule of
// workload/collectives.h (workload.collective_algorithm), without rendezvous. Sizes follow
// Score-P's convention for the End record's sent/received bytes (docs/workloads.md): e.g.
// bcast: each rank receives n; allreduce: each rank sends and receives p n. A rank sends a
// message of the schedule once it has reached the collective and received the messages
// before it in the algorithm (v-collectives: and once the ranks whose blocks it carries have
// reached it, their sizes being in their own records); it leaves the collective when every
// message it sends or receives in it has been delivered. The k-th collective a rank calls on
// a communicator is the k-th of every member (a different operation is an error naming
// both). RMA: RmaPut (data to the target), RmaGet (a request, then the data back), RmaAtomic
// (operands, then the result back), waited for by RmaOpCompleteBlocking; RmaCollectiveBegin/
// End on a window is a collective on the window's communicator.
//
// Every other kind of event is counted by name (unmodelled_events), never dropped
// silently; markers without communication (ProgramBegin, Metric, ...) only carry time.
// Odd but harmless traces (a completion of an unknown request, a receive posted and never
// completed, sends or receives left unmatched) are counted and reported in the note; an
// archive the replay cannot follow (an undefined communicator, a rank outside it, a
// collective that never ends or differs between ranks) stops the run with an error naming
// the file, the location and the event.
//
// Memory: locations read their events as they go (a location may run at most
// kRunAheadCycles ahead of the network's clock), so memory holds the messages in flight, the
// unmatched sends and receives, and the events read ahead -- not the trace.
//
// Thread safety: none; owned by one run.
#ifndef UKAI_SIM_WORKLOAD_OTF2_REPLAY_H_
#define UKAI_SIM_WORKLOAD_OTF2_REPLAY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"
#include "sim/workload/collectives.h"
#include "sim/workload/otf2_archive.h"
#include "sim/workload/trace_source.h"

namespace ukai::sim {

class Otf2Replay final : public TraceSource {
 public:
  static constexpr int64_t kRunAheadCycles = int64_t{1} << 20;
  // How far a location reads ahead for an MpiIrecv's or a collective's End record.
  static constexpr size_t kMaxLookAhead = 1 << 20;

  // Opens config.workload.file, maps ranks to nodes (workload.rank_map; kInvalidArgument
  // when the archive has more ranks than the network has nodes, or the map is wrong).
  static Result<std::unique_ptr<Otf2Replay>> Open(const SimConfig& config, const Topology& topology,
                                                  double clock_mhz);
  ~Otf2Replay() override;

  Status Advance(int64_t now, Workload* workload) override;
  int64_t NextCycle() const override;
  void Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle,
                 Workload* workload) override;
  void Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload* workload) override;
  bool Finished() const override;
  // program_time_us, rank_finish_us, communication_time_us, replayed_messages, ...
  void Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
              std::vector<std::string>* notes) const override;

  int ranks() const { return static_cast<int>(node_of_rank_.size()); }
  int locations() const { return static_cast<int>(locs_.size()); }
  int node_of(int rank) const { return node_of_rank_[static_cast<size_t>(rank)]; }
  // The cycle the rank's last location ended at (-1 while one runs), and the compute cycles
  // of its main location.
  int64_t finish_cycle(int rank) const;
  int64_t compute_cycles(int rank) const { return locs_[static_cast<size_t>(rank)].compute; }
  int64_t p2p_messages() const { return p2p_; }
  int64_t collectives() const { return collectives_; }
  int64_t rma_operations() const { return rma_ops_; }
  const std::map<std::string, int64_t>& unmodelled() const { return unmodelled_; }
  // Tests: every match of a send with a receive, in the order they matched.
  struct MatchRecord {
    uint64_t comm;
    int src, dst;  // world ranks
    uint32_t tag;
    int64_t bytes;
    int64_t posted;  // the receive's post cycle
  };
  void KeepMatchLog(bool on) { keep_matches_ = on; }
  const std::vector<MatchRecord>& match_log() const { return matches_; }

 private:
  enum class Carrier : uint8_t { kData, kRts, kColl, kRmaFirst, kRmaReply };
  enum class Wait : uint8_t { kNone, kRequest, kCollective, kRma, kPaused, kDone };
  // Matching: communicator, world source and destination, tag.
  struct MatchKey {
    uint64_t comm = 0;
    int32_t src = 0, dst = 0;
    uint32_t tag = 0;
    bool operator==(const MatchKey&) const = default;
  };
  // A collective's description from its End record.
  struct CollInfo {
    CollectiveOp op;
    uint64_t comm;  // communicator (RMA: its window's)
    uint64_t key;   // communicator or window: whose collectives are counted
    uint32_t root;
    uint64_t sent, received;
  };

  // A send or receive of a location (pooled; index in requests_).
  struct Request {
    bool live = false, is_send = false, complete = false;
    int owner = -1;             // location
    int64_t done = 0;           // completion cycle
    int32_t transfer = -1;      // the matched transfer
    int64_t posted = 0;         // a receive: when it was posted (cycles)
    uint64_t trace_posted = 0;  // ... and by the trace (ticks of its posting event)
    MatchKey key{};             // a receive: what it matches (for cancellation and notes)
  };
  // One message of the program: a send and, once matched, its receive.
  struct Transfer {
    bool live = false, rendezvous = false;
    int src = -1, dst = -1;  // world ranks
    int64_t bytes = 0;
    int32_t send_req = -1, recv_req = -1;
    int64_t posted = -1;  // the matched receive's post cycle
    int64_t sent = 0;     // the sender's clock at the send
    bool rts_done = false, data_added = false, data_done = false;
    int64_t rts_time = 0, data_time = 0;
  };
  // One collective operation of one communicator (pooled; index in colls_).
  struct CollInstance {
    bool live = false, v_op = false;
    CollInfo info{};
    std::pair<uint64_t, int64_t> key{};  // (communicator key, its collective number)
    int p = 0;
    std::vector<int> members;  // world ranks by communicator rank
    std::vector<int> caller;   // per member: the location that called it (-1: not yet)
    CollSchedule schedule;
    std::vector<int64_t> block;  // per member (v-operations: from its own record)
    std::vector<int64_t> ready;  // per member: arrival, then the deliveries before a send
    std::vector<int64_t> last;   // per member: the latest delivery it took part in
    std::vector<std::vector<int32_t>> in, out;  // message indices per member, in order
    std::vector<int64_t> done_at;               // per message: delivery cycle (-1: not yet)
    std::vector<int32_t> prefix, next_out, out_done;
    std::vector<char> finished;
    int remaining = 0;  // members not finished
    std::string first;  // the first member's call, for mismatch errors
  };
  // An RMA operation of a location (pooled; index in rma_).
  struct RmaOp {
    bool live = false, complete = false, waited = false, forget = false;
    int owner = -1;   // location
    int target = -1;  // world rank
    Otf2EventKind kind = Otf2EventKind::kRmaPut;
    int64_t back = 0;  // bytes of the reply (get: the data, atomic: the result)
    int64_t done = 0;
  };
  // A replayed location (0..ranks()-1: the ranks' main locations).
  struct Location {
    int rank = 0;          // world rank
    int64_t time = 0;      // the location's clock, cycles
    uint64_t last_ts = 0;  // ticks of its previous event
    int mpi_depth = 0;
    int64_t compute = 0;
    int64_t events = 0;  // processed
    Wait wait = Wait::kNone;
    int32_t wait_on = -1;
    int64_t finish = -1;
    int skip_ends = 0;  // End records of collectives already entered at their Begin
    std::unordered_map<uint64_t, int32_t> requests;  // trace request id -> Request
    std::unordered_map<uint64_t, int32_t> rma;       // matching id -> RmaOp
  };

  struct MatchKeyHash {
    size_t operator()(const MatchKey& k) const;
  };
  struct Queues {
    std::deque<int32_t> sends;  // unmatched transfers, in send order
    std::deque<int32_t> recvs;  // unmatched receive requests, in post order
  };

  Otf2Replay() = default;
  Status Init(const SimConfig& config, const Topology& topology, double clock_mhz);
  Result<std::vector<int>> MapRanks(const SimConfig& config, const Topology& topology) const;

  // The driver (otf2_replay.cc).
  void Wake(int loc);
  void Drain();
  void RunLocation(int loc);
  void WalkLocation(int loc);
  Status Step(int loc, const Otf2Event& e);  // one event; may block the location
  void CountTime(Location& l, const Otf2Event& e);
  void Resume(int loc, int64_t time);
  Result<int> WorldRank(int loc, uint64_t comm, uint32_t peer, const char* what) const;
  std::string Where(int loc) const;  // "<file>: location L (rank R), event E"
  void Fail(Status st);

  // Point-to-point (otf2_p2p.cc).
  Status PostSend(int loc, const Otf2Event& e, bool blocking);
  Status PostRecv(int loc, uint64_t comm, uint32_t peer, uint32_t tag, int32_t request,
                  uint64_t trace_time);
  void MatchQueued(const MatchKey& key);
  bool FirstPostedSurely(int32_t recv);
  void RecheckDeferred(int rank);
  Status IrecvRequest(int loc, const Otf2Event& e);
  Status Irecv(int loc, const Otf2Event& e);
  void Match(int32_t transfer, int32_t request);
  void StartData(int32_t transfer);
  void CompleteRequest(int32_t request, int64_t time);
  void BlockOn(int loc, int32_t request);
  void Cancel(int loc, uint64_t trace_request);
  void TransferDelivered(Carrier c, int32_t transfer, int64_t cycle);
  void MaybeFreeTransfer(int32_t transfer);
  int32_t NewRequest(int owner, bool is_send);
  void FreeRequest(int32_t request);

  // Collectives (otf2_collective.cc).
  Status Collective(int loc, const Otf2Event& e, bool rma);
  Status ArriveCollective(int loc, const CollInfo& info);
  int32_t NewCollective(const CollInfo& info, std::pair<uint64_t, int64_t> key,
                        std::vector<int> members, int me, const std::string& call);
  void TryAdvance(int32_t inst, int member);
  void CheckMemberDone(int32_t inst, int member);
  void CollDelivered(int32_t inst, int32_t message, int64_t cycle);

  // RMA and figures (otf2_rma.cc).
  Status Rma(int loc, const Otf2Event& e);
  Status RmaComplete(int loc, const Otf2Event& e, bool blocking);
  void RmaDelivered(Carrier c, int32_t op, int64_t cycle);
  std::string DescribeWait(int loc) const;

  WorkMessageId Send(Carrier c, uint64_t index, int src_rank, int dst_rank, int64_t bytes,
                     int64_t earliest);
  int64_t Cycles(uint64_t ticks) const;

  std::unique_ptr<Otf2Archive> archive_;
  WorkloadConfig config_;
  double clock_mhz_ = 0;
  double cycles_per_tick_ = 0;
  Workload* workload_ = nullptr;
  int64_t now_ = 0;
  bool started_ = false;
  Status status_;
  std::vector<int> node_of_rank_;
  std::vector<Location> locs_;
  int finished_locs_ = 0;
  std::deque<int> runnable_;
  std::vector<char> queued_;
  bool draining_ = false;
  std::priority_queue<std::pair<int64_t, int>, std::vector<std::pair<int64_t, int>>,
                      std::greater<>>
      paused_;  // (cycle the location may go on, location)
  std::vector<Request> requests_;
  std::vector<int32_t> free_requests_;
  std::vector<Transfer> transfers_;
  std::vector<int32_t> free_transfers_;
  std::unordered_map<MatchKey, Queues, MatchKeyHash> queues_;
  // Per rank: whether it has several locations, which, and the envelopes (to it) whose first
  // receive waits for its other locations to walk past its post time (MatchQueued).
  std::vector<char> several_locations_;
  std::vector<std::vector<int>> locations_of_rank_;
  std::vector<std::unordered_set<MatchKey, MatchKeyHash>> deferred_;
  std::vector<CollInstance> colls_;
  std::vector<int32_t> free_colls_;
  std::map<std::pair<uint64_t, int64_t>, int32_t> coll_index_;  // (key, number) -> instance
  // Per rank: communicator key -> collectives it has called on it so far.
  std::vector<std::unordered_map<uint64_t, int64_t>> coll_seq_;
  std::vector<RmaOp> rma_;
  std::vector<int32_t> free_rma_;
  int64_t p2p_ = 0, collectives_ = 0, rma_ops_ = 0, lost_ = 0;
  std::map<std::string, int64_t> unmodelled_;
  std::map<std::string, int64_t> anomalies_;  // trace oddities, for the note
  bool keep_matches_ = false;
  std::vector<MatchRecord> matches_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_OTF2_REPLAY_H_
