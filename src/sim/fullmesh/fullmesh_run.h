// `ukai sim run` for the full mesh: runs a FullMeshRun and writes one record per operation.
//
// The record's fields are declared once, in fullmesh_run.cc (name, unit, meaning, table
// column): index, operation, nodes, bytes, policy, relays, direct, relay_mode, time_us,
// baseline_us, speedup, relay, t1_us, bandwidth_gbps, decision, tables, planes, fibres, comm,
// root, dest, at_us, start_us, wait_us, tree_us, data_ok (`ukai sim describe` prints them).
//
// A data check that fails is an error (kInternal) after the records before it.
// Thread safety: none beyond the writer's.
#ifndef UKAI_SIM_FULLMESH_FULLMESH_RUN_H_
#define UKAI_SIM_FULLMESH_FULLMESH_RUN_H_

#include <vector>

#include "core/output/fields.h"
#include "core/output/writer.h"
#include "core/status.h"
#include "sim/fullmesh/fullmesh_config.h"
#include "sim/fullmesh/machine.h"

namespace ukai::sim::fullmesh {

// Every field of a record, in record order.
std::vector<output::FieldSpec> FullMeshFields();

output::Record FullMeshRecord(size_t index, const FullMeshConfig& config, const Operation& op,
                              const OpResult& result);

// The text table's columns.
std::vector<output::TableColumn> FullMeshTableColumns();

// Runs the workload (a list together, or each sweep size alone) and writes the records.
Status RunFullMesh(const FullMeshRun& run, output::RecordWriter* writer);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_FULLMESH_RUN_H_
