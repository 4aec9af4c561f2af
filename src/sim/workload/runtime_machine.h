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
// The gateway NIC (docs/gateway.md, docs/sim-module.md): when the config's external traffic
// is on (nic.active(): nic.frames, nic.egress_rate or nic.ingress_pcap), the machine is the
// gateway patent's whole system -- nic/gateway.h owns the Network, with the NICs on their
// I/O nodes, the management node and its detours, inbound frames from the generator or
// nic.ingress_pcap, egress to nic.egress_pcap -- and the runtime's frames are the compute
// nodes' traffic instead of the synthetic traffic (nic.internal_traffic is refused by the
// front door). Step() steps the Gateway (which steps the Network, so the workload layer
// hears its deliveries there); the layer's packets carry tags from kWorkloadTagBase, the
// gateway's count up from 0, so neither sees the other's (workload.h, tag_base). Skip()
// steps the gateway cycle by cycle while it has work (frames to come, messages in flight)
// and jumps only over the rest. The gateway runs while the program does: what is in flight
// when the last process leaves stays unsettled (its figures say how many).
//
// Ownership: owns its Network (through the Gateway when there is one) and Workload. Thread
// safety: none; the caller serialises.
#ifndef UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_
#define UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "sim/engine/network.h"
#include "sim/experiment/point_result.h"
#include "sim/experiment/sim_config.h"
#include "sim/nic/gateway.h"
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
  // The first tag of the workload layer's packets when the gateway runs beside it.
  static constexpr int64_t kWorkloadTagBase = int64_t{1} << 62;

  // Builds the network of `config` (flit-level model; errors name the key), and its gateway
  // when config.nic.active() (errors: the nic.* key, a capture that cannot be opened).
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
  // With the gateway, it steps the gateway up to `to` while it has work. Errors: the
  // gateway's (a capture's) and the deadlock watchdog, as Step().
  Status Skip(int64_t to);
  // Steps one cycle; appends that cycle's arrivals. Errors: the deadlock watchdog
  // (measure.watchdog_cycles) with the network's report.
  Status Step(std::vector<Arrival>* out);

  // The network's usual result fields over the module's packets (as a trace replay gives
  // them) and the wall time spent; `workload` figures are left empty; `gateway` filled
  // (present) when the gateway runs.
  PointResult Figures() const;
  const WorkloadStats& stats() const { return workload_->stats(); }
  // The gateway, or null when the config has no external traffic.
  const Gateway* gateway() const { return gateway_.get(); }

  // WorkloadSource.
  Status Advance(int64_t, Workload*) override { return Status::Ok(); }
  void Delivered(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) override;
  void Lost(WorkMessageId id, const WorkMessage& m, int64_t cycle, Workload*) override;
  bool Finished() const override { return false; }

 private:
  RuntimeMachine(const SimConfig& config, std::unique_ptr<Network> net,
                 std::unique_ptr<Gateway> gateway, double clock_mhz);
  Status StepOnce();

  SimConfig config_;
  std::unique_ptr<Network> own_net_;  // without the gateway
  std::unique_ptr<Gateway> gateway_;  // with it (it owns the Network)
  Network* net_;
  std::unique_ptr<Workload> workload_;
  double clock_mhz_;
  std::vector<NodeFailure> failures_;
  std::vector<Arrival>* out_ = nullptr;  // during Step()
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_RUNTIME_MACHINE_H_
