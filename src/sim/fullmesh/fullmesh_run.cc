#include "sim/fullmesh/fullmesh_run.h"

#include <fmt/format.h>

namespace ukai::sim::fullmesh {

output::Record FullMeshRecord(size_t index, const FullMeshConfig& c, const Operation& op,
                              const OpResult& r) {
  output::Record rec;
  const double time = r.time_us();
  rec.Add("index", index)
      .Add("operation",
           op.broadcast_name ? std::string("broadcast") : std::string(OpTypeName(op.type)))
      .Add("nodes", c.nodes)
      .Add("bytes", op.bytes)
      .Add("policy", std::string(PolicyName(c.policy)))
      .Add("relays", r.relays)
      .Add("direct", r.direct ? 1 : 0)
      .Add("relay_mode", std::string(RelayModeName(c.relay_mode)))
      .Add("time_us", time)
      .Add("baseline_us", r.baseline_us)
      .Add("speedup", time > 0 ? r.baseline_us / time : 0.0)
      .Add("relay", std::string(RelayKindName(c.relay)))
      .Add("t1_us", c.T1())
      .Add("bandwidth_gbps", c.bandwidth_gbps)
      .Add("decision", std::string(DecisionName(c.decision)))
      .Add("tables", std::string(TableSiteName(c.tables)))
      .Add("planes", c.planes)
      .Add("fibres", c.awg ? int64_t{2} * c.nodes * c.planes : int64_t{0})
      .Add("comm", c.comms[op.comm].name)
      .Add("root", op.root)
      .Add("dest", op.type == OpType::kP2p ? op.dest : -1)
      .Add("at_us", op.at_us)
      .Add("start_us", r.start_us)
      .Add("wait_us", r.start_us - r.arrival_us)
      .Add("tree_us", r.tree_us)
      .Add("data_ok", r.data_checked ? (r.data_ok ? 1 : 0) : -1);
  return rec;
}

std::vector<output::TableColumn> FullMeshTableColumns() {
  return {{"operation", "operation", 9},
          {"nodes", "nodes", 0},
          {"bytes", "bytes", 9},
          {"policy", "policy", 10},
          {"relays", "relays", 0},
          {"direct", "direct", 0},
          {"relay_mode", "relay_mode", 17},
          {"time_us", "time_us", 9},
          {"baseline_us", "baseline_us", 9},
          {"speedup", "speedup", 9}};
}

Status RunFullMesh(const FullMeshRun& run, output::RecordWriter* writer) {
  auto emit = [&](size_t index, const Operation& op, const OpResult& r) -> Status {
    UKAI_RETURN_IF_ERROR(writer->Write(FullMeshRecord(index, run.config, op, r)));
    if (r.data_checked && !r.data_ok) {
      return Status::Internal(
          fmt::format("operation {} ({}): the data delivered differ from "
                      "the result computed directly",
                      index + 1, OpTypeName(op.type)));
    }
    return Status::Ok();
  };
  if (run.sweep) {
    for (size_t i = 0; i < run.ops.size(); ++i) {
      Machine m(run.config, {run.ops[i]});
      UKAI_RETURN_IF_ERROR(emit(i, run.ops[i], m.Run()[0]));
    }
    return Status::Ok();
  }
  Machine m(run.config, run.ops);
  const std::vector<OpResult>& results = m.Run();
  for (size_t i = 0; i < run.ops.size(); ++i) UKAI_RETURN_IF_ERROR(emit(i, run.ops[i], results[i]));
  return Status::Ok();
}

}  // namespace ukai::sim::fullmesh
