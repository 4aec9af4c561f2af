#include "sim/experiment/sss_keys.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/config/enum_names.h"

namespace ukai::sim {
namespace {

using config::EnumName;
using config::FromName;
using config::KeySpec;
using config::Names;
using config::Scalar;
using config::Shape;
using config::ToName;
using config::Tree;
using config::ValueType;
using Items = std::vector<Scalar>;

constexpr EnumName<SourceRouteMode> kRouteModes[] = {{SourceRouteMode::kAuto, "auto"},
                                                     {SourceRouteMode::kShortest, "shortest"},
                                                     {SourceRouteMode::kUpDown, "updown"}};
constexpr EnumName<RmaOperation> kOperations[] = {{RmaOperation::kMessage, "message"},
                                                  {RmaOperation::kWrite, "write"},
                                                  {RmaOperation::kRead, "read"}};
constexpr EnumName<MulticastKind> kMulticasts[] = {{MulticastKind::kNone, "none"},
                                                   {MulticastKind::kNaive, "naive"},
                                                   {MulticastKind::kHierarchical, "hierarchical"},
                                                   {MulticastKind::kChained, "chained"}};

bool B(const Scalar& s) { return std::get<bool>(s); }
std::string YesNo(bool b) { return b ? "true" : "false"; }

std::vector<ConfigBinding> TopologyAndRoutingRows() {
  using VT = ValueType;
  return {
      {KeySpec::Make("network.tree_arity", VT::kInt)
           .Min(2)
           .Max(30)
           .Doc("tree: children per switch (end nodes below the lowest switches)"),
       [](const Items& v, SimConfig* c) { c->network.tree_arity = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.tree_arity); }},
      {KeySpec::Make("network.tree_levels", VT::kInt)
           .Min(1)
           .Max(20)
           .Doc("tree: levels of switches (tree_arity^tree_levels end nodes, one top switch)"),
       [](const Items& v, SimConfig* c) { c->network.tree_levels = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.tree_levels); }},
      {KeySpec::Make("network.tree_upper_bandwidth", VT::kInt)
           .Min(1)
           .Max(29)
           .Doc("tree: bandwidth of every link above the lowest switch level, in end-node "
                "links (that many parallel channels; 1: a thin tree)"),
       [](const Items& v, SimConfig* c) { c->network.tree_upper_bandwidth = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.tree_upper_bandwidth); }},
      {KeySpec::Make("routing.source_routes", VT::kEnum)
           .Allowed(Names(kRouteModes))
           .Doc("source: route tables of shortest paths, of up*/down* paths (deadlock-free "
                "on any graph; root routing.root), or auto: shortest when the switches form "
                "no cycle, else up*/down*"),
       [](const Items& v, SimConfig* c) { c->routing.source_routes = FromName(kRouteModes, v[0]); },
       [](const SimConfig& c) {
         return std::string(ToName(kRouteModes, c.routing.source_routes));
       }},
      {KeySpec::Make("routing.source_paths", VT::kInt)
           .Min(1)
           .Max(16)
           .Doc("source: routes kept per pair of end nodes; packets of a pair take them in "
                "turn (one route per pair with routing.in_order)"),
       [](const Items& v, SimConfig* c) { c->routing.source_paths = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.routing.source_paths); }},
      {KeySpec::Make("routing.in_order", VT::kBool)
           .Doc("source: FIFO order between every pair of end nodes (one route and one VC "
                "per pair, one injection VC per destination)"),
       [](const Items& v, SimConfig* c) { c->routing.in_order = B(v[0]); },
       [](const SimConfig& c) { return YesNo(c.routing.in_order); }},
  };
}

std::vector<ConfigBinding> NicRows() {
  using VT = ValueType;
  return {
      {KeySpec::Make("nic.header_bytes", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(65535)
           .Doc("SSS NIC: header + trailer of every packet, route bytes excluded (the paper: "
                "30)"),
       [](const Items& v, SimConfig* c) { c->sss.header_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.header_bytes); }},
      {KeySpec::Make("nic.per_switch_bytes", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(64)
           .Doc("SSS NIC: route bytes per switch on the path (the paper: 2)"),
       [](const Items& v, SimConfig* c) { c->sss.per_switch_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.per_switch_bytes); }},
      {KeySpec::Make("nic.max_payload_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(1 << 20)
           .Doc("SSS NIC: payload bound of one packet; a larger transfer is split at send"),
       [](const Items& v, SimConfig* c) { c->sss.max_payload_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.max_payload_bytes); }},
      {KeySpec::Make("nic.page_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(1 << 30)
           .Doc("SSS NIC: page size; no packet's data crosses a page boundary"),
       [](const Items& v, SimConfig* c) { c->sss.page_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.page_bytes); }},
      {KeySpec::Make("nic.bus_mbytes_per_s", VT::kFloat)
           .Unit("MB/s")
           .Min(0, /*open=*/true)
           .Max(1e6)
           .Doc("SSS NIC: the I/O bus, shared by send and receive DMA (the paper's SBus with "
                "8-cycle bursts: 67)"),
       [](const Items& v, SimConfig* c) { c->sss.bus_mbytes_per_s = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.sss.bus_mbytes_per_s); }},
      {KeySpec::Make("nic.buffer_mbytes_per_s", VT::kFloat)
           .Unit("MB/s")
           .Min(0, /*open=*/true)
           .Max(1e6)
           .Doc("SSS NIC: the SRAM buffers' rate, shared by link receive (first), link send "
                "and DMA (the paper: 200)"),
       [](const Items& v, SimConfig* c) { c->sss.buffer_mbytes_per_s = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.sss.buffer_mbytes_per_s); }},
      {KeySpec::Make("nic.receive_buffer_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(int64_t{1} << 40)
           .Doc("SSS NIC: the receive ring; a packet enters only when it has room for the "
                "whole packet (flow control), and leaves once DMA'd to the host"),
       [](const Items& v, SimConfig* c) { c->sss.receive_buffer_bytes = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.receive_buffer_bytes); }},
      {KeySpec::Make("nic.ack_bytes", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(4096)
           .Doc("SSS NIC: payload of an ack (an ack-less remote write to the SS-Wait flag); "
                "a combined ack is one such field"),
       [](const Items& v, SimConfig* c) { c->sss.ack_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.ack_bytes); }},
      {KeySpec::Make("nic.node_id_bytes", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(64)
           .Doc("SSS NIC: one member's virtual node ID in a chained multicast header"),
       [](const Items& v, SimConfig* c) { c->sss.node_id_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.node_id_bytes); }},
      {KeySpec::Make("link.raw_gbps", VT::kFloat)
           .Unit("Gb/s")
           .Min(0, /*open=*/true)
           .Max(1e4)
           .Doc("SSS NIC: line rate with the 8b/10b code bits (the paper's optical link: "
                "1.0625); a cycle is the time of one flit of data at 8/10 of it"),
       [](const Items& v, SimConfig* c) { c->sss.raw_gbps = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.sss.raw_gbps); }},
  };
}

std::vector<ConfigBinding> TrafficRows() {
  using VT = ValueType;
  return {
      {KeySpec::Make("traffic.operation", VT::kEnum)
           .Allowed(Names(kOperations))
           .Doc("message: the engine's plain messages; write / read: the SSS NIC's remote "
                "writes / reads of traffic.message_bytes (docs/sss.md)"),
       [](const Items& v, SimConfig* c) { c->sss.operation = FromName(kOperations, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kOperations, c.sss.operation)); }},
      {KeySpec::Make("traffic.multicast", VT::kEnum, Shape::kSweep)
           .Allowed(Names(kMulticasts))
           .Doc("SSS NIC writes to a group: none, naive (one unicast per member), "
                "hierarchical (switches copy) or chained (member NICs forward); a list runs "
                "each"),
       [](const Items& v, SimConfig* c) { c->sss.multicast = FromName(kMulticasts, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kMulticasts, c.sss.multicast)); }},
      {KeySpec::Make("traffic.multicast_group_size", VT::kInt, Shape::kSweep)
           .Unit("nodes")
           .Min(1)
           .Max(1 << 20)
           .Doc("members of a multicast, drawn at random among the other end nodes (unless "
                "traffic.multicast_groups); a list runs each"),
       [](const Items& v, SimConfig* c) { c->sss.multicast_group_size = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.multicast_group_size); }},
      {KeySpec::Make("traffic.multicast_convert", VT::kBool)
           .Doc("chained: the first switch on the way that can copy converts the packet to a "
                "hierarchical multicast for the members (network.copy_switches)"),
       [](const Items& v, SimConfig* c) { c->sss.multicast_convert = B(v[0]); },
       [](const SimConfig& c) { return YesNo(c.sss.multicast_convert); }},
      {KeySpec::Make("traffic.acks", VT::kBool, Shape::kSweep)
           .Doc("writes and multicasts return an ack (combined in switches / along the chain "
                "for multicasts); a list runs each"),
       [](const Items& v, SimConfig* c) { c->sss.acks = B(v[0]); },
       [](const SimConfig& c) { return YesNo(c.sss.acks); }},
      {KeySpec::Make("traffic.page_offset", VT::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(1 << 30)
           .Doc("offset of every transfer's destination address within its page (a transfer "
                "is split at page boundaries)"),
       [](const Items& v, SimConfig* c) { c->sss.page_offset = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.page_offset); }},
      {KeySpec::Make("traffic.operations", VT::kInt)
           .Unit("operations")
           .Min(0)
           .Max(double(int64_t{1} << 50))
           .Doc("SSS NIC: operations started network-wide before the sources stop (0: no "
                "cap; the point ends when they are all complete)"),
       [](const Items& v, SimConfig* c) { c->sss.operations = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.sss.operations); }},
  };
}

// ---- structured keys ----

Status Bad(std::string_view key, const std::string& what, const Tree& t) {
  return config::KeyError(key, what, t.origin);
}

const std::string* AsString(const Tree& t) {
  return t.kind == Tree::Kind::kScalar ? std::get_if<std::string>(&t.scalar) : nullptr;
}
const int64_t* AsInt(const Tree& t) {
  return t.kind == Tree::Kind::kScalar ? std::get_if<int64_t>(&t.scalar) : nullptr;
}

// A list of names, or a count giving "<prefix>0".."<prefix><n-1>".
Status ReadNames(std::string_view key, const Tree& t, const char* prefix,
                 std::vector<std::string>* out) {
  out->clear();
  if (const int64_t* n = AsInt(t)) {
    if (*n < 0 || *n > (1 << 20)) return Bad(key, "a count must be in [0, 1048576]", t);
    for (int64_t i = 0; i < *n; ++i) out->push_back(fmt::format("{}{}", prefix, i));
    return Status::Ok();
  }
  if (t.kind != Tree::Kind::kList) return Bad(key, "expected a count or a list of names", t);
  for (const Tree& item : t.items) {
    const std::string* s = AsString(item);
    if (s == nullptr || s->empty()) return Bad(key, "a node name is a non-empty string", item);
    out->push_back(*s);
  }
  return Status::Ok();
}

Status ReadLatency(std::string_view key, const Tree& t, int* out) {
  const int64_t* v = AsInt(t);
  if (v == nullptr || *v < 0 || *v > 1000000) {
    return Bad(key, "a latency is an integer number of cycles in [0, 1000000]", t);
  }
  *out = static_cast<int>(*v);
  return Status::Ok();
}

constexpr char kLinkForm[] =
    "a link is [\"a\", \"b\"], [\"a\", \"b\", latency] or {a = \"a\", b = \"b\", latency = 2, "
    "channels = 2}";

Status ReadLink(const Tree& t, GraphLinkSpec* l) {
  constexpr std::string_view key = "network.links";
  l->where = t.origin.Where();
  if (t.kind == Tree::Kind::kList) {
    if (t.items.size() < 2 || t.items.size() > 3) return Bad(key, kLinkForm, t);
    const std::string* a = AsString(t.items[0]);
    const std::string* b = AsString(t.items[1]);
    if (a == nullptr || b == nullptr) return Bad(key, kLinkForm, t);
    l->a = *a;
    l->b = *b;
    if (t.items.size() == 3) UKAI_RETURN_IF_ERROR(ReadLatency(key, t.items[2], &l->latency_ab));
    l->latency_ba = l->latency_ab;
    return Status::Ok();
  }
  if (t.kind != Tree::Kind::kTable) return Bad(key, kLinkForm, t);
  for (size_t i = 0; i < t.names.size(); ++i) {
    const std::string& f = t.names[i];
    if (f != "a" && f != "b" && f != "latency" && f != "channels") {
      return Bad(key, fmt::format("unknown field '{}' ({})", f, kLinkForm), t.items[i]);
    }
  }
  const Tree* a = t.Field("a");
  const Tree* b = t.Field("b");
  if (a == nullptr || b == nullptr || AsString(*a) == nullptr || AsString(*b) == nullptr) {
    return Bad(key, kLinkForm, t);
  }
  l->a = *AsString(*a);
  l->b = *AsString(*b);
  if (const Tree* lat = t.Field("latency")) {
    UKAI_RETURN_IF_ERROR(ReadLatency(key, *lat, &l->latency_ab));
    l->latency_ba = l->latency_ab;
  }
  if (const Tree* ch = t.Field("channels")) {
    const int64_t* n = AsInt(*ch);
    if (n == nullptr || *n < 1 || *n > 31) {
      return Bad(key, "channels is an integer in [1, 31]", *ch);
    }
    l->channels = static_cast<int>(*n);
  }
  return Status::Ok();
}

Status ReadGraph(const config::ConfigValues& values, NetworkConfig* n) {
  if (const config::Value* v = values.Find("network.file");
      v != nullptr && !std::get<std::string>(v->items[0]).empty()) {
    const std::string& path = std::get<std::string>(v->items[0]);
    std::filesystem::path p(path);
    // Relative to the config file's folder (not to --set arguments: the working folder).
    if (p.is_relative() && v->origin.line > 0) {
      p = std::filesystem::path(v->origin.source).parent_path() / p;
    }
    n->file = p.string();
  }
  const config::Value* nodes = values.Find("network.nodes");
  const config::Value* switches = values.Find("network.switches");
  const config::Value* links = values.Find("network.links");
  if (nodes != nullptr) {
    UKAI_RETURN_IF_ERROR(ReadNames("network.nodes", nodes->tree, "n", &n->graph.terminals));
  }
  if (switches != nullptr) {
    UKAI_RETURN_IF_ERROR(ReadNames("network.switches", switches->tree, "s", &n->graph.switches));
  }
  if (links != nullptr) {
    if (links->tree.kind != Tree::Kind::kList) {
      return Bad("network.links", "expected a list of links", links->tree);
    }
    n->graph.links.clear();
    for (const Tree& item : links->tree.items) {
      n->graph.links.emplace_back();
      UKAI_RETURN_IF_ERROR(ReadLink(item, &n->graph.links.back()));
    }
  }
  // Empty lists count as absent (their defaults); a graph needs nodes and links.
  const GraphSpec& g = n->graph;
  if (!g.empty() && (g.terminals.empty() || g.links.empty())) {
    const config::Value* at = nodes != nullptr ? nodes : switches != nullptr ? switches : links;
    return Bad("network.links", "a graph in the config needs network.nodes and network.links",
               at->tree);
  }
  if (links != nullptr) {
    n->graph.origin = fmt::format("network.links {}", links->tree.origin.Where());
  }
  return Status::Ok();
}

Status ReadNameList(const config::ConfigValues& values, std::string_view key,
                    std::vector<std::string>* out) {
  const config::Value* v = values.Find(key);
  if (v == nullptr) return Status::Ok();
  if (v->tree.kind != Tree::Kind::kList) return Bad(key, "expected a list of node names", v->tree);
  return ReadNames(key, v->tree, "", out);
}

Status ReadSssLists(const config::ConfigValues& values, SssConfig* s) {
  if (const config::Value* v = values.Find("network.copy_switches")) {
    const std::string* word = AsString(v->tree);
    if (word != nullptr && (*word == "all" || *word == "none")) {
      s->copy_all = *word == "all";
      s->copy_switches.clear();
    } else if (v->tree.kind == Tree::Kind::kList) {
      s->copy_all = false;
      UKAI_RETURN_IF_ERROR(ReadNames("network.copy_switches", v->tree, "", &s->copy_switches));
    } else {
      return Bad("network.copy_switches", "expected \"all\", \"none\" or a list of switch names",
                 v->tree);
    }
  }
  UKAI_RETURN_IF_ERROR(ReadNameList(values, "traffic.sources", &s->sources));
  if (const config::Value* v = values.Find("traffic.multicast_groups")) {
    if (v->tree.kind != Tree::Kind::kList) {
      return Bad("traffic.multicast_groups", "expected a list of groups (lists of node names)",
                 v->tree);
    }
    s->multicast_groups.clear();
    for (const Tree& g : v->tree.items) {
      if (g.kind != Tree::Kind::kList || g.items.empty()) {
        return Bad("traffic.multicast_groups", "a group is a non-empty list of node names", g);
      }
      s->multicast_groups.emplace_back();
      UKAI_RETURN_IF_ERROR(
          ReadNames("traffic.multicast_groups", g, "", &s->multicast_groups.back()));
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<ConfigBinding> SssBindings() {
  std::vector<ConfigBinding> all = TopologyAndRoutingRows();
  for (auto* part : {&NicRows, &TrafficRows}) {
    for (ConfigBinding& b : part()) all.push_back(std::move(b));
  }
  return all;
}

std::vector<config::KeySpec> SssStructuredKeySpecs() {
  using VT = ValueType;
  return {
      KeySpec::Make("network.file", VT::kString)
          .Default("")
          .Doc("graph: a BookSim2 anynet file (routers, nodes, links with optional latencies; "
               "relative to the config file's folder)"),
      KeySpec::Make("network.nodes", VT::kStructured)
          .Default("[]")
          .Doc("graph: the end nodes (NICs), a count (\"n0\"..) or a list of names"),
      KeySpec::Make("network.switches", VT::kStructured)
          .Default("[]")
          .Doc("graph: the switches, a count (\"s0\"..) or a list of names"),
      KeySpec::Make("network.links", VT::kStructured)
          .Default("[]")
          .Doc("graph: the links, each [\"a\", \"b\"], [\"a\", \"b\", latency] or {a, b, "
               "latency, channels}; a latency is in cycles (default router.link_cycles)"),
      KeySpec::Make("network.copy_switches", VT::kStructured)
          .Default("\"all\"")
          .Doc("switches that copy packets (hierarchical multicast, ack combining, header "
               "conversion): \"all\", \"none\" or a list of switch names"),
      KeySpec::Make("traffic.multicast_groups", VT::kStructured)
          .Default("[]")
          .Doc("explicit multicast groups (lists of end-node names), taken in turn"),
      KeySpec::Make("traffic.sources", VT::kStructured)
          .Default("[]")
          .Doc("SSS NIC: the end nodes that start operations (empty: every end node)"),
  };
}

void ReadSssStructured(const config::ConfigValues& values, SimConfig* c,
                       std::vector<std::string>* errors) {
  if (Status st = ReadGraph(values, &c->network); !st.ok()) errors->push_back(st.message());
  if (Status st = ReadSssLists(values, &c->sss); !st.ok()) errors->push_back(st.message());
}

std::string_view SourceRouteModeName(SourceRouteMode m) { return ToName(kRouteModes, m); }
std::string_view RmaOperationName(RmaOperation o) { return ToName(kOperations, o); }
std::string_view MulticastKindName(MulticastKind m) { return ToName(kMulticasts, m); }

}  // namespace ukai::sim
