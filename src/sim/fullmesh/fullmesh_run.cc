#include "sim/fullmesh/fullmesh_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>
#include <string>

namespace ukai::sim::fullmesh {

namespace {

// What a field reads: the record's number, the machine, the operation and its result.
struct OpContext {
  size_t index;
  const FullMeshConfig* config;
  const Operation* op;
  const OpResult* result;
};

using output::Field;
using F = output::FieldOf<OpContext>;
using P = const OpContext&;

Field Text(std::string_view s) { return std::string(s); }

constexpr F kFields[] = {
    {{"index", "", "0-based number of the operation (list) or size (sweep)"},
     [](P p) -> Field { return static_cast<int64_t>(p.index); }},
    {{"operation", "", "the operation (broadcast = multicast to the communicator)", "operation", 9},
     [](P p) -> Field {
       return p.op->broadcast_name ? std::string("broadcast") : Text(OpTypeName(p.op->type));
     }},
    {{"nodes", "", "fullmesh.nodes (N)", "nodes"},
     [](P p) -> Field { return int64_t{p.config->nodes}; }},
    {{"bytes", "bytes", "the message (p2p, multicast), block per peer or vector per node", "bytes",
      9},
     [](P p) -> Field { return p.op->bytes; }},
    {{"policy", "", "fullmesh.policy", "policy", 10},
     [](P p) -> Field { return Text(PolicyName(p.config->policy)); }},
    {{"relays", "", "K: relay nodes the operation used", "relays"},
     [](P p) -> Field { return int64_t{p.result->relays}; }},
    {{"direct", "", "1 when the direct link carried data, else 0", "direct"},
     [](P p) -> Field { return int64_t{p.result->direct ? 1 : 0}; }},
    {{"relay_mode", "", "fullmesh.relay_mode", "relay_mode", 17},
     [](P p) -> Field { return Text(RelayModeName(p.config->relay_mode)); }},
    {{"time_us", "us", "arrival to last delivery, waiting included", "time_us", 9},
     [](P p) -> Field { return p.result->time_us(); }},
    {{"baseline_us", "us", "the same operation alone on the plain full mesh (direct links only)",
      "baseline_us", 9},
     [](P p) -> Field { return p.result->baseline_us; }},
    {{"speedup", "", "baseline_us / time_us (0 when time_us is 0)", "speedup", 9},
     [](P p) -> Field {
       const double time = p.result->time_us();
       return time > 0 ? p.result->baseline_us / time : 0.0;
     }},
    {{"relay", "",
      "the relay kind of this operation: fullmesh.relay, or for reduce and allreduce "
      "fullmesh.reduce_relay"},
     [](P p) -> Field { return Text(RelayKindName(p.config->RelayFor(p.op->type))); }},
    {{"t1_us", "us",
      "T1, the whole 1-hop latency this operation used (fullmesh.t1_us or its relay kind's)"},
     [](P p) -> Field { return p.config->T1For(p.op->type); }},
    {{"bandwidth_gbps", "Gb/s", "fullmesh.bandwidth_gbps"},
     [](P p) -> Field { return p.config->bandwidth_gbps; }},
    {{"decision", "", "fullmesh.decision"},
     [](P p) -> Field { return Text(DecisionName(p.config->decision)); }},
    {{"tables", "", "fullmesh.tables"},
     [](P p) -> Field { return Text(TableSiteName(p.config->tables)); }},
    {{"planes", "", "fullmesh.planes"}, [](P p) -> Field { return int64_t{p.config->planes}; }},
    {{"fibres", "", "2N per plane when fullmesh.awg checked the cyclic-AWG plan, else 0"},
     [](P p) -> Field {
       return p.config->awg ? int64_t{2} * p.config->nodes * p.config->planes : int64_t{0};
     }},
    {{"comm", "", "the communicator's name"},
     [](P p) -> Field { return p.config->comms[p.op->comm].name; }},
    {{"root", "", "root / sender node"}, [](P p) -> Field { return int64_t{p.op->root}; }},
    {{"dest", "", "p2p receiver node; -1 for other operations"},
     [](P p) -> Field { return int64_t{p.op->type == OpType::kP2p ? p.op->dest : -1}; }},
    {{"at_us", "us", "the operation's arrival time"}, [](P p) -> Field { return p.op->at_us; }},
    {{"start_us", "us", "when the operation started (after waiting for busy links)"},
     [](P p) -> Field { return p.result->start_us; }},
    {{"wait_us", "us", "start_us - arrival"},
     [](P p) -> Field { return p.result->start_us - p.result->arrival_us; }},
    {{"tree_us", "us",
      "the operation alone as a simulated binomial tree on the plain full mesh; 0 for p2p and "
      "all-to-all"},
     [](P p) -> Field { return p.result->tree_us; }},
    {{"data_ok", "",
      "1 = the delivered data equal the directly computed result, -1 = not checked "
      "(fullmesh.data = false); a wrong result is an error"},
     [](P p) -> Field {
       return int64_t{p.result->data_checked ? (p.result->data_ok ? 1 : 0) : -1};
     }},
    {{"relay_nodes", "",
      "the relay nodes the operation used (node numbers from 0, ascending, separated by spaces; "
      "empty when it used none)"},
     [](P p) -> Field { return fmt::format("{}", fmt::join(p.result->relay_nodes, " ")); }},
};

}  // namespace

std::vector<output::FieldSpec> FullMeshFields() {
  return output::SpecsOf(std::span<const F>(kFields));
}

output::Record FullMeshRecord(size_t index, const FullMeshConfig& c, const Operation& op,
                              const OpResult& r) {
  return output::BuildRecord(std::span<const F>(kFields), OpContext{index, &c, &op, &r});
}

std::vector<output::TableColumn> FullMeshTableColumns() {
  const std::vector<output::FieldSpec> fields = FullMeshFields();
  return output::TableColumnsOf(fields);
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
