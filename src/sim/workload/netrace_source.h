// NetraceSource: replays a netrace trace (workload/netrace_format.h) through the workload
// layer (workload.kind = "netrace"; docs/workloads.md).
//
// Each trace packet becomes one workload message of its type's size (8 or 72 bytes), from
// node_map[source] to node_map[destination], not created before network cycle
// floor((cycle - start of the start region) / workload.cycle_scale). With
// workload.dependencies, a packet also waits until every packet that lists it as a
// dependent has been delivered (the netrace reader's rule).
//
// Streaming: packets are read from the bzip2 stream as the clock approaches their cycle
// (a read-ahead window of kReadAheadCycles network cycles), so memory holds the packets in
// that window, the packets waiting for dependencies and those in flight -- not the trace.
// A dependency on a packet id that never appears is counted (missing_dependencies(), the
// first ids kept for the note) and the rest of the trace runs; a packet that lists an
// already created packet as its dependent is counted in late_dependencies() (the order of
// a valid trace never asks for it).
//
// Thread safety: none; owned by one run.
#ifndef UKAI_SIM_WORKLOAD_NETRACE_SOURCE_H_
#define UKAI_SIM_WORKLOAD_NETRACE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "sim/topology/topology.h"
#include "sim/workload/netrace_format.h"
#include "sim/workload/trace_source.h"
#include "sim/workload/workload.h"
#include "sim/workload/workload_config.h"

namespace ukai::sim {

class NetraceSource final : public TraceSource {
 public:
  static constexpr int64_t kReadAheadCycles = 1024;

  // Opens config.file, checks the header against the network (node count, node_map) and
  // seeks the start region. Errors name the file or the key.
  static Result<std::unique_ptr<NetraceSource>> Open(const WorkloadConfig& config,
                                                     const Topology& topology);
  // The same from an open reader (tests, the fuzz target).
  static Result<std::unique_ptr<NetraceSource>> FromReader(std::unique_ptr<NetraceReader> reader,
                                                           const WorkloadConfig& config,
                                                           const Topology& topology);

  Status Advance(int64_t now, Workload* workload) override;
  int64_t NextCycle() const override;
  void Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle,
                 Workload* workload) override;
  void Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload* workload) override;
  bool Finished() const override { return eof_; }
  // trace_packets, trace_cycles, runtime_cycles, slowdown, latency_by_type, ...
  void Report(const Workload& workload, const TraceRunEnd& end, WorkloadFigures* f,
              std::vector<std::string>* notes) const override;

  const NetraceHeader& header() const { return reader_->header(); }
  int64_t packets_read() const { return packets_read_; }
  // Network cycle of the last packet read (the trace's span from the start region).
  int64_t last_packet_cycle() const { return last_cycle_; }
  int64_t missing_dependencies() const;
  std::vector<uint32_t> missing_examples(size_t n) const;
  int64_t late_dependencies() const { return late_; }
  // Tests: record (trace packet id, message id) of every packet added.
  void KeepAddLog(bool on) { keep_add_log_ = on; }
  const std::vector<std::pair<uint32_t, WorkMessageId>>& add_log() const { return add_log_; }
  // Packets lost (undeliverable), and packets never started because one they wait for was
  // lost.
  int64_t lost() const { return lost_; }
  int64_t blocked() const { return blocked_; }

 private:
  NetraceSource() = default;
  // The packet just read: add it, remember whom it lets start.
  void AddPacket(Workload* workload);
  // Frees the packet's record; `lost`: the packets it lets start never do.
  void Retire(WorkMessageId id, const WorkMessage& m, int64_t cycle, bool lost);
  int64_t NetworkCycle(uint64_t cycle) const;

  // A packet not read yet that packets already read let start.
  struct Waiter {
    std::vector<WorkMessageId> after;  // those still pending when last seen
    int64_t ready = 0;                 // the latest delivery among those delivered
    bool blocked = false;              // one of them was lost: it never starts
  };
  // A packet added and not yet delivered (WorkMessage::user indexes it).
  struct Live {
    uint32_t id = 0;
    std::vector<uint32_t> dependents;  // the packets it lets start
  };

  std::unique_ptr<NetraceReader> reader_;
  WorkloadConfig config_;
  std::vector<int> node_of_;  // trace node -> network node
  NetracePacket next_;        // read, not yet added (when have_next_)
  bool have_next_ = false;
  bool eof_ = false;
  int64_t packets_read_ = 0, last_cycle_ = 0, late_ = 0, lost_ = 0, blocked_ = 0;
  std::unordered_map<uint32_t, Waiter> waiters_;       // by trace packet id
  std::unordered_map<uint32_t, WorkMessageId> added_;  // read, not yet delivered
  std::vector<Live> live_;
  bool keep_add_log_ = false;
  std::vector<std::pair<uint32_t, WorkMessageId>> add_log_;
  std::vector<uint32_t> free_live_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_NETRACE_SOURCE_H_
