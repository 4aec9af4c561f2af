// RuntimeMachine: the simulated machine of the runtime's `sim` communication module
// (docs/sim-module.md). It owns the network of a flit-level config (without synthetic
// traffic) and the workload layer (workload/workload.h), and is the module's one
// WorkloadSource: every runtime frame becomes one message -- source and destination node,
// its wire size in bytes, the earliest cycle it may leave -- and comes back as an Arrival
// (delivered or lost) with its cycle and the caller's word.
//
// The caller (rt/sim_machine/) decides how far the clock may go: Step() advances one cycle
// and is called only while every process that could still send has reached that cycle
// (conservative); Skip() jumps over idle cycles. A message added with earliest < now() is
// created at the next stepped cycle (a process reacting to a delivery of cycle d sends at
// d, the network's now() after that step, at the earliest).
//
// Ownership: owns its Network and Workload. Thread safety: none; the caller serialises.
#ifndef UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_
#define UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "sim/engine/network.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"
#include "sim/workload/workload.h"

namespace ukai::sim {

// A message of the machine that was delivered (or became undeliverable) in cycle `cycle`.
struct Arrival {
  uint64_t user = 0;
  int64_t cycle = 0;
  bool lost = false;
};

// A node that failed (faults.events) in cycle `cycle`.
struct NodeFailure {
  int node = 0;
  int64_t cycle = 0;
};

class RuntimeMachine final : public WorkloadSource {
 public:
  // Builds the network of `config` (flit-level model; errors name the key).
  static Result<std::unique_ptr<RuntimeMachine>> Create(const SimConfig& config);
  ~RuntimeMachine() override;

  int nodes() const;
  double clock_mhz() const { return clock_mhz_; }
  int64_t now() const { return net_->now(); }
  const SimConfig& config() const { return config_; }
  // The node failures of faults.events, by cycle (the module stops the processes there).
  const std::vector<NodeFailure>& node_failures() const { return failures_; }

  // Adds a message of `bytes` from node `src` to node `dst`, created at the first stepped
  // cycle >= earliest; `user` comes back in its Arrival.
  void Add(int src, int dst, int64_t bytes, int64_t earliest, uint64_t user);
  // True while a message is pending (added and neither delivered nor lost).
  bool Busy() const { return workload_->pending() > 0; }
  // When nothing is in flight, moves the clock to `to` (never backwards); else no change.
  void Skip(int64_t to);
  // Steps one cycle; appends that cycle's arrivals. Errors: the deadlock watchdog
  // (measure.watchdog_cycles) with the network's report.
  Status Step(std::vector<Arrival>* out);

  // The network's usual result fields over the module's packets (as a trace replay gives
  // them) and the wall time spent; `workload` figures are left empty.
  PointResult Figures() const;
  const WorkloadStats& stats() const { return workload_->stats(); }

  // WorkloadSource.
  Status Advance(int64_t, Workload*) override { return Status::Ok(); }
  void Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) override;
  void Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) override;
  bool Finished() const override { return false; }

 private:
  RuntimeMachine(const SimConfig& config, std::unique_ptr<Network> net, double clock_mhz);

  SimConfig config_;
  std::unique_ptr<Network> net_;
  std::unique_ptr<Workload> workload_;
  double clock_mhz_;
  std::vector<NodeFailure> failures_;
  std::vector<Arrival>* out_ = nullptr;  // during Step()
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_
