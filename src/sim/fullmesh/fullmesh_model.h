// The full-mesh row of the machine-model table (experiment/machine_model.h):
// network.topology = "fullmesh", the message-level optical full mesh with 1-hop relays
// (docs/fullmesh.md). Its keys are FullMeshSchema()'s (fullmesh_config.h), its record
// FullMeshFields()'s (fullmesh_run.h); its Experiment runs a FullMeshRun (RunFullMesh).
//
// Thread safety: free functions without shared state; an Experiment is used by one thread.
#ifndef UKAI_SIM_FULLMESH_FULLMESH_MODEL_H_
#define UKAI_SIM_FULLMESH_FULLMESH_MODEL_H_

#include <memory>
#include <vector>

#include "core/config/schema.h"
#include "sim/experiment/machine_model.h"

namespace ukai::sim::fullmesh {

std::vector<TopologyChoice> FullMeshTopologies();
Result<std::unique_ptr<Experiment>> PrepareFullMesh(const config::ConfigValues& values);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_FULLMESH_MODEL_H_
