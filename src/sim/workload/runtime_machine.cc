#include "sim/workload/runtime_machine.h"

#include <algorithm>

#include "sim/experiment/memory_budget.h"
#include "sim/experiment/run.h"
#include "sim/workload/run_workload.h"

namespace ukai::sim {

RuntimeMachine::RuntimeMachine(const SimConfig& config, std::unique_ptr<Network> net,
                               double clock_mhz)
    : config_(config),
      net_(std::move(net)),
      workload_(
          std::make_unique<Workload>(WorkloadOptionsFor(config, config.sim_module.packet_bytes))),
      clock_mhz_(clock_mhz) {
  workload_->AddSource(this);
  net_->SetMessageSource(workload_.get());
}

RuntimeMachine::~RuntimeMachine() { net_->SetMessageSource(nullptr); }

Result<std::unique_ptr<RuntimeMachine>> RuntimeMachine::Create(const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(CheckMemory(config));
  Result<std::unique_ptr<Network>> net = Network::Create(config, {}, /*with_traffic=*/false);
  if (!net.ok()) return net.status();
  const double clock = ClockMhz(config);
  if (!(clock > 0)) {
    return Status::InvalidArgument("router.clock_mhz: the sim module needs a clock rate")
        .WithKey("router.clock_mhz");
  }
  std::unique_ptr<RuntimeMachine> m(new RuntimeMachine(config, std::move(*net), clock));
  for (const FaultEventSpec& e : config.faults.events) {
    if (e.kind != FaultEventSpec::Kind::kFailNode) continue;
    Result<int> node = m->net_->topology().ParseNode(e.node);
    if (!node.ok()) return node.status().WithKey("faults.events");
    m->failures_.push_back({*node, e.cycle});
  }
  std::stable_sort(m->failures_.begin(), m->failures_.end(),
                   [](const NodeFailure& a, const NodeFailure& b) { return a.cycle < b.cycle; });
  return m;
}

int RuntimeMachine::nodes() const { return net_->topology().NumNodes(); }

void RuntimeMachine::Add(int src, int dst, int64_t bytes, int64_t earliest, uint64_t user) {
  WorkMessage m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.earliest = earliest;
  m.user = user;
  workload_->Add(this, m);
}

void RuntimeMachine::Skip(int64_t to) {
  if (to <= net_->now() || workload_->packets_in_flight() > 0) return;
  net_->SkipIdle(to);
}

Status RuntimeMachine::Step(std::vector<Arrival>* out) {
  out_ = out;
  net_->Step();
  out_ = nullptr;
  UKAI_RETURN_IF_ERROR(workload_->status());
  const int64_t watchdog = config_.measure.watchdog_cycles;
  if (net_->Stalled(watchdog)) return net_->DeadlockStatus(watchdog);
  return Status::Ok();
}

void RuntimeMachine::Delivered(WorkMessageId, const WorkMessage& m, int64_t cycle, Workload*) {
  if (out_ != nullptr) out_->push_back({m.user, cycle, false});
}

void RuntimeMachine::Lost(WorkMessageId, const WorkMessage& m, int64_t cycle, Workload*) {
  if (out_ != nullptr) out_->push_back({m.user, cycle, true});
}

PointResult RuntimeMachine::Figures() const {
  PointResult r;
  NetworkFigures(*net_, *workload_, clock_mhz_, &r);
  NotePendingFaults(*net_, &r.note);
  return r;
}

}  // namespace ukai::sim
