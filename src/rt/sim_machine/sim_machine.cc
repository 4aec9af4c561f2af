#include "rt/sim_machine/sim_machine.h"

#include "sim/experiment/front_door.h"
#include "sim/workload/runtime_machine.h"

namespace ukai::rt {
namespace {

// SimNetwork over the simulator's RuntimeMachine.
class MachineNetwork final : public SimNetwork {
 public:
  explicit MachineNetwork(std::unique_ptr<sim::RuntimeMachine> m) : m_(std::move(m)) {}
  int nodes() const override { return m_->nodes(); }
  double clock_mhz() const override { return m_->clock_mhz(); }
  int64_t now() const override { return m_->now(); }
  std::vector<NodeFailure> node_failures() const override {
    std::vector<NodeFailure> out;
    for (const sim::NodeFailure& f : m_->node_failures()) out.push_back({f.node, f.cycle});
    return out;
  }
  void Add(int src, int dst, int64_t bytes, int64_t earliest, uint64_t user) override {
    m_->Add(src, dst, bytes, earliest, user);
  }
  bool Busy() const override { return m_->Busy(); }
  Status Skip(int64_t to) override { return m_->Skip(to); }
  Status Step(std::vector<SimArrival>* out) override {
    arrivals_.clear();
    Status st = m_->Step(&arrivals_);
    for (const sim::Arrival& a : arrivals_) out->push_back({a.user, a.cycle, a.lost});
    return st;
  }
  sim::PointResult Figures() const { return m_->Figures(); }

 private:
  std::unique_ptr<sim::RuntimeMachine> m_;
  std::vector<sim::Arrival> arrivals_;
};

Result<std::shared_ptr<SimFabric>> FromPoints(Result<std::vector<sim::SimConfig>> points,
                                              int processes) {
  if (!points.ok()) return points.status();
  if (points->size() != 1) {
    return Status::InvalidArgument("sim: a machine config is one point, but this one sweeps " +
                                   std::to_string(points->size()) +
                                   " points (give each swept key one value)");
  }
  return NewSimFabricFromConfig(points->front(), processes);
}

}  // namespace

Result<std::shared_ptr<SimFabric>> NewSimFabricFromConfig(const sim::SimConfig& config,
                                                          int processes) {
  Result<std::unique_ptr<sim::RuntimeMachine>> m = sim::RuntimeMachine::Create(config);
  if (!m.ok()) return m.status();
  SimFabricOptions o;
  o.cpu_scale = config.sim_module.cpu_scale;
  o.node_map = config.sim_module.node_map;
  o.node_map_where = config.sim_module.node_map_where;
  o.stall_ms = config.sim_module.stall_ms;
  o.processes = processes;
  return SimFabric::Create(std::make_unique<MachineNetwork>(std::move(*m)), std::move(o));
}

Result<std::shared_ptr<SimFabric>> NewSimFabric(const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                int processes) {
  return FromPoints(sim::LoadSimConfigs(path, overrides, sim::ConfigUse::kMachine), processes);
}

Result<std::shared_ptr<SimFabric>> NewSimFabricFromString(std::string_view text,
                                                          const std::string& source_name,
                                                          const std::vector<std::string>& overrides,
                                                          int processes) {
  return FromPoints(
      sim::LoadSimConfigsFromString(text, source_name, overrides, sim::ConfigUse::kMachine),
      processes);
}

sim::PointResult NetworkResult(SimFabric& fabric) {
  return fabric.WithNetwork(
      [](SimNetwork& net) { return static_cast<MachineNetwork&>(net).Figures(); });
}

}  // namespace ukai::rt
