#include "sim/experiment/nic_job_config.h"

#include <fmt/format.h>

#include "core/status.h"

namespace ukai::sim {
namespace {

using config::Tree;

constexpr char kKey[] = "nic.jobs";
constexpr char kForm[] = "a job launch is {cycle = 300000, enabled = [\"3G2\", \"3G3\"]}";

Status Bad(const std::string& what, const Tree& t) {
  return config::KeyError(kKey, fmt::format("{} ({})", what, kForm), t.origin);
}

// One node of `enabled`: a name ("3G2", "3,4") or a node number.
Status ReadNode(const Tree& t, std::string* out) {
  if (t.kind == Tree::Kind::kScalar) {
    if (const std::string* s = std::get_if<std::string>(&t.scalar)) {
      *out = *s;
      return Status::Ok();
    }
    if (const int64_t* n = std::get_if<int64_t>(&t.scalar); n != nullptr && *n >= 0) {
      *out = std::to_string(*n);
      return Status::Ok();
    }
  }
  return Bad("an enabled NIC is named by its node: a name or a node number", t);
}

Status ReadLaunch(const Tree& t, NicJobLaunch* out) {
  out->where = t.origin.Where();
  if (t.kind != Tree::Kind::kTable) return Bad("expected an inline table", t);
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (t.names[i] != "cycle" && t.names[i] != "enabled") {
      return Bad(fmt::format("unknown field '{}' (known: cycle, enabled)", t.names[i]), t.items[i]);
    }
  }
  const Tree* cycle = t.Field("cycle");
  const int64_t* c = cycle != nullptr && cycle->kind == Tree::Kind::kScalar
                         ? std::get_if<int64_t>(&cycle->scalar)
                         : nullptr;
  if (c == nullptr || *c <= 0) {
    return Bad("cycle must be an integer > 0 (the register at start is nic.enabled)",
               cycle != nullptr ? *cycle : t);
  }
  out->cycle = *c;
  const Tree* enabled = t.Field("enabled");
  if (enabled == nullptr || enabled->kind != Tree::Kind::kList || enabled->items.empty()) {
    return Bad("enabled must be a non-empty list of nodes", enabled != nullptr ? *enabled : t);
  }
  for (const Tree& node : enabled->items) {
    out->enabled.emplace_back();
    UKAI_RETURN_IF_ERROR(ReadNode(node, &out->enabled.back()));
  }
  return Status::Ok();
}

}  // namespace

std::vector<config::KeySpec> NicJobKeySpecs() {
  return {config::KeySpec::Make(kKey, config::ValueType::kStructured)
              .Default("[]")
              .Doc("job launches during the run, each setting the NIC enable register: "
                   "[{cycle = 300000, enabled = [\"3G2\", \"3G3\"]}]; the management node "
                   "sends enable/disable commands and every compute node its I/O node and "
                   "detours as interconnect messages (docs/gateway.md)")};
}

void ReadNicJobConfig(const config::ConfigValues& values, NicConfig* nic,
                      std::vector<std::string>* errors) {
  const config::Value* v = values.Find(kKey);
  if (v == nullptr) return;
  if (v->tree.kind != Tree::Kind::kList) {
    errors->push_back(Bad("expected a list of job launches", v->tree).message());
    return;
  }
  nic->jobs.clear();
  int64_t last = 0;
  for (const Tree& item : v->tree.items) {
    NicJobLaunch launch;
    Status st = ReadLaunch(item, &launch);
    if (st.ok() && launch.cycle < last) st = Bad("launches must be in cycle order", item);
    if (!st.ok()) {
      errors->push_back(st.message());
      return;
    }
    last = launch.cycle;
    nic->jobs.push_back(std::move(launch));
  }
}

}  // namespace ukai::sim
