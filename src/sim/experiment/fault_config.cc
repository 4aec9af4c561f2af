#include "sim/experiment/fault_config.h"

#include <fmt/format.h>

#include "core/status.h"

namespace ukai::sim {
namespace {

using config::Tree;

std::string Render(const Tree& t) {
  switch (t.kind) {
    case Tree::Kind::kScalar:
      return config::ScalarToString(t.scalar, /*quote_strings=*/true);
    case Tree::Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < t.items.size(); ++i) s += (i ? ", " : "") + Render(t.items[i]);
      return s + "]";
    }
    case Tree::Kind::kTable: {
      std::string s = "{";
      for (size_t i = 0; i < t.items.size(); ++i)
        s += (i ? ", " : "") + t.names[i] + " = " + Render(t.items[i]);
      return s + "}";
    }
    case Tree::Kind::kOther:  // refused by the schema check before any consumer sees it
      return t.other;
  }
  return "?";
}

Status Bad(const std::string& key, const std::string& what, const Tree& t) {
  return config::KeyError(key, fmt::format("{}, got {}", what, Render(t)), t.origin);
}

// A node: a list of coordinates, a name (string) or, where `allow_number`, a node number.
Status ReadNode(const std::string& key, const Tree& t, bool allow_number, NodeRef* out) {
  out->text = Render(t);
  out->where = t.origin.Where();
  if (t.kind == Tree::Kind::kList) {
    out->form = NodeRef::Form::kCoords;
    for (const Tree& c : t.items) {
      const int64_t* v = c.kind == Tree::Kind::kScalar ? std::get_if<int64_t>(&c.scalar) : nullptr;
      if (v == nullptr) return Bad(key, "a node's coordinates must be integers", t);
      out->coords.push_back(*v);
    }
    if (out->coords.empty()) return Bad(key, "a node needs its coordinates", t);
    return Status::Ok();
  }
  if (t.kind == Tree::Kind::kScalar) {
    if (const std::string* s = std::get_if<std::string>(&t.scalar)) {
      out->form = NodeRef::Form::kName;
      out->name = *s;
      return Status::Ok();
    }
    if (const int64_t* n = std::get_if<int64_t>(&t.scalar); n != nullptr && allow_number) {
      out->form = NodeRef::Form::kNumber;
      out->number = *n;
      return Status::Ok();
    }
  }
  return Bad(key,
             allow_number ? "expected a node: coordinates [x, y, ...], a name or a node number"
                          : "expected a node: coordinates [x, y, ...] or a name (a bare integer "
                            "is ambiguous here: write [[3, 4]] for coordinates)",
             t);
}

Status ReadChannel(const std::string& key, const Tree& t, ChannelRef* out) {
  out->where = t.origin.Where();
  if (t.kind != Tree::Kind::kList || t.items.size() != 2) {
    return Bad(key, "expected a channel as the pair of nodes it joins, e.g. [[3, 4], [3, 5]]", t);
  }
  UKAI_RETURN_IF_ERROR(ReadNode(key, t.items[0], true, &out->a));
  return ReadNode(key, t.items[1], true, &out->b);
}

Status ReadEvent(const std::string& key, const Tree& t, FaultEventSpec* out) {
  out->where = t.origin.Where();
  if (t.kind != Tree::Kind::kTable) {
    return Bad(key, "expected an inline table like {cycle = 20000, fail_node = [5, 5]}", t);
  }
  struct Action {
    const char* name;
    FaultEventSpec::Kind kind;
  };
  static constexpr Action kActions[] = {
      {"fail_node", FaultEventSpec::Kind::kFailNode},
      {"repair_node", FaultEventSpec::Kind::kRepairNode},
      {"fail_channel", FaultEventSpec::Kind::kFailChannel},
      {"repair_channel", FaultEventSpec::Kind::kRepairChannel},
  };
  int actions = 0;
  bool has_cycle = false;
  for (size_t i = 0; i < t.names.size(); ++i) {
    const Tree& v = t.items[i];
    if (t.names[i] == "cycle") {
      const int64_t* c = v.kind == Tree::Kind::kScalar ? std::get_if<int64_t>(&v.scalar) : nullptr;
      if (c == nullptr || *c < 0) return Bad(key, "cycle must be an integer >= 0", v);
      out->cycle = *c;
      has_cycle = true;
      continue;
    }
    const Action* found = nullptr;
    for (const Action& a : kActions) {
      if (t.names[i] == a.name) found = &a;
    }
    if (found == nullptr) {
      return config::KeyError(key,
                              fmt::format("unknown field '{}' (known: cycle, fail_node, "
                                          "repair_node, fail_channel, repair_channel)",
                                          t.names[i]),
                              v.origin);
    }
    ++actions;
    out->kind = found->kind;
    const bool node = found->kind == FaultEventSpec::Kind::kFailNode ||
                      found->kind == FaultEventSpec::Kind::kRepairNode;
    UKAI_RETURN_IF_ERROR(node ? ReadNode(key, v, true, &out->node)
                              : ReadChannel(key, v, &out->channel));
  }
  if (!has_cycle) return Bad(key, "an event needs its cycle", t);
  if (actions != 1) {
    return Bad(key,
               "an event needs exactly one of fail_node, repair_node, fail_channel, "
               "repair_channel",
               t);
  }
  return Status::Ok();
}

// Calls `read` on every item of the list `key` holds.
template <typename T, typename F>
void ReadList(const config::ConfigValues& values, const std::string& key, F read,
              std::vector<T>* out, std::vector<std::string>* errors) {
  const config::Value* v = values.Find(key);
  if (v == nullptr) return;
  if (v->tree.kind != Tree::Kind::kList) {
    errors->push_back(Bad(key, "expected a list", v->tree).message());
    return;
  }
  out->clear();
  for (const Tree& item : v->tree.items) {
    T value;
    Status st = read(key, item, &value);
    if (!st.ok()) {
      errors->push_back(st.message());
      return;
    }
    out->push_back(std::move(value));
  }
}

void ReadReconfig(const config::ConfigValues& values, ReconfigConfig* r,
                  std::vector<std::string>* errors) {
  auto text = [&](const char* key) -> const std::string* {
    const config::Value* v = values.Find(key);
    return v == nullptr ? nullptr : &std::get<std::string>(v->items[0]);
  };
  auto integer = [&](const char* key, int64_t* out) {
    if (const config::Value* v = values.Find(key)) *out = std::get<int64_t>(v->items[0]);
  };
  if (const std::string* s = text("reconfig.mode")) {
    r->mode = *s == "instant" ? ReconfigConfig::Mode::kInstant : ReconfigConfig::Mode::kProtocol;
  }
  if (const std::string* s = text("reconfig.root")) {
    r->root = *s == "fault-region" ? ReconfigConfig::RootPolicy::kFaultRegion
                                   : ReconfigConfig::RootPolicy::kStatic;
  }
  if (const std::string* s = text("reconfig.discard")) {
    r->discard = *s == "all" ? ReconfigConfig::Discard::kAll : ReconfigConfig::Discard::kRecovering;
  }
  integer("reconfig.detect_cycles", &r->detect_cycles);
  integer("reconfig.hop_cycles", &r->hop_cycles);
  integer("reconfig.compute_cycles", &r->compute_cycles);
  if (const config::Value* v = values.Find("reconfig.retransmit")) {
    r->retransmit = std::get<bool>(v->items[0]);
  }
  ReadList(
      values, "reconfig.root_priority",
      [](const std::string& k, const Tree& t, NodeRef* n) { return ReadNode(k, t, true, n); },
      &r->root_priority, errors);
}

}  // namespace

std::vector<config::KeySpec> FaultKeySpecs() {
  using config::KeySpec;
  using config::ValueType;
  return {
      KeySpec::Make("faults.nodes", ValueType::kStructured)
          .Default("[]")
          .Doc("faulty nodes from cycle 0: coordinates ([[3, 4], [7, 1]]) or names (a k-ary "
               "n-cube takes \"3,4\"); a faulty node's channels are faulty too"),
      KeySpec::Make("faults.channels", ValueType::kStructured)
          .Default("[]")
          .Doc("faulty physical channels from cycle 0, each the pair of neighbouring nodes it "
               "joins ([[[3, 4], [3, 5]]]); both directions fail"),
      KeySpec::Make("faults.random_nodes", ValueType::kInt)
          .Default("0")
          .Min(0)
          .Max(1 << 26)
          .Doc("extra faulty nodes drawn with the run seed, keeping the healthy network "
               "connected (an error if no such placement is found)"),
      KeySpec::Make("faults.random_channels", ValueType::kInt)
          .Default("0")
          .Min(0)
          .Max(1 << 28)
          .Doc("extra faulty channels drawn with the run seed, keeping the healthy network "
               "connected"),
      KeySpec::Make("faults.events", ValueType::kStructured)
          .Default("[]")
          .Doc("timed faults and repairs: [{cycle = 20000, fail_node = [5, 5]}, {cycle = "
               "60000, repair_node = [5, 5]}]; also fail_channel / repair_channel = [a, b]"),
      KeySpec::Make("reconfig.mode", ValueType::kEnum)
          .Allowed({"protocol", "instant"})
          .Default("protocol")
          .Doc("timed faults: protocol = the simulated Section-3 reconfiguration (detection, "
               "root, broadcast, per-node table update, restart); instant = every table at "
               "once at the event's cycle"),
      KeySpec::Make("reconfig.root", ValueType::kEnum)
          .Allowed({"static", "fault-region"})
          .Default("static")
          .Doc("new up*/down* root: static = first healthy node of reconfig.root_priority "
               "(empty: keep the current root while healthy); fault-region = the "
               "lowest-numbered node of the fault region (its upper-left corner)"),
      KeySpec::Make("reconfig.root_priority", ValueType::kStructured)
          .Default("[]")
          .Doc("static root policy: candidate roots in priority order, as in faults.nodes; "
               "also the priority between competing root candidates of several fault "
               "regions (listed ones first, then lower node number)"),
      KeySpec::Make("reconfig.detect_cycles", ValueType::kInt)
          .Unit("cycles")
          .Default("16")
          .Min(0)
          .Max(1e12)
          .Doc("from a fault or repair to its detection by the neighbouring nodes"),
      KeySpec::Make("reconfig.hop_cycles", ValueType::kInt)
          .Unit("cycles")
          .Default("8")
          .Min(0)
          .Max(1e12)
          .Doc("delay of a reconfiguration control message per hop"),
      KeySpec::Make("reconfig.compute_cycles", ValueType::kInt)
          .Unit("cycles")
          .Default("100")
          .Min(0)
          .Max(1e12)
          .Doc("time a node takes to recompute its routing tables"),
      KeySpec::Make("reconfig.discard", ValueType::kEnum)
          .Allowed({"recovering", "all"})
          .Default("recovering")
          .Doc("discarded at reconfiguration: recovering = messages in deadlock recovery "
               "(Detour-UD's Assumption 1); all = every in-flight message (Autonet)"),
      KeySpec::Make("reconfig.retransmit", ValueType::kBool)
          .Default("true")
          .Doc("resend discarded messages from their source (false: count them as "
               "undeliverable)"),
  };
}

void ReadFaultConfig(const config::ConfigValues& values, FaultConfig* faults,
                     std::vector<std::string>* errors) {
  ReadList(
      values, "faults.nodes",
      [](const std::string& k, const Tree& t, NodeRef* n) { return ReadNode(k, t, false, n); },
      &faults->nodes, errors);
  ReadList(values, "faults.channels", ReadChannel, &faults->channels, errors);
  ReadList(values, "faults.events", ReadEvent, &faults->events, errors);
  ReadReconfig(values, &faults->reconfig, errors);
  if (const config::Value* v = values.Find("faults.random_nodes")) {
    faults->random_nodes = static_cast<int>(std::get<int64_t>(v->items[0]));
  }
  if (const config::Value* v = values.Find("faults.random_channels")) {
    faults->random_channels = static_cast<int>(std::get<int64_t>(v->items[0]));
  }
}

}  // namespace ukai::sim
