// `ukai sim run` for the full mesh: runs a FullMeshRun and writes one record per operation.
//
// Record fields (CSV header / JSON names), in this order: index, operation, nodes, bytes,
// policy, relays (K used), direct (0/1), relay_mode, time_us (arrival to last delivery,
// waiting included), baseline_us (the same operation alone on the plain full mesh),
// speedup (baseline_us / time_us), then relay, t1_us, bandwidth_gbps, decision, tables,
// planes, fibres (2N per plane when fullmesh.awg checked the cyclic-AWG plan, else 0), comm, root,
// dest, at_us, start_us, wait_us, tree_us (binomial tree on the plain full mesh; 0 when not a tree
// collective), data_ok (1 checked and right, -1 not checked).
//
// A data check that fails is an error (kInternal) after the records before it.
// Thread safety: none beyond the writer's.
#ifndef UKAI_SIM_FULLMESH_FULLMESH_RUN_H_
#define UKAI_SIM_FULLMESH_FULLMESH_RUN_H_

#include <vector>

#include "core/output/writer.h"
#include "core/status.h"
#include "sim/fullmesh/fullmesh_config.h"
#include "sim/fullmesh/machine.h"

namespace ukai::sim::fullmesh {

output::Record FullMeshRecord(size_t index, const FullMeshConfig& config, const Operation& op,
                              const OpResult& result);

// The text table's columns.
std::vector<output::TableColumn> FullMeshTableColumns();

// Runs the workload (a list together, or each sweep size alone) and writes the records.
Status RunFullMesh(const FullMeshRun& run, output::RecordWriter* writer);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_FULLMESH_RUN_H_
