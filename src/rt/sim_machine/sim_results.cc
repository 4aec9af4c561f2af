#include "rt/sim_machine/sim_results.h"

#include <algorithm>
#include <span>

#include "rt/sim_machine/sim_machine.h"
#include "sim/experiment/flit_fields.h"
#include "sim/experiment/front_door.h"

namespace ukai::rt {
namespace {

double Us(const SimRunContext& r, int64_t cycles) {
  return static_cast<double>(cycles) / r.clock_mhz;
}

uint64_t Counter(const SimRunContext& r, const char* name) {
  auto it = r.counters.find(name);
  return it == r.counters.end() ? 0 : it->second;
}

int64_t Failed(const SimRunContext& r) {
  return std::count_if(r.processes.begin(), r.processes.end(),
                       [](const SimProcessTimes& p) { return p.failed; });
}

constexpr output::FieldOf<SimRunContext> kFields[] = {
    {{"processes", "", "processes launched on the simulated machine", "procs", 5},
     [](const SimRunContext& r) -> output::Field { return int64_t{r.expected}; }},
    {{"program_time_us", "us",
      "the program's simulated time: the latest finish_time_us (a process's clock when its "
      "runtime left the machine, or stopped)",
      "program_us", 10},
     [](const SimRunContext& r) -> output::Field {
       int64_t last = 0;
       for (const SimProcessTimes& p : r.processes) last = std::max(last, p.finish_cycle);
       return Us(r, last);
     }},
    {{"finish_time_us", "us",
      "each process's simulated clock when its runtime left the machine (Finalize) or its "
      "node failed, in rank order"},
     [](const SimRunContext& r) -> output::Field {
       std::vector<double> out;
       for (const SimProcessTimes& p : r.processes) out.push_back(Us(r, p.finish_cycle));
       return out;
     }},
    {{"processes_failed", "",
      "processes stopped by a node failure (faults.events) or that ended without leaving the "
      "machine",
      "failed", 6},
     [](const SimRunContext& r) -> output::Field { return Failed(r); }},
    {{"processes_missing", "", "processes launched that never joined the machine"},
     [](const SimRunContext& r) -> output::Field {
       return int64_t{r.expected} - static_cast<int64_t>(r.processes.size());
     }},
    {{"frames_sent", "", "runtime frames the processes sent through the simulated network",
      "frames", 7},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "frames_sent"));
     }},
    {{"frames_delivered", "", "frames handed to their receiving runtime"},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "frames_delivered"));
     }},
    {{"frames_lost", "", "frames lost to faults (undeliverable, or to or from a failed node)"},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "frames_lost"));
     }},
    {{"frames_dropped", "",
      "frames delivered to a runtime that had left or failed, or posted to one (not "
      "simulated)"},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "frames_dropped") + Counter(r, "frames_refused"));
     }},
    {{"frame_bytes_sent", "bytes", "wire bytes of the frames sent (header + payload)"},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "bytes_sent"));
     }},
    {{"late_frames", "",
      "frames stamped earlier than the network's clock when sent (0 unless a thread waited "
      "outside the runtime)"},
     [](const SimRunContext& r) -> output::Field {
       return static_cast<int64_t>(Counter(r, "late_frames"));
     }},
};

// The flit model's fields that echo keys a machine does not read (sim::ConfigUse::kMachine:
// the program is the traffic) or judge a synthetic offered load: not in the record.
bool NotAMachineField(std::string_view name) {
  for (std::string_view f : {"point", "pattern", "message_bytes", "injection", "rate", "interval",
                             "measure_mode", "source_queue", "latency_trend", "saturated"}) {
    if (name == f) return true;
  }
  return false;
}

// The name in the launch record of the flit model's field `name`: the gateway's figures
// (docs/gateway.md) whose `ukai sim run` name is one of the sim module's own fields
// (frames_delivered, frames_lost: the runtime's frames) get the prefix "gateway_".
std::string MachineFieldName(std::string_view name) {
  for (const output::FieldOf<SimRunContext>& f : kFields) {
    if (f.spec.name == name) return "gateway_" + std::string(name);
  }
  return std::string(name);
}

}  // namespace

Result<SimMachine> LoadSimMachine(const std::string& path,
                                  const std::vector<std::string>& overrides, int processes) {
  Result<std::vector<sim::SimConfig>> points =
      sim::LoadSimConfigs(path, overrides, sim::ConfigUse::kMachine);
  if (!points.ok()) return points.status();
  if (points->size() != 1) {
    return Status::InvalidArgument("sim: a machine config is one point, but " + path + " sweeps " +
                                   std::to_string(points->size()) +
                                   " points (give each swept key one value)");
  }
  SimMachine m;
  m.config = points->front();
  Result<std::shared_ptr<SimFabric>> f = NewSimFabricFromConfig(m.config, processes);
  if (!f.ok()) return f.status();
  m.fabric = std::move(*f);
  return m;
}

SimRunContext CollectSimRun(const SimMachine& machine, int expected) {
  SimRunContext r;
  r.config = &machine.config;
  r.processes = machine.fabric->Processes();
  r.expected = expected;
  r.clock_mhz = machine.fabric->clock_mhz();
  r.counters = machine.fabric->Counters();
  r.network = NetworkResult(*machine.fabric);
  return r;
}

std::vector<output::FieldSpec> SimRunFields() {
  return output::SpecsOf(std::span<const output::FieldOf<SimRunContext>>(kFields));
}

output::Record SimRunRecord(const SimRunContext& run) {
  output::Record rec =
      output::BuildRecord(std::span<const output::FieldOf<SimRunContext>>(kFields), run);
  const output::Record net = sim::PointRecord(0, *run.config, run.network);
  for (const auto& [name, value] : net.fields()) {
    if (!NotAMachineField(name)) rec.Add(MachineFieldName(name), value);
  }
  return rec;
}

std::vector<output::TableColumn> SimRunTableColumns(const SimRunContext& run) {
  const std::vector<output::FieldSpec> specs = SimRunFields();
  std::vector<output::TableColumn> cols = output::TableColumnsOf(specs);
  for (output::TableColumn& c : sim::FlitTableColumns({*run.config})) {
    if (NotAMachineField(c.field)) continue;
    const std::string name = MachineFieldName(c.field);
    if (name != c.field) c.header = "gw_" + c.header;
    c.field = name;
    cols.push_back(std::move(c));
  }
  return cols;
}

}  // namespace ukai::rt
