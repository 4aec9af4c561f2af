#include "sim/fullmesh/fullmesh_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/config/enum_names.h"
#include "sim/fullmesh/machine.h"

namespace ukai::sim::fullmesh {
namespace {

using config::KeySpec;
using config::Scalar;
using config::Shape;
using config::ValueType;
using Items = std::vector<Scalar>;

template <typename E>
using Named = config::EnumName<E>;
using config::Names;
constexpr Named<RelayKind> kRelays[] = {{RelayKind::kMemory, "memory"},
                                        {RelayKind::kSwitch, "switch"},
                                        {RelayKind::kSwitchReduce, "switch-reduce"}};
constexpr Named<RelayMode> kModes[] = {{RelayMode::kPipelined, "pipelined"},
                                       {RelayMode::kStoreAndForward, "store-and-forward"}};
constexpr Named<Policy> kPolicies[] = {
    {Policy::kFixedK, "fixed-k"}, {Policy::kVariableK, "variable-k"}, {Policy::kDirect, "direct"}};
constexpr Named<Decision> kDecisions[] = {{Decision::kFirstPrinciples, "first-principles"},
                                          {Decision::kPrinted, "printed"},
                                          {Decision::kThreshold, "threshold"},
                                          {Decision::kAlways, "always"}};
constexpr Named<TableSite> kSites[] = {{TableSite::kEveryNode, "every-node"},
                                       {TableSite::kMainNode, "main-node"}};
constexpr Named<OpType> kOps[] = {{OpType::kP2p, "p2p"},
                                  {OpType::kMulticast, "multicast"},
                                  {OpType::kMulticast, "broadcast"},
                                  {OpType::kScatter, "scatter"},
                                  {OpType::kGather, "gather"},
                                  {OpType::kReduce, "reduce"},
                                  {OpType::kAllreduce, "allreduce"},
                                  {OpType::kAllgather, "allgather"},
                                  {OpType::kAlltoall, "alltoall"}};

int I32(const Scalar& s) { return static_cast<int>(std::get<int64_t>(s)); }
double F64(const Scalar& s) { return std::get<double>(s); }
bool Bool(const Scalar& s) { return std::get<bool>(s); }

// One key of the machine: its spec and how to store it.
struct Binding {
  KeySpec spec;
  void (*set)(const Items& v, FullMeshConfig* c);
};

std::vector<Binding> MachineBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("fullmesh.nodes", VT::kInt)
           .Min(3)
           .Max(4096)
           .Default("8")
           .Doc("N: nodes of the full mesh (one link per ordered pair and plane)"),
       [](const Items& v, FullMeshConfig* c) { c->nodes = I32(v[0]); }},
      {KeySpec::Make("fullmesh.bandwidth_gbps", VT::kFloat)
           .Unit("Gb/s")
           .Min(0, true)
           .Max(1e6)
           .Default("25.0")
           .Doc("B: bandwidth of one link per direction"),
       [](const Items& v, FullMeshConfig* c) { c->bandwidth_gbps = F64(v[0]); }},
      {KeySpec::Make("fullmesh.t0_us", VT::kFloat)
           .Unit("us")
           .Min(0)
           .Max(1e6)
           .Default("2.0")
           .Doc("T0: latency of a direct link"),
       [](const Items& v, FullMeshConfig* c) { c->t0_us = F64(v[0]); }},
      {KeySpec::Make("fullmesh.relay", VT::kEnum)
           .Allowed(Names(kRelays))
           .Default("switch")
           .Doc("where relays turn data around; sets T1, the whole 1-hop latency: memory 4 us "
                "(emb 1, 4), switch 2.1 us (emb 2, 3), switch-reduce 2.4 us (emb 5)"),
       [](const Items& v, FullMeshConfig* c) { c->relay = config::FromName(kRelays, v[0]); }},
      {KeySpec::Make("fullmesh.reduce_relay", VT::kEnum)
           .Allowed({"auto", "memory", "switch-reduce"})
           .Default("auto")
           .Doc("where relays of reduce and allreduce sum: memory 4 us (emb 4), switch-reduce "
                "2.4 us (emb 5); auto = fullmesh.relay when it can sum, else memory (the switch "
                "relay unit of emb 2, 3 and 6 has no adder)"),
       [](const Items& v, FullMeshConfig* c) {
         if (std::get<std::string>(v[0]) == "auto") {
           c->reduce_relay.reset();
         } else {
           c->reduce_relay = config::FromName(kRelays, v[0]);
         }
       }},
      {KeySpec::Make("fullmesh.t1_us", VT::kFloat)
           .Unit("us")
           .Min(0)
           .Max(1e6)
           .Default("0.0")
           .Doc("T1 override (whole 1-hop latency); 0 = the value of fullmesh.relay"),
       [](const Items& v, FullMeshConfig* c) { c->t1_us = F64(v[0]); }},
      {KeySpec::Make("fullmesh.relays_per_node", VT::kInt)
           .Min(1)
           .Max(64)
           .Default("1")
           .Doc("M: communications one node may relay at once (per plane)"),
       [](const Items& v, FullMeshConfig* c) { c->relays_per_node = I32(v[0]); }},
      {KeySpec::Make("fullmesh.planes", VT::kInt)
           .Min(1)
           .Max(2)
           .Default("1")
           .Doc("switch planes (emb 7: 2, one controller and one pair of tables)"),
       [](const Items& v, FullMeshConfig* c) { c->planes = I32(v[0]); }},
      {KeySpec::Make("fullmesh.awg", VT::kBool)
           .Default("false")
           .Doc("check the cyclic-AWG wavelength plan (a wavelength per ordered pair, 2N fibres "
                "per plane)"),
       [](const Items& v, FullMeshConfig* c) { c->awg = Bool(v[0]); }},
      {KeySpec::Make("fullmesh.relay_mode", VT::kEnum)
           .Allowed(Names(kModes))
           .Default("pipelined")
           .Doc("pipelined: a relay forwards chunk by chunk while receiving; "
                "store-and-forward: it holds its whole part first"),
       [](const Items& v, FullMeshConfig* c) { c->relay_mode = config::FromName(kModes, v[0]); }},
      {KeySpec::Make("fullmesh.chunk_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(1 << 30)
           .Default("256")
           .Doc("pipelined: the unit a relay forwards (about one 50 ns packet at 25 Gb/s)"),
       [](const Items& v, FullMeshConfig* c) { c->chunk_bytes = std::get<int64_t>(v[0]); }},
  };
}

std::vector<Binding> ControllerBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("fullmesh.policy", VT::kEnum)
           .Allowed(Names(kPolicies))
           .Default("fixed-k")
           .Doc("fixed-k: every relay, wait while any link is busy (emb 3); variable-k: only "
                "idle relays, K in [k_min, k_max] (emb 1, 6); direct: the plain full mesh"),
       [](const Items& v, FullMeshConfig* c) { c->policy = config::FromName(kPolicies, v[0]); }},
      {KeySpec::Make("fullmesh.k_min", VT::kInt)
           .Min(1)
           .Max(4096)
           .Default("1")
           .Doc("variable-k: fewest relays a 1-hop selection needs"),
       [](const Items& v, FullMeshConfig* c) { c->k_min = I32(v[0]); }},
      {KeySpec::Make("fullmesh.k_max", VT::kInt)
           .Min(0)
           .Max(4096)
           .Default("0")
           .Doc("variable-k: most relays taken; 0 = the operation's maximum"),
       [](const Items& v, FullMeshConfig* c) { c->k_max = I32(v[0]); }},
      {KeySpec::Make("fullmesh.decision", VT::kEnum)
           .Allowed(Names(kDecisions))
           .Default("first-principles")
           .Doc("when relays are used: first-principles (predicted time), printed (the "
                "document's formulas read as size >), threshold, always"),
       [](const Items& v, FullMeshConfig* c) { c->decision = config::FromName(kDecisions, v[0]); }},
      {KeySpec::Make("fullmesh.threshold_bytes", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Default("10000")
           .Doc("decision = threshold: relays above this size (10000 B = 80 kbit, emb 1)"),
       [](const Items& v, FullMeshConfig* c) { c->threshold_bytes = std::get<int64_t>(v[0]); }},
      {KeySpec::Make("fullmesh.tables", VT::kEnum)
           .Allowed(Names(kSites))
           .Default("every-node")
           .Doc("every-node: each node keeps the tables (emb 3); main-node: one node decides "
                "and sends a 2N-entry instruction sheet first (emb 1)"),
       [](const Items& v, FullMeshConfig* c) { c->tables = config::FromName(kSites, v[0]); }},
      {KeySpec::Make("fullmesh.sheet_entry_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(1024)
           .Default("4")
           .Doc("main-node: bytes per entry of the instruction sheet"),
       [](const Items& v, FullMeshConfig* c) { c->sheet_entry_bytes = I32(v[0]); }},
      {KeySpec::Make("fullmesh.group_relay", VT::kBool)
           .Default("false")
           .Doc("relays may be nodes outside the communicator; scatter and gather of a group use "
                "them (Fig. 29)"),
       [](const Items& v, FullMeshConfig* c) { c->group_relay = Bool(v[0]); }},
      {KeySpec::Make("fullmesh.data", VT::kBool)
           .Default("true")
           .Doc("move and check real bytes in every operation (false: timing only)"),
       [](const Items& v, FullMeshConfig* c) { c->data = Bool(v[0]); }},
  };
}

std::vector<Binding> AllBindings() {
  std::vector<Binding> all = MachineBindings();
  for (Binding& b : ControllerBindings()) all.push_back(std::move(b));
  return all;
}

std::vector<KeySpec> WorkloadKeys() {
  using VT = ValueType;
  std::vector<std::string> ops = Names(kOps);
  return {
      KeySpec::Make("fullmesh.groups", VT::kString, Shape::kList)
          .Default("[]")
          .Doc("user communicators besides WORLD, each \"NAME=0-3\" or \"NAME=0,2,5-7\" (>= 2 "
               "nodes)"),
      KeySpec::Make("workload.ops", VT::kString, Shape::kList)
          .Default("[]")
          .Doc("operations run together, each \"at=US op=NAME root=R dest=D bytes=S comm=C "
               "tag=T\" (at, dest, comm, tag optional)"),
      KeySpec::Make("workload.operation", VT::kEnum)
          .Allowed(ops)
          .Default("p2p")
          .Doc("sweep: the operation run alone at each workload.bytes"),
      KeySpec::Make("workload.bytes", VT::kInt, Shape::kList)
          .Unit("bytes")
          .Min(1)
          .Default("[]")
          .Doc("sweep: the data sizes (see Operation: per message, block or vector)"),
      KeySpec::Make("workload.root", VT::kInt).Min(0).Default("0").Doc("sweep: root / sender"),
      KeySpec::Make("workload.dest", VT::kInt).Min(0).Default("1").Doc("sweep: p2p receiver"),
      KeySpec::Make("workload.comm", VT::kString)
          .Default("WORLD")
          .Doc("sweep: communicator name (WORLD or a fullmesh.groups name)"),
  };
}

Status ItemError(std::string_view key, size_t i, const std::string& text, const std::string& what,
                 const config::Origin& origin) {
  return config::KeyError(key, fmt::format("item {} (\"{}\"): {}", i + 1, text, what), origin);
}

// "0-3" / "0,2,5-7" -> ascending node list.
bool ParseNodeList(const std::string& text, std::vector<int>* out) {
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    int a = 0, b = 0;
    const size_t dash = part.find('-');
    const std::string lo = part.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : part.substr(dash + 1);
    auto r1 = std::from_chars(lo.data(), lo.data() + lo.size(), a);
    auto r2 = std::from_chars(hi.data(), hi.data() + hi.size(), b);
    if (lo.empty() || r1.ec != std::errc() || r1.ptr != lo.data() + lo.size() ||
        r2.ec != std::errc() || r2.ptr != hi.data() + hi.size() || b < a || b - a > 4096) {
      return false;
    }
    for (int n = a; n <= b; ++n) out->push_back(n);
  }
  std::sort(out->begin(), out->end());
  return !out->empty();
}

Status ReadGroups(const config::Value& v, FullMeshConfig* c) {
  for (size_t i = 0; i < v.items.size(); ++i) {
    const std::string& text = std::get<std::string>(v.items[i]);
    const size_t eq = text.find('=');
    Communicator comm;
    comm.name = text.substr(0, eq);
    if (eq == std::string::npos || comm.name.empty() ||
        !ParseNodeList(text.substr(eq + 1), &comm.members)) {
      return ItemError("fullmesh.groups", i, text, "expected NAME=nodes, e.g. A=0-3 or B=4,6,8",
                       v.origin);
    }
    for (const Communicator& other : c->comms) {
      if (other.name == comm.name) {
        return ItemError("fullmesh.groups", i, text, "the name is already taken", v.origin);
      }
    }
    c->comms.push_back(std::move(comm));
  }
  return Status::Ok();
}

Result<std::vector<Operation>> ReadWorkload(const config::ConfigValues& values,
                                            const FullMeshConfig& c, bool* sweep) {
  const config::Value* ops = values.Find("workload.ops");
  const config::Value* op = values.Find("workload.operation");
  const config::Value* sizes = values.Find("workload.bytes");
  if ((ops != nullptr) == (op != nullptr || sizes != nullptr)) {
    return config::KeyError(ops ? "workload.ops" : "workload.operation",
                            ops ? "give either a list of operations or a sweep "
                                  "(workload.operation + workload.bytes), not both"
                                : "no workload: set workload.ops, or workload.operation and "
                                  "workload.bytes",
                            ops ? ops->origin : config::Origin{"the config", 0, 0});
  }
  std::vector<Operation> out;
  if (ops != nullptr) {
    *sweep = false;
    for (size_t i = 0; i < ops->items.size(); ++i) {
      const std::string& text = std::get<std::string>(ops->items[i]);
      Result<Operation> parsed = ParseOperation(text, c);
      if (!parsed.ok())
        return ItemError("workload.ops", i, text, parsed.status().message(), ops->origin);
      out.push_back(*parsed);
    }
    return out;
  }
  if (op == nullptr || sizes == nullptr) {
    return config::KeyError(op ? "workload.bytes" : "workload.operation",
                            "a sweep needs both workload.operation and workload.bytes",
                            (op ? op : sizes)->origin);
  }
  *sweep = true;
  Operation base;
  base.type = config::FromName(kOps, op->items[0]);
  base.broadcast_name = std::get<std::string>(op->items[0]) == "broadcast";
  if (const config::Value* v = values.Find("workload.root")) base.root = I32(v->items[0]);
  base.dest = 1;
  if (const config::Value* v = values.Find("workload.dest")) {
    if (base.type != OpType::kP2p) {
      return config::KeyError("workload.dest",
                              fmt::format("only a p2p has a receiver; a {} goes to its "
                                          "communicator (remove workload.dest)",
                                          std::get<std::string>(op->items[0])),
                              v->origin);
    }
    base.dest = I32(v->items[0]);
  }
  if (const config::Value* v = values.Find("workload.comm")) {
    const std::string& name = std::get<std::string>(v->items[0]);
    base.comm = -1;
    for (size_t g = 0; g < c.comms.size(); ++g) {
      if (c.comms[g].name == name) base.comm = static_cast<int>(g);
    }
    if (base.comm < 0) {
      return config::KeyError("workload.comm", fmt::format("unknown communicator '{}'", name),
                              v->origin);
    }
  }
  for (const Scalar& s : sizes->items) {
    Operation o = base;
    o.bytes = std::get<int64_t>(s);
    out.push_back(o);
  }
  return out;
}

}  // namespace

Result<OpType> ParseOpType(const std::string& name) {
  for (const auto& e : kOps) {
    if (name == e.name) return e.value;
  }
  return Status::InvalidArgument(
      fmt::format("unknown operation '{}' (one of {})", name, fmt::join(Names(kOps), ", ")));
}

Result<Operation> ParseOperation(const std::string& text, const FullMeshConfig& c) {
  Operation op;
  bool have_op = false, have_bytes = false;
  std::stringstream ss(text);
  std::string field;
  while (ss >> field) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument(fmt::format("'{}' is not field=value", field));
    }
    const std::string k = field.substr(0, eq), v = field.substr(eq + 1);
    if (k == "op") {
      Result<OpType> t = ParseOpType(v);
      if (!t.ok()) return t.status();
      op.type = *t;
      op.broadcast_name = v == "broadcast";
      have_op = true;
      continue;
    }
    if (k == "comm") {
      op.comm = -1;
      for (size_t g = 0; g < c.comms.size(); ++g) {
        if (c.comms[g].name == v) op.comm = static_cast<int>(g);
      }
      if (op.comm < 0) return Status::InvalidArgument(fmt::format("unknown communicator '{}'", v));
      continue;
    }
    if (k == "at") {
      char* end = nullptr;
      op.at_us = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(op.at_us >= 0)) {
        return Status::InvalidArgument(fmt::format("at = '{}' is not a time >= 0 (us)", v));
      }
      continue;
    }
    if (k != "root" && k != "dest" && k != "bytes" && k != "tag") {
      return Status::InvalidArgument(
          fmt::format("unknown field '{}' (fields: at, op, root, dest, bytes, comm, tag)", k));
    }
    int64_t num = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), num);
    if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || num < 0) {
      return Status::InvalidArgument(fmt::format("{} = '{}' is not an integer >= 0", k, v));
    }
    if (k == "root") {
      op.root = static_cast<int>(std::min<int64_t>(num, 1 << 30));
    } else if (k == "dest") {
      op.dest = static_cast<int>(std::min<int64_t>(num, 1 << 30));
    } else if (k == "bytes") {
      op.bytes = num;
      have_bytes = true;
    } else {
      op.tag = static_cast<uint32_t>(num);
    }
  }
  if (!have_op || !have_bytes) {
    return Status::InvalidArgument(fmt::format("missing field '{}'", have_op ? "bytes" : "op"));
  }
  if (op.type == OpType::kP2p && op.dest < 0) {
    return Status::InvalidArgument("a p2p needs dest=NODE");
  }
  if (op.type != OpType::kP2p && op.dest >= 0) {
    return Status::InvalidArgument(fmt::format(
        "dest: only a p2p has a receiver; a {} goes to its communicator", OpTypeName(op.type)));
  }
  return op;
}

config::Schema FullMeshSchema() {
  std::vector<KeySpec> keys = {
      KeySpec::Make("network.topology", ValueType::kEnum)
          .Allowed({"fullmesh"})
          .Default("fullmesh")
          .Doc("the optical full mesh with 1-hop relays (this model)"),
      KeySpec::Make("seed", ValueType::kInt)
          .Min(0)
          .Default(std::to_string(FullMeshConfig().seed))
          .Doc("seeds the data contents of the operations"),
  };
  for (Binding& b : AllBindings()) keys.push_back(std::move(b.spec));
  for (KeySpec& k : WorkloadKeys()) keys.push_back(std::move(k));
  return config::Schema(std::move(keys));
}

Result<FullMeshRun> MakeFullMeshRun(const config::ConfigValues& values) {
  FullMeshRun run;
  for (const Binding& b : AllBindings()) {
    if (const config::Value* v = values.Find(b.spec.key)) b.set(v->items, &run.config);
  }
  if (const config::Value* s = values.Find("seed")) {
    run.config.seed = static_cast<uint64_t>(std::get<int64_t>(s->items[0]));
  }
  run.config.Normalize();
  if (const config::Value* g = values.Find("fullmesh.groups"))
    UKAI_RETURN_IF_ERROR(ReadGroups(*g, &run.config));
  Result<std::vector<Operation>> ops = ReadWorkload(values, run.config, &run.sweep);
  if (!ops.ok()) return ops.status();
  run.ops = std::move(*ops);
  // A sweep's operations are named by its own keys, not workload.ops.
  const OpNaming naming =
      run.sweep ? OpNaming{"workload.operation", "at workload.bytes item"} : OpNaming{};
  UKAI_RETURN_IF_ERROR(ValidateFullMesh(run.config, run.ops, naming));
  return run;
}

}  // namespace ukai::sim::fullmesh
