#include "sim/experiment/workload_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/config/enum_names.h"

namespace ukai::sim {
namespace {

using config::EnumName;
using config::FromName;
using config::KeySpec;
using config::Tree;
using config::ValueType;

constexpr EnumName<WorkloadKind> kKinds[] = {{WorkloadKind::kSynthetic, "synthetic"},
                                             {WorkloadKind::kNetrace, "netrace"},
                                             {WorkloadKind::kOtf2, "otf2"}};
constexpr EnumName<CollectiveAlgorithm> kAlgorithms[] = {
    {CollectiveAlgorithm::kAuto, "auto"},
    {CollectiveAlgorithm::kBinomial, "binomial"},
    {CollectiveAlgorithm::kRing, "ring"},
    {CollectiveAlgorithm::kRecursiveDoubling, "recursive-doubling"}};
constexpr EnumName<ComputeMode> kComputeModes[] = {{ComputeMode::kTrace, "trace"},
                                                   {ComputeMode::kNone, "none"}};

constexpr std::string_view kNetraceKeys[] = {"workload.region", "workload.dependencies",
                                             "workload.cycle_scale", "workload.node_map"};
constexpr std::string_view kOtf2Keys[] = {"workload.eager_bytes", "workload.collective_algorithm",
                                          "workload.compute", "workload.rank_map"};
// Keys of the synthetic traffic and its measurement windows, unused by a trace workload.
constexpr std::string_view kSyntheticOnly[] = {
    "measure.mode",          "measure.warmup_messages", "measure.measure_messages",
    "measure.warmup_cycles", "measure.sample_cycles",   "measure.convergence"};

std::string_view WorkloadKindText(WorkloadKind k) { return config::ToName(kKinds, k); }

// A node map: one of `names` (a string) or a list of node numbers.
void ReadNodeMap(const config::ConfigValues& values, std::string_view key,
                 std::initializer_list<std::pair<std::string_view, NodeMapKind>> names,
                 NodeMapKind* kind, std::vector<int>* list, std::vector<std::string>* errors) {
  const config::Value* v = values.Find(key);
  if (v == nullptr) return;
  const Tree& t = v->tree;
  std::string allowed;
  for (const auto& [name, k] : names) allowed += fmt::format("\"{}\", ", name);
  const std::string form = fmt::format("expected {}or a list of distinct node numbers", allowed);
  if (t.kind == Tree::Kind::kScalar) {
    if (const std::string* s = std::get_if<std::string>(&t.scalar)) {
      for (const auto& [name, k] : names) {
        if (*s == name) {
          *kind = k;
          return;
        }
      }
    }
    errors->push_back(config::KeyError(key, form, t.origin).message());
    return;
  }
  if (t.kind != Tree::Kind::kList || t.items.empty()) {
    errors->push_back(config::KeyError(key, form, t.origin).message());
    return;
  }
  std::set<int64_t> seen;
  list->clear();
  for (size_t i = 0; i < t.items.size(); ++i) {
    const Tree& item = t.items[i];
    const int64_t* n =
        item.kind == Tree::Kind::kScalar ? std::get_if<int64_t>(&item.scalar) : nullptr;
    if (n == nullptr || *n < 0 || *n >= (int64_t{1} << 26)) {
      errors->push_back(config::KeyError(key,
                                         fmt::format("item {} is not a node number ({})", i, form),
                                         item.origin)
                            .message());
      return;
    }
    if (!seen.insert(*n).second) {
      errors->push_back(config::KeyError(key,
                                         fmt::format("node {} is listed twice (item {})", *n, i),
                                         item.origin)
                            .message());
      return;
    }
    list->push_back(static_cast<int>(*n));
  }
  *kind = NodeMapKind::kList;
}

// workload.file, resolved against the directory of the config file it came from.
void ReadFile(const config::Value& v, WorkloadConfig* w) {
  w->file = std::get<std::string>(v.items[0]);
  w->file_where = v.origin.Where();
  std::filesystem::path p(w->file);
  if (!w->file.empty() && p.is_relative() && v.origin.line > 0) {
    p = std::filesystem::path(v.origin.source).parent_path() / p;
    w->file = p.lexically_normal().string();
  }
}

// Keys that do not belong beside the chosen workload.
void CheckUnused(const config::ConfigValues& values, const WorkloadConfig& w,
                 std::vector<std::string>* errors) {
  auto refuse = [&](std::string_view key, const config::Value& v, const std::string& why) {
    errors->push_back(config::KeyError(key, why, v.origin).message());
  };
  const std::string kind = fmt::format("workload.kind = \"{}\"", WorkloadKindText(w.kind));
  for (std::string_view key : kNetraceKeys) {
    if (const config::Value* v = values.Find(key); v && w.kind != WorkloadKind::kNetrace) {
      refuse(key, *v, fmt::format("needs workload.kind = \"netrace\" (the config has {})", kind));
    }
  }
  for (std::string_view key : kOtf2Keys) {
    if (const config::Value* v = values.Find(key); v && w.kind != WorkloadKind::kOtf2) {
      refuse(key, *v, fmt::format("needs workload.kind = \"otf2\" (the config has {})", kind));
    }
  }
  for (const char* key : {"workload.file", "workload.packet_bytes", "workload.control_bytes"}) {
    if (const config::Value* v = values.Find(key); v && !w.active()) {
      refuse(key, *v, "needs a trace workload: workload.kind = \"netrace\" or \"otf2\"");
    }
  }
  if (!w.active()) return;
  for (const auto& [key, v] : values.values()) {
    const bool synthetic = key.rfind("traffic.", 0) == 0 || key.rfind("nic.", 0) == 0 ||
                           std::find(std::begin(kSyntheticOnly), std::end(kSyntheticOnly), key) !=
                               std::end(kSyntheticOnly);
    if (synthetic) {
      refuse(key, v,
             fmt::format("is not used with {}: the trace is the traffic (measure.max_cycles "
                         "and measure.watchdog_cycles still apply)",
                         kind));
    }
  }
  if (w.file.empty()) {
    const config::Value* k = values.Find("workload.kind");
    errors->push_back(config::KeyError("workload.file",
                                       fmt::format("is needed with {} (the trace to replay)", kind),
                                       k ? k->origin : config::Origin{})
                          .message());
  }
}

}  // namespace

std::string_view WorkloadKindName(WorkloadKind k) { return WorkloadKindText(k); }
std::string_view CollectiveAlgorithmName(CollectiveAlgorithm a) {
  return config::ToName(kAlgorithms, a);
}
std::string_view ComputeModeName(ComputeMode m) { return config::ToName(kComputeModes, m); }

std::vector<KeySpec> WorkloadKeySpecs() {
  using VT = ValueType;
  const WorkloadConfig d;
  return {
      KeySpec::Make("workload.kind", VT::kEnum)
          .Allowed(config::Names(kKinds))
          .Default("synthetic")
          .Doc("what drives the network: the synthetic traffic.* patterns, a netrace trace or "
               "an OTF2 archive replayed with its dependencies (docs/workloads.md)"),
      KeySpec::Make("workload.file", VT::kString)
          .Default("")
          .Doc("the trace: a netrace .tra.bz2 file, or an OTF2 anchor file (traces.otf2); a "
               "relative path is taken from the config file's directory"),
      KeySpec::Make("workload.packet_bytes", VT::kInt)
          .Unit("bytes")
          .Min(1)
          .Max(double(int64_t{1} << 40))
          .Default(std::to_string(d.packet_bytes))
          .Doc("a trace message is cut into packets of at most this size (and at most 32767 "
               "flits, and one VC buffer with vct)"),
      KeySpec::Make("workload.control_bytes", VT::kInt)
          .Unit("bytes")
          .Min(1)
          .Max(1 << 20)
          .Default(std::to_string(d.control_bytes))
          .Doc("size of a message without payload: an OTF2 rendezvous request, a barrier "
               "token, a 0-byte send"),
      KeySpec::Make("workload.region", VT::kInt)
          .Min(0)
          .Max(1 << 30)
          .Default("0")
          .Doc("netrace: the region the replay starts at (it runs to the end of the trace)"),
      KeySpec::Make("workload.dependencies", VT::kBool)
          .Default("true")
          .Doc("netrace: a packet is injected only when every packet it depends on has been "
               "delivered (and not before its own cycle); false: at its cycle"),
      KeySpec::Make("workload.cycle_scale", VT::kFloat)
          .Min(0, /*open=*/true)
          .Max(1e9)
          .Default("1")
          .Doc("netrace: trace cycles per network cycle (packet cycle c starts at network "
               "cycle floor((c - region start) / cycle_scale))"),
      KeySpec::Make("workload.node_map", VT::kStructured)
          .Default("\"row-major\"")
          .Doc("netrace: trace node -> network node: \"row-major\" (trace node i is network "
               "node i) or a list [n0, n1, ...] of distinct network nodes"),
      KeySpec::Make("workload.eager_bytes", VT::kInt)
          .Unit("bytes")
          .Min(0)
          .Max(double(int64_t{1} << 40))
          .Default(std::to_string(d.eager_bytes))
          .Doc("otf2: a send up to this size leaves at once; a larger one sends a request "
               "(workload.control_bytes) and its data once the matching receive is posted"),
      KeySpec::Make("workload.collective_algorithm", VT::kEnum)
          .Allowed(config::Names(kAlgorithms))
          .Default("auto")
          .Doc("otf2: how collectives become point-to-point messages; auto picks by size as "
               "Open MPI's tuned defaults do (docs/workloads.md)"),
      KeySpec::Make("workload.compute", VT::kEnum)
          .Allowed(config::Names(kComputeModes))
          .Default("trace")
          .Doc("otf2: trace = replay the time between communication calls (timer resolution "
               "and router.clock_mhz); none = communication only"),
      KeySpec::Make("workload.rank_map", VT::kStructured)
          .Default("\"linear\"")
          .Doc("otf2: rank -> network node: \"linear\" (rank i on node i), \"random\" (a "
               "permutation drawn with the seed) or a list [n0, n1, ...] of distinct nodes"),
  };
}

void ReadWorkloadConfig(const config::ConfigValues& values, WorkloadConfig* w,
                        std::vector<std::string>* errors) {
  auto get = [&values](std::string_view key) { return values.Find(key); };
  if (const config::Value* v = get("workload.kind")) w->kind = FromName(kKinds, v->items[0]);
  if (const config::Value* v = get("workload.file")) ReadFile(*v, w);
  if (const config::Value* v = get("workload.packet_bytes")) {
    w->packet_bytes = std::get<int64_t>(v->items[0]);
  }
  if (const config::Value* v = get("workload.control_bytes")) {
    w->control_bytes = std::get<int64_t>(v->items[0]);
  }
  if (const config::Value* v = get("workload.region")) {
    w->region = static_cast<int>(std::get<int64_t>(v->items[0]));
  }
  if (const config::Value* v = get("workload.dependencies")) {
    w->dependencies = std::get<bool>(v->items[0]);
  }
  if (const config::Value* v = get("workload.cycle_scale")) {
    w->cycle_scale = std::get<double>(v->items[0]);
  }
  ReadNodeMap(values, "workload.node_map", {{"row-major", NodeMapKind::kLinear}}, &w->node_map,
              &w->node_list, errors);
  if (const config::Value* v = get("workload.eager_bytes")) {
    w->eager_bytes = std::get<int64_t>(v->items[0]);
  }
  if (const config::Value* v = get("workload.collective_algorithm")) {
    w->collective_algorithm = FromName(kAlgorithms, v->items[0]);
  }
  if (const config::Value* v = get("workload.compute")) {
    w->compute = FromName(kComputeModes, v->items[0]);
  }
  ReadNodeMap(values, "workload.rank_map",
              {{"linear", NodeMapKind::kLinear}, {"random", NodeMapKind::kRandom}}, &w->rank_map,
              &w->rank_list, errors);
  w->capped = values.Find("measure.max_cycles") != nullptr;
  CheckUnused(values, *w, errors);
}

}  // namespace ukai::sim
