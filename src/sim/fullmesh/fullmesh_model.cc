#include "sim/fullmesh/fullmesh_model.h"

#include <utility>

#include "sim/fullmesh/fullmesh_config.h"
#include "sim/fullmesh/fullmesh_run.h"
#include "sim/fullmesh/table_dump.h"

namespace ukai::sim::fullmesh {
namespace {

class FullMeshExperiment : public Experiment {
 public:
  explicit FullMeshExperiment(FullMeshRun run) : run_(std::move(run)) {}

  std::vector<output::TableColumn> TableColumns() const override { return FullMeshTableColumns(); }

  Status Run(const RunEnv& env) const override { return RunFullMesh(run_, env.writer); }

  Status WriteControllerTables(const ControllerTablesOptions& options,
                               std::ostream* out) const override {
    return fullmesh::WriteControllerTables(run_, {options.json, options.all_links}, out);
  }

  Result<bool> CheckDeadlockFreedom(std::ostream*) const override {
    return Status::Unsupported(
        "network.topology = \"fullmesh\" is a message-level model without routers or channel "
        "dependencies: there is no deadlock freedom to check");
  }

 private:
  FullMeshRun run_;
};

}  // namespace

std::vector<TopologyChoice> FullMeshTopologies() {
  return {{"fullmesh",
           "optical full mesh of fullmesh.nodes nodes with 1-hop relay links (the message-level "
           "model: docs/fullmesh.md)"}};
}

Result<std::unique_ptr<Experiment>> PrepareFullMesh(const config::ConfigValues& values) {
  Result<FullMeshRun> run = MakeFullMeshRun(values);
  if (!run.ok()) return run.status();
  return std::unique_ptr<Experiment>(std::make_unique<FullMeshExperiment>(std::move(*run)));
}

}  // namespace ukai::sim::fullmesh
