// Reading a `network.topology = "fullmesh"` config of `ukai sim run`: the fullmesh.* and
// workload.* keys (docs/config.md, "Full-mesh keys"), the communicators and the workload.
//
// The workload is either a list of timestamped operations
//   workload.ops = ["at=0 op=p2p root=0 dest=1 bytes=20000",
//                   "at=0.5 op=scatter root=1 comm=A bytes=4096 tag=7"]
// (fields: at (us, default 0), op, root, dest (p2p), bytes, comm (default WORLD), tag), run
// together on one machine, or a sweep of one operation over sizes
//   workload.operation = "allreduce"  workload.bytes = [1024, 65536]  workload.root = 0
// where each size runs alone. Communicators: fullmesh.groups = ["A=0-3", "B=4,5,6,7"].
//
// Errors name the key (and the item of a list) and where the value came from.
// Thread safety: free functions without shared state.
#ifndef UKAI_SIM_FULLMESH_FULLMESH_CONFIG_H_
#define UKAI_SIM_FULLMESH_FULLMESH_CONFIG_H_

#include <string>
#include <vector>

#include "core/config/schema.h"
#include "core/status.h"
#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

struct FullMeshRun {
  FullMeshConfig config;
  std::vector<Operation> ops;  // a list workload: run together
  bool sweep = false;          // a sweep: each of ops runs alone
};

// Every key of the full-mesh model: network.topology (= "fullmesh"), seed, the fullmesh.*
// and workload.* keys.
config::Schema FullMeshSchema();

// Turns values checked against FullMeshSchema() into a run. Errors: a malformed operation or
// group, both or neither workload form, and every ValidateFullMesh error.
Result<FullMeshRun> MakeFullMeshRun(const config::ConfigValues& values);

// Parses one item of workload.ops against the config's communicators.
Result<Operation> ParseOperation(const std::string& text, const FullMeshConfig& config);

// Config names of the operations ("p2p", ..., "broadcast" = multicast to the communicator).
Result<OpType> ParseOpType(const std::string& name);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_FULLMESH_CONFIG_H_
