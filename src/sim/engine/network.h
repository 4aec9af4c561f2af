// Network: one simulated network — topology, routers (Fabric), PEs with source queues
// (unbounded, or traffic.source_queue messages), message pool, synthetic traffic, the
// clock and the deadlock watchdog state.
// It owns everything it uses (no globals): two Networks may run in one process.
//
// One cycle (Step):
//   1. traffic: every node whose next creation cycle has come creates a message (its
//      destination drawn from the node's own RNG stream) into its source queue; with a
//      bounded queue (traffic.source_queue) that is full, the creation waits instead and
//      happens in the cycle a message's tail leaves the PE (the next creation is then
//      drawn from that cycle);
//   2. evaluate: every active node (a router with buffered flits, or a PE with queued
//      messages) evaluates its router (Fabric::Evaluate), then its PE pushes at most one
//      flit of the message at the front of its source queue into an injection VC with room
//      (the flit is visible to the router the next cycle: a 1-cycle injection channel);
//   3. commit: staged flits and credits move; ejected flits reach their PEs; a message is
//      delivered when its tail reaches the PE. Deliveries of one cycle are reported in
//      destination-node order, so results do not depend on evaluation order.
// Nodes with nothing to do are not visited; when no node is active, SkipIdle() jumps the
// clock to the next message creation (or timed fault event).
// A MessageSource (engine/message_source.h; the workload layer) set with SetMessageSource()
// creates its messages right after step 1 and hears of the cycle's deliveries after step 3.
//
// Faults (faults.*, topology/faults.h): the initial faults are applied before the routing
// function is built; a timed event is applied at the start of its cycle (topology,
// router ports, then RoutingFunction::TopologyChanged()). A message is not generated when
// its source or destination is faulty (counted in messages_not_generated()); a queued
// message of a node that fails, and a message drained by a router for lack of a live route
// or because its destination failed, is counted in messages_undeliverable() — never
// silently lost. A fault takes effect for heads routed from its cycle on: flits of a
// message already holding a channel's VC finish crossing it (no flit is corrupted).
//
// Parallel simulation (engine/partition.h, docs/simulator.md "Parallel simulation"): with
// run.threads > 1 or MPI ranks (run.ranks), the nodes are split into partitions, one per
// thread; the Fabric keeps a lane per partition. A cycle is then: (1) the serial part
// (timed events, reconfiguration actions) on the calling thread; (2) every partition in
// parallel: traffic creation, router evaluation, PE steps, its ejected tails turned into
// deliveries; (3) the MPI exchange (engine/rank_exchange.cc: boundary flits with their
// message records, credits, every rank's deliveries and counters) on the calling thread;
// (4) every partition's commit in parallel; (5) the deliveries merged in node order and the
// counters summed. The lookahead is one cycle (a credit returned in cycle t is seen
// upstream at t + 1), so partitions synchronise every cycle; the results are bit-identical
// to the serial run's (tests/sim/parallel_test.cc). Everything the run control reads
// (deliveries, counters, Stalled(), SkipIdle()) is global, identical on every rank.
//
// Thread safety: none; one thread drives a Network (it runs its own worker threads).
#ifndef UKAI_SIM_ENGINE_NETWORK_H_
#define UKAI_SIM_ENGINE_NETWORK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/lazy_array.h"
#include "core/rng.h"
#include "core/status.h"
#include "sim/engine/creation_schedule.h"
#include "sim/engine/message.h"
#include "sim/engine/message_source.h"
#include "sim/engine/partition.h"
#include "sim/engine/pe_gate.h"
#include "sim/engine/reconfiguration.h"
#include "sim/experiment/sim_config.h"
#include "sim/router/fabric.h"
#include "sim/router/selection.h"
#include "sim/routing/routing.h"
#include "sim/topology/faults.h"
#include "sim/topology/topology.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"

namespace ukai::sim {

class RankGroup;   // rank_group.h
class WorkerPool;  // worker_pool.h
struct RankState;  // rank_exchange.h

// A message the NIC models create (CreateMessage(const NewMessage&)).
struct NewMessage {
  int src = 0;
  int dst = 0;  // -1: a multicast, delivered wherever its routing ejects it
  int flits = 1;
  int64_t tag = -1;       // reported in its Delivery
  int32_t route = -1;     // Message::route (source routing)
  int32_t copies = 1;     // deliveries of a multicast
  int inject_vc = -1;     // the PE's injection VC (-1: the emptiest)
  bool gated = false;     // the PE injects flits only as SetAvailable() allows (cut-through)
  int32_t available = 0;  // with gated: flits injectable from the start
  bool urgent = false;    // queued at the front of the PE's source queue
};

// A flit handed to the PE of `node`, visible to the PE at `cycle`.
struct Ejection {
  int32_t node;
  int64_t cycle;
  Flit flit;
};

// A message whose tail reached its destination PE.
struct Delivery {
  int32_t src, dst, length, hops;
  int64_t created, injected, delivered;  // cycles; latency = delivered - created
  uint32_t routing_state;                // the message's final routing state word
  int64_t tag = -1;                      // Message::tag (-1: synthetic traffic)
  int64_t head_delivered = 0;            // cycle the head reached the PE
  // Sum over its flits of (arrival at the PE - entry into the router's injection buffer).
  int64_t flit_transit_sum = 0;
};

class Network {
 public:
  // Validates the config (errors name the key) and builds the network. `routing`, when
  // given, replaces the registry's algorithm (tests use test-only routings). With
  // `with_traffic` false no messages are created except by CreateMessage().
  static Result<std::unique_ptr<Network>> Create(const SimConfig& config,
                                                 std::unique_ptr<RoutingFunction> routing = {},
                                                 bool with_traffic = true);

  // Bytes Create() allocates for `config` (topology, routers, PEs, RNG streams, the
  // initial message pool), computed from the config alone: the memory estimate checked
  // before a point runs (experiment/memory_budget.h). Messages queued later are not in it.
  static double StateBytes(const SimConfig& config);

  ~Network();

  // Bytes of state this Network reserved outside the heap (its arrays at full size,
  // touched or not, and the message pool up to its high-water mark): with the heap it
  // uses, what StateBytes() estimates.
  double ReservedBytes() const;

  // Advances one cycle.
  void Step();
  // When no node is active, jumps the clock forward to the next message creation, but not
  // beyond `limit`. Returns true if it moved the clock.
  bool SkipIdle(int64_t limit);

  // Creates a message of `flits` flits from src to dst at the current cycle (tests, NICs).
  // Under MPI every rank makes the same calls (the layers above the engine run on every
  // rank alike); the rank holding `src` queues the message.
  void CreateMessage(int src, int dst, int flits);
  // Same with a detour (via nodes, at most Message::kMaxVia, routing/detour.h) and an
  // owner's tag reported in its Delivery (or its undeliverable record). Returns the
  // message's pool index (valid until it is delivered or dropped; -1 on a rank that does
  // not hold `src`).
  int32_t CreateMessage(int src, int dst, int flits, std::span<const int> via, int64_t tag);
  // The NIC models' form (network_nic.cc): any destination, a multicast, a route, a gate.
  int32_t CreateMessage(const NewMessage& spec);
  // A gated message may inject `flits` of its flits so far (-1: all; the gate is gone).
  void SetAvailable(int32_t msg, int32_t flits);
  // Every flit handed to a PE during the last Step() (when WatchEjections(true)).
  void WatchEjections(bool on);
  const std::vector<Ejection>& ejected_flits() const { return watched_; }
  // The PE gate asked before every flit a PE pushes (nullptr: none). Not owned.
  void SetPeGate(PeGate* gate);
  // A bounded receive side at `node` (Fabric::SetEjectCredits / ReturnEjectCredits).
  void SetEjectCredits(int node, int32_t flits) { fabric_->SetEjectCredits(node, flits); }
  void ReturnEjectCredits(int node, int32_t flits) { fabric_->ReturnEjectCredits(node, flits); }
  // When no node is active, moves the clock to `cycle` (the NIC models' idle skipping);
  // returns whether it moved.
  bool AdvanceIdle(int64_t cycle);
  // router.switching = vct-saf / saf: heads stored whole (Fabric::packets_stored()).
  int64_t packets_stored() const { return fabric_->packets_stored(); }
  // Sets (or with nullptr removes) the source called in every Step()
  // (engine/message_source.h); not owned, it must outlive the Steps.
  // Needs a network of one partition (CheckPartitionable() refuses workloads otherwise).
  void SetMessageSource(MessageSource* source);
  // Tags of tagged messages that became undeliverable during the last Step() (so that
  // their owner can count them as lost).
  const std::vector<int64_t>& undeliverable_tags() const { return undeliverable_tags_; }

  int64_t now() const { return now_; }
  // A live message (tests, tracing); `id` as in HopEvent::msg.
  const Message& message(int32_t id) const { return (*messages_)[id]; }
  const Topology& topology() const { return *topology_; }
  const RoutingFunction& routing() const { return *routing_; }
  // Flits buffered in input VC `vc` of `port` of `node`'s router (measurements; 0 for a
  // node of another rank).
  int BufferedFlits(int node, int port, int vc) const {
    return fabric_->InputCount(node, port, vc);
  }
  // Reconfiguration (reconfig.*, engine/reconfiguration.h): messages discarded and resent
  // from their source, reconfigurations (episodes) completed and their cycles (first
  // event to last resume), their fault regions and cancelled root candidates (summed).
  int64_t messages_retransmitted() const { return totals_.retransmitted; }
  int64_t messages_discarded() const { return totals_.discarded; }
  int64_t reconfigurations() const { return reconfigurations_; }
  int64_t reconfiguration_cycles() const { return reconfiguration_cycles_; }
  int64_t reconfiguration_regions() const { return reconfiguration_regions_; }
  int64_t cancelled_root_candidates() const { return cancelled_root_candidates_; }
  bool reconfiguring() const { return reconfiguring_; }
  // The running (or last) episode's plan, as re-planned at its latest event.
  const ReconfigPlan& reconfig_plan() const { return plan_; }
  const SimConfig& config() const { return config_; }
  int message_flits() const { return message_flits_; }
  // Messages delivered during the last Step(), in destination order.
  const std::vector<Delivery>& deliveries() const { return deliveries_; }

  // Counters (of the whole network, on every rank).
  int64_t flits_in_network() const {
    return totals_.flits_injected + totals_.flits_copied - totals_.flits_ejected -
           totals_.flits_discarded;
  }
  int64_t flits_injected() const { return totals_.flits_injected; }
  int64_t flits_ejected() const { return totals_.flits_ejected; }
  int64_t flit_hops() const { return totals_.flit_hops; }
  int64_t messages_created() const { return totals_.messages_created; }
  int64_t messages_injected() const { return totals_.messages_injected; }
  // Per node: flits and heads injected since the start (this process's nodes: under MPI
  // the others' stay 0).
  const std::vector<int64_t>& sent_flits() const { return sent_flits_; }
  const std::vector<int64_t>& sent_packets() const { return sent_packets_; }
  // Stops the creation of traffic messages (BookSim2's drain of the remaining packets).
  void StopTraffic() { traffic_stopped_ = true; }
  // BookSim2's in-flight flits: created (source queue included) and not yet delivered, and
  // the sum of their ages at the current cycle (each flit counts its message's age).
  int64_t inflight_flits() const { return totals_.inflight_flits; }
  int64_t inflight_age_sum() const {
    return totals_.inflight_flits * now_ - totals_.inflight_created_sum;
  }
  int64_t messages_delivered() const { return totals_.messages_delivered; }
  // Faults: messages not created because an end node was faulty, messages that became
  // undeliverable (drained or dropped from a failed node's queue), events applied.
  int64_t messages_not_generated() const { return totals_.not_generated; }
  int64_t messages_undeliverable() const { return totals_.undeliverable; }
  int64_t fault_events_applied() const { return next_event_; }
  // Timed events still to come and the first one's cycle (-1: none); at the end of a run
  // these are the events that did not happen.
  int64_t fault_events_pending() const {
    return static_cast<int64_t>(events_.size() - next_event_);
  }
  int64_t next_fault_event_cycle() const {
    return next_event_ < events_.size() ? events_[next_event_].cycle : -1;
  }
  // The current fault state (all healthy without faults.*).
  const FaultState& faults() const { return *faults_; }
  // Messages waiting in source queues (not yet started).
  int64_t backlog() const { return totals_.backlog; }
  // Nodes of this process that are active (routers holding flits or busy PEs).
  int active_nodes() const;
  // How the network is split: partitions in all, evaluated by this many threads per rank
  // on this many ranks, and why fewer than asked ("" when as asked).
  int partitions() const { return partitions_; }
  int threads() const { return static_cast<int>(parts_.size()); }
  const std::string& partition_note() const { return partition_note_; }
  const PartitionPlan& partition_plan() const { return plan_parts_; }
  // Offered load per node averaged over all nodes (idle nodes count as 0), flits/cycle:
  // the injection process's load less the share of messages not generated because their
  // source or destination is faulty (faults.*), so that accepted can be compared with it.
  double offered_flits_per_node_cycle() const {
    const int64_t tried = totals_.messages_created + totals_.not_generated;
    if (totals_.not_generated == 0 || tried == 0) return offered_;
    return offered_ * static_cast<double>(totals_.messages_created) / static_cast<double>(tried);
  }
  // Nodes that send under the traffic pattern.
  int sending_nodes() const { return sending_nodes_; }

  // Deadlock watchdog: true when flits are in the network and none moved (nor was
  // injected) for `cycles` plus PipelineCycles(). A flit on a link or a head in its hop
  // pipeline moves again within PipelineCycles() without any other flit moving, so only a
  // real standstill lasts longer (a long link or hop is never taken for a deadlock).
  bool Stalled(int64_t cycles) const;
  // The longest time a flit can legitimately sit still: a link traversal plus a hop
  // pipeline with a table lookup (router.link_cycles + router.hop_cycles +
  // router.table_lookup_cycles + 1).
  int64_t PipelineCycles() const;
  // The kDeadlock status listing blocked channels.
  Status DeadlockStatus(int64_t watchdog_cycles) const;

  // Full consistency check (flit and credit conservation, buffer bookkeeping); slow.
  Status CheckInvariants() const;
  // Fabric::CheckNoMidwayStop at the current cycle, as a Status (kInternal when broken).
  Status CheckNoMidwayStop() const;

  // Tests and tracing: called for every head leaving a router. Needs a network of one
  // partition (run.threads = 1, one rank): with more, it would run on several threads.
  void SetHopObserver(std::function<void(const HopEvent&)> observer);
  // For tests: Fabric::SetConstantLayouts().
  void SetFabricConstantLayouts(bool on) { fabric_->SetConstantLayouts(on); }
  // For tests: Fabric::SetRouteCache().
  void SetFabricRouteCache(bool on) { fabric_->SetRouteCache(on); }
  // For tests, before the first cycle: Fabric::SetDeferredArrivals() (Create() turns it on
  // unless timed faults or the SSS NIC need every flit in its VC).
  void SetFabricDeferredArrivals(bool on) { fabric_->SetDeferredArrivals(on); }

 private:
  Network() = default;
  // An undeliverable message's tag, with the node that drained it or the index of the
  // fault event that dropped it.
  struct NodeTag {
    int32_t node;
    int64_t tag;
  };
  struct EventTag {
    int64_t event;
    int64_t tag;
  };
  // Counters of a partition, a rank or (totals_) the whole network.
  struct Counters {
    int64_t flits_injected = 0, flits_ejected = 0, flit_hops = 0, flits_discarded = 0;
    int64_t flits_copied = 0;       // into the extra branches of forks (Fabric::flits_copied)
    int64_t messages_injected = 0;  // heads injected
    // Created and not yet delivered (BookSim2's in-flight flits): flits, and the sum of
    // their messages' creation cycles.
    int64_t inflight_flits = 0, inflight_created_sum = 0;
    int64_t messages_created = 0, messages_delivered = 0, backlog = 0;
    int64_t not_generated = 0, undeliverable = 0, retransmitted = 0, discarded = 0;
    int64_t last_progress = 0;  // last cycle a flit moved or was injected
    // After a cycle: whether a node will be active in the next one, whether any creation
    // is scheduled, and (meaningful only when no node is active) the earliest.
    int64_t any_active = 0, scheduled = 0, next_creation = INT64_MAX;
    void Add(const Counters& o);
  };
  struct Pe {
    int32_t queue_head = -1, queue_tail = -1;  // source queue (MessagePool links)
    int32_t current = -1;                      // message being pushed
    int32_t seq = 0;                           // next flit of `current`
    int32_t vc = 0;                            // injection VC of `current`
    int32_t rr = 0;                            // rotates the injection-VC choice
    int32_t length = 0;                        // flits of `current`
    int32_t held = 0;                          // messages queued or being pushed
    uint32_t created = 0;                      // messages created here (Message::seq)
    bool waiting = false;  // a traffic creation waits for room (traffic.source_queue)
  };
  // One partition of this process: its nodes, its share of the traffic and counters.
  // Touched only by the thread evaluating it (and by the serial parts of a cycle).
  struct alignas(64) Part {
    int lane = 0;  // Fabric and MessagePool lane
    std::vector<NodeRun> runs;
    CreationSchedule schedule;  // next message creation of its sending nodes
    std::vector<int32_t> due;   // its nodes creating a message in the current cycle
    // [0, num_active): this cycle's active nodes, ascending. Its own mapping, like the
    // flags below: no cache line of it is shared with another partition's thread.
    LazyArray<int32_t> active;
    int32_t num_active = 0;
    // Per node, by global number (only this partition's nodes are touched; each
    // partition has its own array, as one array would share the cache lines at every
    // partition's edge between the threads, written by both every cycle): 1 while its
    // router holds flits or its PE has work (padded to a multiple of 8: CollectActive()
    // reads eight at a time), and 1 while its PE has a message to push (current or
    // queued), a dense copy of that test for the per-cycle loop over active nodes.
    LazyArray<uint8_t> active_flags;
    LazyArray<uint8_t> pe_busy;
    std::vector<Delivery> deliveries;  // this cycle's, in node order
    std::vector<NodeTag> tags;         // undeliverable this cycle, in node order
    Counters c;
  };
  // What a rank tells the others every cycle (rank_exchange.h).
  struct RankSummary {
    Counters counters;
    std::vector<Delivery> deliveries;
    std::vector<NodeTag> tags;
    std::vector<EventTag> serial_tags;
  };
  // A message the reconfiguration discards (its live copy's rank decides; every rank
  // learns of it).
  struct DiscardInfo {
    uint64_t uid;
    int32_t src, dst, length;
    int64_t created;
  };

  static double GraphStateBytes(const SimConfig& config);
  void CreateTrafficMessages(Part& part);
  void ApplyFaultState();
  void ApplyDueEvents();
  void DropQueue(int32_t node);
  void AddReconfigSite(const FaultEvent& event);
  void ReplanReconfiguration();
  void AdvanceReconfiguration();
  bool ExecuteReconfigAction(const ReconfigAction& action);
  void EndReconfiguration();
  void Discard(bool all);
  void WithTopology(const FaultState& state) { state.ApplyTo(topology_.get()); }
  void EnqueueMessage(Part& part, int32_t id);
  int32_t QueueMessage(Part& part, int src, int dst, int flits, std::span<const int> via,
                       int64_t tag, int64_t created);
  // Whether the reconfiguration pauses `node`'s PE: from its first reconfiguration message
  // to the restart (a message whose head has not entered the router waits).
  bool Paused(int32_t node) const {
    return (reconfiguring_ && plan_.recv[node] >= 0 && now_ >= plan_.recv[node] &&
            now_ < plan_.resume[node]) ||
           now_ < paused_until_[node];
  }
  // The partition of this process holding `node`, or null (another rank's).
  Part* PartOf(int32_t node) {
    const int lane = fabric_->LaneOf(fabric_->PartOf(node));
    return lane < 0 ? nullptr : &parts_[static_cast<size_t>(lane)];
  }
  // Part::active_flags / pe_busy of `node` (a node of this process) = 1 / `busy`.
  void Activate(int32_t node) { PartOf(node)->active_flags[node] = 1; }
  void SetPeBusy(int32_t node, bool busy) { PartOf(node)->pe_busy[node] = busy ? 1 : 0; }
  void ActivateNodesWithFlits();
  void CollectActive(Part& part);
  void CreateTrafficMessage(Part& part, int32_t node);
  bool StartMessage(Part& part, int32_t node, Pe& pe);
  void PeStep(Part& part, int32_t node, Pe& pe);
  // The gates of PeStep() (network_nic.cc): a gated message's available flits, the PeGate.
  bool MayPush(int32_t node, const Pe& pe);
  void EnqueueFront(Part& part, int32_t id);
  // A message's end at its destination PE (or as undeliverable); `part` ejected it.
  void Eject(Part& part, const EjectedFlit& e);
  // The features a partitioned run cannot simulate yet: an error naming the key
  // (run.threads, or the MPI ranks) when the config uses one of them.
  Status CheckPartitionable(int threads, int ranks) const;
  // One cycle of one partition, before and after the exchange (network_parallel.cc).
  void EvaluatePart(Part& part);
  void CollectDeliveries(Part& part);
  void CommitPart(Part& part);
  void RunParts();
  // Sums the partitions' counters into totals_ and merges their deliveries (and, under
  // MPI, the other ranks').
  void MergeParts();
  void MergeByNode(std::vector<Delivery>* deliveries, std::vector<NodeTag>* tags);
  // This rank's counters; the earliest creation from cycle `next_cycle` on.
  Counters LocalCounters(int64_t next_cycle) const;
  Status SetUpPartitions();
  // The blocked-channel lines of the deadlock report, of every rank.
  std::vector<std::string> BlockedChannels(size_t limit) const;
  // MPI (rank_exchange.cc): sends this cycle's boundary entries and this rank's
  // deliveries and counters to the other ranks and takes theirs; merges them.
  void ExchangeWithRanks();
  void MergeRanks();
  void ReadRankMessage(const std::vector<uint8_t>& bytes, int from);
  Status ExchangeInitial();
  int64_t SumOverRanks(int64_t value) const;
  std::vector<DiscardInfo> AllRanksDiscards(std::vector<DiscardInfo> mine) const;
  void ExchangePurgedCredits(const std::vector<Fabric::PurgedCredits>& remote);
  void SendToRanks(const std::vector<std::vector<uint8_t>>& out,
                   std::vector<std::vector<uint8_t>>* in) const;
  // A rank-local failure in the middle of a collective step: ends the whole job.
  [[noreturn]] void FailRanks(const std::string& what) const;

  SimConfig config_;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<RoutingFunction> routing_;
  std::unique_ptr<SelectionFunction> selection_;
  std::unique_ptr<TrafficPattern> pattern_;
  std::unique_ptr<InjectionProcess> injection_;
  MessageSource* source_ = nullptr;  // not owned (SetMessageSource)
  std::unique_ptr<MessagePool> messages_;
  std::unique_ptr<Fabric> fabric_;
  // Per node (global numbers; only this process's nodes are touched: LazyArray).
  LazyArray<Pe> pe_;
  LazyArray<Rng> rng_;  // one stream per node
  // (Active flags and PE-busy flags: per partition, in Part.)
  // Per node: paused until this cycle by an episode that ended before its restart reached
  // the node (a new episode began between its root's restart and the last resume).
  LazyArray<int64_t> paused_until_;

  // Partitions: the plan, this process's partitions, the threads that run them.
  PartitionPlan plan_parts_;
  int partitions_ = 1;
  std::string partition_note_;
  std::vector<Part> parts_;
  std::unique_ptr<WorkerPool> workers_;
  RankGroup* ranks_ = nullptr;  // null: this process alone (or every rank runs it all)
  std::unique_ptr<RankState> rank_state_;
  std::vector<RankSummary> summaries_;  // every rank's, this cycle
  std::vector<size_t> merge_pos_;       // MergeByNode()'s read positions

  std::vector<Ejection> watched_;  // every flit handed to a PE (WatchEjections)
  bool watch_ = false;
  bool gates_ = false;  // some message is gated or a PeGate is set
  PeGate* pe_gate_ = nullptr;
  std::unordered_map<int32_t, int32_t> available_;  // gated message -> flits injectable
  std::vector<Delivery> deliveries_;
  std::vector<int64_t> undeliverable_tags_;
  // Undeliverable tags of this cycle's serial part (dropped queues), with the index of the
  // fault event that dropped them (kept in that order across ranks).
  std::vector<EventTag> serial_tags_;

  int64_t now_ = 0;
  int64_t next_rebase_ = 0;            // next Fabric::RebaseArrivals()
  int message_flits_ = 1;              // a mix of sizes: the largest
  std::unique_ptr<SizeMix> size_mix_;  // traffic.size_mix_flits; null without a mix
  double offered_ = 0;
  int sending_nodes_ = 0;
  Counters totals_;  // the whole network's, after the last cycle
  // Counters of the serial parts of a cycle (discards, dropped queues, messages created
  // by CreateMessage()) not yet in a partition's: added to this rank's at the next merge.
  Counters serial_;
  // Per node: flits and heads injected (written by the partition holding the node).
  std::vector<int64_t> sent_flits_, sent_packets_;
  // router.model = booksim: the 1-cycle injection and ejection channels added at delivery.
  int64_t endpoint_cycles_ = 0;
  bool traffic_stopped_ = false;
  std::unique_ptr<FaultState> faults_;
  std::vector<FaultEvent> events_;  // timed faults, in cycle order
  size_t next_event_ = 0;
  // Reconfiguration state: faults_ is what the hardware sees (failures at once), target_
  // also has the repairs (used from the end of the reconfiguration).
  std::unique_ptr<FaultState> target_;
  std::vector<int> root_priority_;
  // The running episode: target_ before its first event, its events, its plan, the next
  // action to execute, the routing's table set of each wave (-1: not prepared yet).
  std::unique_ptr<FaultState> episode_base_;
  std::vector<ReconfigSite> sites_;
  ReconfigPlan plan_;
  size_t next_action_ = 0;
  std::vector<int> wave_sets_;
  bool reconfiguring_ = false, finished_ = false;
  int64_t reconfigurations_ = 0, reconfiguration_cycles_ = 0;
  int64_t reconfiguration_regions_ = 0, cancelled_root_candidates_ = 0;
};

// Validates the parts of `config` the engine itself needs (router.*, traffic sizes,
// measure.*); errors name the key.
Status ValidateConfig(const SimConfig& config);
// The measure.* part of it.
Status ValidateMeasure(const MeasureConfig& measure);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_NETWORK_H_
