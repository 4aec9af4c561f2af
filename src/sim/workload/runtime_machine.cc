#include "sim/workload/runtime_machine.h"

#include <algorithm>

#include "sim/experiment/memory_budget.h"
#include "sim/experiment/run.h"
#include "sim/nic/run_gateway.h"
#include "sim/workload/run_workload.h"

namespace ukai::sim {

namespace {

WorkloadOptions OptionsFor(const SimConfig& config, bool gateway) {
  WorkloadOptions o = WorkloadOptionsFor(config, config.sim_module.packet_bytes);
  if (gateway) o.tag_base = RuntimeMachine::kWorkloadTagBase;
  return o;
}

// The gateway of `config` with its captures (nic.ingress_pcap, nic.egress_pcap), without
// the synthetic traffic (the program's frames are the compute nodes' traffic; the front door
// refuses nic.internal_traffic in a machine, whose default is on for `ukai sim run`).
Result<std::unique_ptr<Gateway>> MakeGateway(const SimConfig& config) {
  SimConfig c = config;
  c.nic.internal_traffic = false;
  std::unique_ptr<FrameSource> source;
  std::unique_ptr<FrameSink> sink;
  UKAI_RETURN_IF_ERROR(OpenGatewayCaptures(c, &source, &sink));
  return Gateway::Create(c, std::move(source), std::move(sink));
}

}  // namespace

RuntimeMachine::RuntimeMachine(const SimConfig& config, std::unique_ptr<Network> net,
                               std::unique_ptr<Gateway> gateway, double clock_mhz)
    : config_(config),
      own_net_(std::move(net)),
      gateway_(std::move(gateway)),
      net_(gateway_ != nullptr ? &gateway_->network() : own_net_.get()),
      workload_(std::make_unique<Workload>(OptionsFor(config, gateway_ != nullptr))),
      clock_mhz_(clock_mhz) {
  workload_->AddSource(this);
  net_->SetMessageSource(workload_.get());
}

RuntimeMachine::~RuntimeMachine() { net_->SetMessageSource(nullptr); }

Result<std::unique_ptr<RuntimeMachine>> RuntimeMachine::Create(const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(CheckMemory(config));
  const double clock = ClockMhz(config);
  if (!(clock > 0)) {
    return Status::InvalidArgument("router.clock_mhz: the sim module needs a clock rate")
        .WithKey("router.clock_mhz");
  }
  std::unique_ptr<Network> net;
  std::unique_ptr<Gateway> gateway;
  if (config.nic.active()) {
    Result<std::unique_ptr<Gateway>> g = MakeGateway(config);
    if (!g.ok()) return g.status();
    gateway = std::move(*g);
  } else {
    Result<std::unique_ptr<Network>> made = Network::Create(config, {}, /*with_traffic=*/false);
    if (!made.ok()) return made.status();
    net = std::move(*made);
  }
  std::unique_ptr<RuntimeMachine> m(
      new RuntimeMachine(config, std::move(net), std::move(gateway), clock));
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

Status RuntimeMachine::Skip(int64_t to) {
  if (to <= net_->now() || workload_->packets_in_flight() > 0) return Status::Ok();
  // The gateway's frames and messages move on while the program's network is idle; none
  // of the layer's messages is pending (the caller skips only then), so no arrival is due.
  while (gateway_ != nullptr && net_->now() < to && !gateway_->Done()) {
    UKAI_RETURN_IF_ERROR(StepOnce());
  }
  if (net_->now() < to) net_->SkipIdle(to);
  return Status::Ok();
}

Status RuntimeMachine::StepOnce() {
  if (gateway_ != nullptr) {
    UKAI_RETURN_IF_ERROR(gateway_->Step());
  } else {
    net_->Step();
  }
  UKAI_RETURN_IF_ERROR(workload_->status());
  const int64_t watchdog = config_.measure.watchdog_cycles;
  if (net_->Stalled(watchdog)) return net_->DeadlockStatus(watchdog);
  return Status::Ok();
}

Status RuntimeMachine::Step(std::vector<Arrival>* out) {
  out_ = out;
  Status st = StepOnce();
  out_ = nullptr;
  return st;
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
  if (gateway_ != nullptr) FillGatewayFigures(*gateway_, net_->now(), &r.gateway);
  return r;
}

}  // namespace ukai::sim
