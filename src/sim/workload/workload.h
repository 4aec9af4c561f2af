// The workload layer: one way for real workloads to feed the flit-level network. A
// WorkloadSource (the netrace reader, the OTF2 replay, the runtime's sim module) adds
// messages -- source node, destination node, bytes, the earliest cycle, the messages it
// waits for and a compute delay -- and hears when each one is delivered; Workload holds the
// messages until they are ready, cuts each into packets the engine can carry and creates
// them in the Network (it is the Network's MessageSource, engine/message_source.h).
//
// When a message is created: at the first cycle c >= earliest such that every message it
// waits for (`after`) has been delivered and c >= (the last such delivery's cycle) + delay.
// Messages ready in the same cycle are created in the order they were added. A message is
// delivered when the tail of its last packet reaches its destination's PE (the Delivery
// cycle, network.h); WorkloadSource::Delivered() then runs, within the same Network::Step(),
// and may add messages at once: a message added with earliest <= the current cycle is
// created in the next cycle the network steps.
//
// How a source feeds messages (the whole contract; the runtime's sim module uses it too):
//   id = workload->Add(this, WorkMessage{src, dst, bytes, earliest, delay, klass, user},
//                      {ids it waits for});
// Add() may be called at any time: from Advance(), from Delivered()/Lost(), or before the
// run starts. `after` may name only messages that are still pending (added, not yet
// delivered or lost): a dependency on a message already delivered is ignored, because the
// source heard of that delivery (Delivered() gave its cycle) and folds it into `earliest`
// itself; this keeps the layer's memory bounded by the live messages. AddDependency() makes
// a message that has not been created yet wait for one more pending message (a trace that
// names a dependency after the dependent packet).
// How deliveries come back: WorkloadSource::Delivered(id, message, cycle, workload) for each
// of its messages, exactly once; WorkloadSource::Lost() instead when a packet of it became
// undeliverable (a faulty end node, a route lost to a fault): it will never be delivered,
// and messages waiting for it are never created (Blocked() counts them).
//
// Packets: a message of B bytes is ceil(B / router.flit_bytes) flits (at least 1), cut into
// packets of at most packet_flits flits (workload.packet_bytes, and the engine's limits:
// 32767 flits, a whole packet in one VC buffer with virtual cut-through), created together
// in the source node's PE queue. Each packet is one engine message tagged with the
// message's slot; per-packet figures (latency, hops) come from the engine's Delivery.
//
// Ownership: sources are not owned (AddSource); they must outlive the Workload's use. The
// Workload must outlive the Network's Steps it is set on (Network::SetMessageSource).
// Thread safety: none; the thread that steps the Network.
#ifndef UKAI_SIM_WORKLOAD_WORKLOAD_H_
#define UKAI_SIM_WORKLOAD_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

#include "core/stats.h"
#include "core/status.h"
#include "sim/engine/message_source.h"
#include "sim/engine/network.h"

namespace ukai::sim {

// A message's handle: (generation << 32) | slot; 0 is never a valid id.
using WorkMessageId = uint64_t;

struct WorkMessage {
  int32_t src = 0;       // network node
  int32_t dst = 0;       // network node (src == dst goes through the node's own router)
  int64_t bytes = 0;     // payload; 0 travels as one flit
  int64_t earliest = 0;  // cycle: never created before
  int64_t delay = 0;     // cycles from the last `after` delivery to the creation (compute)
  int32_t klass = 0;     // the source's class of the message (figures per class), >= 0
  uint64_t user = 0;     // the source's own word, handed back in Delivered() / Lost()
};

class Workload;

// A producer of messages (netrace, OTF2, the runtime's sim module).
class WorkloadSource {
 public:
  virtual ~WorkloadSource() = default;
  // Called at the start of every cycle the network steps (now = that cycle), before the
  // layer creates the messages due: add what is known by `now` (read ahead as needed). A
  // non-OK status (a corrupt trace) stops the run with that error.
  virtual Status Advance(int64_t now, Workload* workload) = 0;
  // The next cycle at which Advance() has something to do by itself (a read-ahead window
  // to refill, its first messages: 0 before its first Advance); MessageSource::kNever when
  // only deliveries can make it progress. The run ends as stuck when no source expects to
  // add anything, nothing is ready and no packet is in flight.
  virtual int64_t NextCycle() const { return MessageSource::kNever; }
  // `id` (added by this source) was delivered at `cycle`.
  virtual void Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle,
                         Workload* workload) = 0;
  // `id` became undeliverable at `cycle` (it will never be delivered).
  virtual void Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload* workload) = 0;
  // True when the source will add no more messages.
  virtual bool Finished() const = 0;
};

struct WorkloadOptions {
  int flit_bytes = 4;            // router.flit_bytes
  int packet_flits = 32767;      // most flits per packet (packet_bytes and engine limits)
  bool keep_packet_log = false;  // tests: record every packet's creation and delivery
  // The layer's packets carry tags tag_base + slot; a Delivery or lost tag outside
  // [tag_base, tag_base + slots) is another producer's (the gateway's, whose tags count
  // up from 0, when RuntimeMachine runs the layer beside it) and is ignored.
  int64_t tag_base = 0;
};

// Figures of the messages of one class (WorkMessage::klass).
struct WorkClassFigures {
  int64_t messages = 0;  // delivered
  int64_t bytes = 0;     // their payload
  IntHistogram latency;  // creation to delivery of the last packet, cycles
};

// The layer's counters and samples (all runs long).
struct WorkloadStats {
  int64_t messages_added = 0, messages_created = 0, messages_delivered = 0, messages_lost = 0;
  int64_t packets_created = 0, packets_delivered = 0, packets_lost = 0;
  int64_t bytes_delivered = 0;  // payload of the delivered messages
  int64_t flits_delivered = 0;
  int64_t last_delivery = 0;    // cycle of the latest message delivery
  int64_t max_pending = 0;      // most messages pending at once (the layer's memory)
  IntHistogram packet_latency;  // engine creation to tail delivery, cycles
  Summary packet_network_latency;
  Summary packet_hops;
  int64_t packets_recovered = 0, packets_table = 0, misrouted_hops = 0;  // routing/route_state.h
  IntHistogram message_latency;  // creation to the last packet's delivery, cycles
  std::map<int32_t, WorkClassFigures> classes;
};

// One packet's life (keep_packet_log).
struct PacketRecord {
  WorkMessageId message;
  int32_t src, dst, flits;
  int64_t created, delivered;  // delivered: -1 while in flight or when lost
};

class Workload final : public MessageSource {
 public:
  explicit Workload(const WorkloadOptions& options);

  void AddSource(WorkloadSource* source) { sources_.push_back(source); }

  // Adds a message of `owner` (which hears of its delivery; may be nullptr). See the file
  // comment for `after`.
  WorkMessageId Add(WorkloadSource* owner, const WorkMessage& m,
                    std::span<const WorkMessageId> after = {});
  // Makes `waiter` (added, not yet created) wait for `on` (pending) too. False, and no
  // change, when `waiter` was already created or `on` is no longer pending.
  bool AddDependency(WorkMessageId waiter, WorkMessageId on);
  // Whether `id` is pending (added, neither delivered nor lost).
  bool Pending(WorkMessageId id) const;

  // MessageSource (called by the Network).
  void CreateMessages(int64_t now, Network* net) override;
  void Delivered(std::span<const Delivery> deliveries, std::span<const int64_t> lost,
                 int64_t now) override;
  int64_t NextCycle(int64_t now) const override;

  // The first error a source's Advance() returned (checked by the run after each Step).
  const Status& status() const { return status_; }
  // Every source finished and no message is pending.
  bool Done() const;
  // Not done, yet nothing can happen: no packet in the network, no message ready or due,
  // and no source expects to add one by itself (messages wait for lost ones).
  bool Stuck(int64_t now) const;
  // Messages waiting for dependencies (never created while they wait).
  int64_t Blocked() const { return waiting_; }
  // Packets created and not yet delivered or lost.
  int64_t packets_in_flight() const { return packets_in_flight_; }
  int64_t pending() const { return live_; }
  const WorkloadStats& stats() const { return stats_; }
  const std::vector<PacketRecord>& packet_log() const { return packet_log_; }

 private:
  struct Slot {
    WorkMessage msg;
    WorkloadSource* owner = nullptr;
    uint32_t generation = 0;
    int32_t pending = 0;       // `after` messages not yet delivered
    int32_t packets_left = 0;  // packets created and not yet delivered or lost
    int64_t ready = 0;         // max(earliest, delivery of an `after` message + delay)
    int64_t created = -1;      // cycle its packets were created
    int64_t seq = 0;           // order of Add(): ties of `ready` go by it
    bool live = false;
    bool queued = false;  // an entry in ready_ may name it
    bool lost = false;
    int32_t next_free = -1;
    int64_t log_first = -1;                 // keep_packet_log: its first packet's record
    int32_t log_filled = 0;                 // ... and how many of them were delivered
    std::vector<WorkMessageId> successors;  // pending messages waiting for this one
  };
  using Entry = std::tuple<int64_t, int64_t, uint32_t>;  // (ready, seq, slot)

  Slot* Find(WorkMessageId id);
  const Slot* Find(WorkMessageId id) const;
  static WorkMessageId IdOf(uint32_t slot, uint32_t generation) {
    return (uint64_t{generation} << 32) | slot;
  }
  void Enqueue(uint32_t slot);
  void Create(uint32_t slot, int64_t now, Network* net);
  void PacketDone(int64_t tag, const Delivery* d, int64_t cycle);
  void Complete(uint32_t slot, int64_t cycle);

  WorkloadOptions options_;
  std::vector<WorkloadSource*> sources_;
  std::vector<Slot> slots_;
  int32_t free_ = -1;
  int64_t next_seq_ = 0;
  int64_t live_ = 0, waiting_ = 0, packets_in_flight_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready_;
  Status status_;
  WorkloadStats stats_;
  std::vector<PacketRecord> packet_log_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_WORKLOAD_H_
