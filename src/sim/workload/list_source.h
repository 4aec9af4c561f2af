// ListSource: a WorkloadSource that replays a list of messages without dependencies, each
// at its `earliest` cycle, in list order within a cycle; and SyntheticMessageList(), the
// messages the synthetic generator (traffic.*) creates in a run of a given length, drawn
// exactly as Network draws them (one RNG stream per node: first creation, then destination
// and next creation per message).
//
// Together they check the workload layer against the synthetic generator at the same
// traffic: replaying SyntheticMessageList() gives the same deliveries, cycle for cycle
// (tests/sim/workload/workload_layer_test.cc), and the benchmark (bench/sim/
// workload_bench_main.cc) times both.
//
// Thread safety: none; owned by one run.
#ifndef UKAI_SIM_WORKLOAD_LIST_SOURCE_H_
#define UKAI_SIM_WORKLOAD_LIST_SOURCE_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/topology/topology.h"
#include "sim/workload/workload.h"

namespace ukai::sim {

class ListSource final : public WorkloadSource {
 public:
  // `messages` sorted by earliest (ties keep their order).
  explicit ListSource(std::vector<WorkMessage> messages) : messages_(std::move(messages)) {}

  Status Advance(int64_t now, Workload* workload) override;
  int64_t NextCycle() const override;
  void Delivered(WorkMessageId, const WorkMessage&, int64_t, Workload*) override { ++delivered_; }
  void Lost(WorkMessageId, const WorkMessage&, int64_t, Workload*) override { ++lost_; }
  bool Finished() const override { return next_ == messages_.size(); }

  int64_t delivered() const { return delivered_; }
  int64_t lost() const { return lost_; }

 private:
  std::vector<WorkMessage> messages_;
  size_t next_ = 0;
  int64_t delivered_ = 0, lost_ = 0;
};

// The messages the synthetic traffic of `config` creates in cycles [0, cycles) on
// `topology` (unbounded source queues: traffic.source_queue = 0; messages of traffic.
// message_bytes), in creation order: by cycle, then by source node.
Result<std::vector<WorkMessage>> SyntheticMessageList(const SimConfig& config,
                                                      const Topology& topology, int64_t cycles);

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_LIST_SOURCE_H_
