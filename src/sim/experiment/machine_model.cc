#include "sim/experiment/machine_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/flit_fields.h"
#include "sim/experiment/flit_model.h"
#include "sim/fullmesh/fullmesh_config.h"
#include "sim/fullmesh/fullmesh_model.h"
#include "sim/fullmesh/fullmesh_run.h"

namespace ukai::sim {
namespace {

// The machine models, keyed by the network.topology values each runs.
constexpr MachineModel kModels[] = {
    {"flit", "Flit-level network (network.topology = mesh, torus, group, graph, tree)",
     "The cycle-accurate flit-level simulator: input-queued VC routers, routing algorithms, "
     "traffic patterns, faults and reconfiguration, the gateway NIC model (nic.*) and the "
     "SSS-CORE NIC model on graphs and trees (traffic.operation; docs/sss.md). One record per "
     "point of a sweep.",
     &FlitTopologies, &SimConfigSchema, &PrepareFlit, &FlitFields, &DescribeFlitMore},
    {"fullmesh", "Optical full mesh (network.topology = \"fullmesh\")",
     "The message-level model of an optical full mesh with 1-hop relay links "
     "(docs/fullmesh.md). One record per operation of workload.ops, or per size of a "
     "workload.bytes sweep.",
     &fullmesh::FullMeshTopologies, &fullmesh::FullMeshSchema, &fullmesh::PrepareFullMesh,
     &fullmesh::FullMeshFields, nullptr},
};

}  // namespace

std::span<const MachineModel> MachineModels() { return kModels; }

std::string_view DefaultTopology() { return "torus"; }

Result<const MachineModel*> FindMachineModel(std::string_view topology) {
  std::vector<std::string_view> known;
  for (const MachineModel& m : kModels) {
    for (const TopologyChoice& t : m.topologies()) {
      if (t.name == topology) return &m;
      known.push_back(t.name);
    }
  }
  return Status::NotFound(fmt::format("network.topology: unknown topology '{}' (known: {})",
                                      topology, fmt::join(known, ", ")))
      .WithKey("network.topology");
}

Result<bool> Experiment::CheckDeadlockFreedom(std::ostream*) const {
  return Status::Unsupported("this machine model has no deadlock checker");
}

Status Experiment::WriteControllerTables(const ControllerTablesOptions&, std::ostream*) const {
  return Status::Unsupported(
      "this machine model keeps no communication or link management tables (the full-mesh "
      "model does: network.topology = \"fullmesh\")");
}

}  // namespace ukai::sim
