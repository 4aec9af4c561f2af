#include "sim/experiment/config_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/enum_names.h"
#include "sim/engine/network.h"
#include "sim/experiment/booksim_model.h"
#include "sim/experiment/config_binding.h"
#include "sim/experiment/fault_config.h"
#include "sim/experiment/memory_budget.h"
#include "sim/experiment/nic_job_config.h"
#include "sim/experiment/sim_module_keys.h"
#include "sim/experiment/sss_keys.h"
#include "sim/experiment/workload_keys.h"
#include "sim/nic/gateway.h"
#include "sim/nic/sss_nic.h"
#include "sim/routing/registry.h"
#include "sim/topology/factory.h"
#include "sim/topology/faults.h"
#include "sim/topology/kary_ncube.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"
#include "sim/workload/run_workload.h"

namespace ukai::sim {
namespace {

using config::KeySpec;
using config::Scalar;
using config::Shape;
using config::ValueType;
using Items = std::vector<Scalar>;

constexpr int64_t kMaxNodes = int64_t{1} << 26;  // KaryNCube's limit
constexpr size_t kMaxPoints = 100000;
[[maybe_unused]] constexpr double kIntMax = INT_MAX;
constexpr double kCycleMax = double(int64_t{1} << 50);  // the engine's limit on counts

constexpr std::string_view kSweepOrder[] = {
    "router.switching",      "traffic.multicast",
    "traffic.acks",          "traffic.multicast_group_size",
    "routing.algorithm",     "traffic.pattern",
    "traffic.message_bytes", "traffic.interval",
    "traffic.rate",          "seed",
};

using config::EnumName;
using config::FromName;
using config::Names;
using config::ToName;
constexpr EnumName<DetourPolicy> kDetourPolicies[] = {{DetourPolicy::kNone, "none"},
                                                      {DetourPolicy::kLearned, "learned"},
                                                      {DetourPolicy::kManaged, "managed"},
                                                      {DetourPolicy::kPreloaded, "preloaded"}};
constexpr EnumName<CpuDirections> kCpuDirections[] = {{CpuDirections::kBoth, "both"},
                                                      {CpuDirections::kIngress, "ingress"}};
constexpr EnumName<DetourSwitchKind> kDetourSwitches[] = {
    {DetourSwitchKind::kAware, "aware"}, {DetourSwitchKind::kDetector, "detector"}};
constexpr EnumName<Switching> kSwitchings[] = {{Switching::kWormhole, "wormhole"},
                                               {Switching::kVirtualCutThrough, "vct"},
                                               {Switching::kVctSaf, "vct-saf"},
                                               {Switching::kStoreAndForward, "saf"}};
constexpr EnumName<InjectionKind> kInjections[] = {{InjectionKind::kBernoulli, "bernoulli"},
                                                   {InjectionKind::kInterval, "interval"}};
constexpr EnumName<MeasureMode> kMeasureModes[] = {
    {MeasureMode::kMessages, "messages"},
    {MeasureMode::kCycles, "cycles"},
    {MeasureMode::kBooksim, "booksim"},
    {MeasureMode::kBooksimThroughput, "booksim_throughput"}};

constexpr EnumName<DorTieRule> kDorTies[] = {
    {DorTieRule::kRandom, "random"}, {DorTieRule::kParity, "parity"}, {DorTieRule::kPlus, "plus"}};
constexpr EnumName<DorDateline> kDorDatelines[] = {{DorDateline::kShared, "shared"},
                                                   {DorDateline::kSplit, "split"}};
constexpr EnumName<HeaderUnits> kHeaderUnits[] = {{HeaderUnits::kPerVc, "per_vc"},
                                                  {HeaderUnits::kPerPort, "per_port"}};
constexpr EnumName<PartitionShape> kPartitionShapes[] = {{PartitionShape::kSlab, "slab"},
                                                         {PartitionShape::kBlock, "block"}};
constexpr EnumName<DuatoAtomic> kDuatoAtomics[] = {{DuatoAtomic::kAdaptive, "adaptive"},
                                                   {DuatoAtomic::kAll, "all"},
                                                   {DuatoAtomic::kEscape, "escape"},
                                                   {DuatoAtomic::kNone, "none"}};

int I32(const Scalar& s) { return static_cast<int>(std::get<int64_t>(s)); }
int64_t I64(const Scalar& s) { return std::get<int64_t>(s); }
double F64(const Scalar& s) { return std::get<double>(s); }
const std::string& Str(const Scalar& s) { return std::get<std::string>(s); }

std::string Num(double v) { return config::ScalarToString(Scalar(v)); }
template <typename T>
std::string IntList(const std::vector<T>& v) {
  return v.size() == 1 ? fmt::format("{}", v[0]) : fmt::format("[{}]", fmt::join(v, ", "));
}

// One key: its spec, how to store items into a SimConfig and how to show the default.
using Binding = ConfigBinding;

std::vector<std::string> TopologyNames() {
  std::vector<std::string> out;
  for (const TopologyEntry& e : Topologies()) out.emplace_back(e.name);
  return out;
}

std::vector<std::string> RoutingNames() {
  std::vector<std::string> out;
  for (const RoutingEntry& e : RoutingAlgorithms()) out.emplace_back(e.name);
  return out;
}

std::vector<std::string> PatternNames() {
  std::vector<std::string> out;
  for (const PatternEntry& e : TrafficPatterns()) out.emplace_back(e.name);
  return out;
}

std::vector<Binding> NetworkAndRouterBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("network.topology", VT::kEnum)
           .Allowed(TopologyNames())
           .Doc("the network: mesh or torus (k-ary n-cubes: network.k, network.n), group "
                "(network.groups groups of network.group_size fully connected nodes, rings "
                "across groups: docs/gateway.md), graph (end nodes and switches from "
                "network.file, a BookSim2 anynet file, or network.links), tree (the "
                "hierarchy of network.tree_*: docs/sss.md), or an indirect topology whose "
                "routers serve terminals: cmesh, flatfly (network.k, network.n, "
                "network.concentration), fattree (network.k, network.n), dragonfly "
                "(network.dragonfly_p, _a, _h); it also chooses the machine model"),
       [](const Items& v, SimConfig* c) { c->network.topology = FindTopology(Str(v[0]))->kind; },
       [](const SimConfig& c) { return std::string(TopologyName(c.network.topology)); }},
      {KeySpec::Make("network.n", VT::kInt)
           .Min(1)
           .Max(15)
           .Doc("number of dimensions (mesh, torus; cmesh, flatfly: of the router grid); "
                "fattree: number of levels"),
       [](const Items& v, SimConfig* c) { c->network.n = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.n); }},
      {KeySpec::Make("network.k", VT::kInt, Shape::kList)
           .Unit("nodes")
           .Min(2)
           .Max(1 << 16)
           .Doc("radix: nodes per dimension (cmesh, flatfly: routers per dimension; "
                "fattree: the arity k, one value); one int for every dimension or a list of "
                "network.n ints (dimension 0 first)"),
       [](const Items& v, SimConfig* c) {
         c->network.k.clear();
         for (const Scalar& s : v) c->network.k.push_back(I32(s));
       },
       [](const SimConfig& c) { return IntList(c.network.k); }},
      {KeySpec::Make("network.concentration", VT::kInt)
           .Unit("terminals")
           .Min(1)
           .Max(64)
           .Doc("cmesh, flatfly: terminals per router (BookSim2's c)"),
       [](const Items& v, SimConfig* c) { c->network.concentration = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.concentration); }},
      {KeySpec::Make("network.dragonfly_p", VT::kInt)
           .Unit("terminals")
           .Min(1)
           .Max(64)
           .Doc("dragonfly: terminals per router (BookSim2's k for dragonfly)"),
       [](const Items& v, SimConfig* c) { c->network.dragonfly_p = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.dragonfly_p); }},
      {KeySpec::Make("network.dragonfly_a", VT::kInt)
           .Unit("routers")
           .Min(0)
           .Max(64)
           .Doc("dragonfly: routers per group (fully connected); 0: 2 * network.dragonfly_p "
                "(BookSim2's choice)"),
       [](const Items& v, SimConfig* c) { c->network.dragonfly_a = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.dragonfly_a); }},
      {KeySpec::Make("network.dragonfly_h", VT::kInt)
           .Unit("channels")
           .Min(0)
           .Max(64)
           .Doc("dragonfly: global channels per router; 0: network.dragonfly_p (BookSim2's "
                "choice); the network has a*h + 1 groups"),
       [](const Items& v, SimConfig* c) { c->network.dragonfly_h = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.dragonfly_h); }},
      {KeySpec::Make("network.dragonfly_local_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(1000)
           .Doc("dragonfly: latency of a local (in-group) channel; 0: router.link_cycles "
                "(BookSim2's dragonflynew: 10)"),
       [](const Items& v, SimConfig* c) { c->network.dragonfly_local_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.dragonfly_local_cycles); }},
      {KeySpec::Make("network.dragonfly_global_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(1000)
           .Doc("dragonfly: latency of a global channel; 0: router.link_cycles (BookSim2's "
                "dragonflynew: 100)"),
       [](const Items& v, SimConfig* c) { c->network.dragonfly_global_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.dragonfly_global_cycles); }},
      {KeySpec::Make("router.vcs", VT::kInt)
           .Min(1)
           .Max(32)
           .Doc("virtual channels per network port (the routing algorithm may need more)"),
       [](const Items& v, SimConfig* c) { c->router.vcs = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.vcs); }},
      {KeySpec::Make("router.vc_buffer_flits", VT::kInt)
           .Unit("flits")
           .Min(1)
           .Max(4096)
           .Doc("depth of each VC buffer"),
       [](const Items& v, SimConfig* c) { c->router.vc_buffer_flits = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.vc_buffer_flits); }},
      {KeySpec::Make("router.pe_vcs", VT::kInt)
           .Min(1)
           .Max(32)
           .Doc("virtual channels of the PE (injection) interface"),
       [](const Items& v, SimConfig* c) { c->router.pe_vcs = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.pe_vcs); }},
      {KeySpec::Make("router.switching", VT::kEnum, Shape::kSweep)
           .Allowed(Names(kSwitchings))
           .Doc("wormhole; vct: virtual cut-through (a header advances only when the next "
                "VC buffer can take the whole message); vct-saf: vct that stores a message "
                "whole when its output is busy at its header's arrival; saf: store-and-"
                "forward at every router (docs/sss.md); a list runs each"),
       [](const Items& v, SimConfig* c) { c->router.switching = FromName(kSwitchings, v[0]); },
       [](const SimConfig& c) { return std::string(SwitchingName(c.router.switching)); }},
      {KeySpec::Make("router.hop_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(1e6)
           .Doc("header delay per router without contention (latch, decode, 2-cycle "
                "arbitration, transfer)"),
       [](const Items& v, SimConfig* c) { c->router.hop_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.hop_cycles); }},
      {KeySpec::Make("router.link_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(1e6)
           .Doc("router-to-router channel delay"),
       [](const Items& v, SimConfig* c) { c->router.link_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.link_cycles); }},
      {KeySpec::Make("router.table_lookup_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(1e6)
           .Doc("extra header delay when the routing algorithm reads a routing table"),
       [](const Items& v, SimConfig* c) { c->router.table_lookup_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.table_lookup_cycles); }},
      {KeySpec::Make("router.flit_bytes", VT::kInt)
           .Unit("bytes")
           .Min(1)
           .Max(1 << 20)
           .Doc("flit size = physical channel width (4 bytes = 32 bits in the spec)"),
       [](const Items& v, SimConfig* c) { c->router.flit_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.flit_bytes); }},
      {KeySpec::Make("router.clock_mhz", VT::kFloat)
           .Unit("MHz")
           .Min(0)
           .Max(1e6)
           .Doc("router clock for converting cycles to time; 0 = the routing algorithm's "
                "synthesized clock (spec Table 1: dor 79, duato 55)"),
       [](const Items& v, SimConfig* c) { c->router.clock_mhz = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.router.clock_mhz); }},
  };
}

std::vector<Binding> RoutingAndTrafficBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("routing.algorithm", VT::kEnum, Shape::kSweep)
           .Allowed(RoutingNames())
           .Doc("routing algorithm (see the list below); a list runs each"),
       [](const Items& v, SimConfig* c) { c->routing.algorithm = Str(v[0]); },
       [](const SimConfig& c) { return c.routing.algorithm; }},
      {KeySpec::Make("traffic.pattern", VT::kEnum, Shape::kSweep)
           .Allowed(PatternNames())
           .Doc("destination pattern (see the list below); a list runs each"),
       [](const Items& v, SimConfig* c) { c->traffic.pattern = Str(v[0]); },
       [](const SimConfig& c) { return c.traffic.pattern; }},
      {KeySpec::Make("traffic.message_bytes", VT::kInt, Shape::kSweep)
           .Unit("bytes")
           .Min(1)
           .Max(1 << 30)
           .Doc("payload per message; flits = ceil(message_bytes / router.flit_bytes)"),
       [](const Items& v, SimConfig* c) { c->traffic.message_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.traffic.message_bytes); }},
      {KeySpec::Make("traffic.injection", VT::kEnum)
           .Allowed(Names(kInjections))
           .Doc("bernoulli: a message starts with probability rate/flits each cycle; "
                "interval: one message every traffic.interval cycles per node"),
       [](const Items& v, SimConfig* c) { c->traffic.injection = FromName(kInjections, v[0]); },
       [](const SimConfig& c) { return std::string(InjectionName(c.traffic.injection)); }},
      {KeySpec::Make("traffic.rate", VT::kFloat, Shape::kSweep)
           .Unit("flits/node/cycle")
           .Min(0, /*open=*/true)
           .Max(1)
           .Doc("offered load of bernoulli injection"),
       [](const Items& v, SimConfig* c) { c->traffic.rate = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.traffic.rate); }},
      {KeySpec::Make("traffic.interval", VT::kInt, Shape::kSweep)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("interval injection: cycles between message creations of one node (the "
                "paper's send interval)"),
       [](const Items& v, SimConfig* c) { c->traffic.interval = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.traffic.interval); }},
      {KeySpec::Make("traffic.hotspot_nodes", VT::kInt, Shape::kList)
           .Min(0)
           .Max(kMaxNodes - 1)
           .Doc("hotspot pattern: the hot destination node numbers (< number of nodes)"),
       [](const Items& v, SimConfig* c) {
         c->traffic.hotspot_nodes.clear();
         for (const Scalar& s : v) c->traffic.hotspot_nodes.push_back(I32(s));
       },
       [](const SimConfig& c) { return IntList(c.traffic.hotspot_nodes); }},
      {KeySpec::Make("traffic.hotspot_fraction", VT::kFloat)
           .Min(0)
           .Max(1)
           .Doc("hotspot pattern: share of messages sent to a hot node"),
       [](const Items& v, SimConfig* c) { c->traffic.hotspot_fraction = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.traffic.hotspot_fraction); }},
  };
}

std::vector<Binding> MeasureBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("measure.mode", VT::kEnum)
           .Allowed(Names(kMeasureModes))
           .Doc("messages: skip warmup_messages deliveries, measure the next "
                "measure_messages (the paper's method); cycles: warm-up cycles, then sample "
                "windows until the mean latency converges; booksim, booksim_throughput: "
                "BookSim2's method (sim_type = latency, throughput; docs/booksim.md)"),
       [](const Items& v, SimConfig* c) { c->measure.mode = FromName(kMeasureModes, v[0]); },
       [](const SimConfig& c) { return std::string(MeasureModeName(c.measure.mode)); }},
      {KeySpec::Make("measure.warmup_messages", VT::kInt)
           .Unit("messages")
           .Min(0)
           .Max(kCycleMax)
           .Doc("messages mode: deliveries (network-wide) skipped before measuring"),
       [](const Items& v, SimConfig* c) { c->measure.warmup_messages = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.warmup_messages); }},
      {KeySpec::Make("measure.measure_messages", VT::kInt)
           .Unit("messages")
           .Min(1)
           .Max(kCycleMax)
           .Doc("messages mode: deliveries measured after the warm-up"),
       [](const Items& v, SimConfig* c) { c->measure.measure_messages = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.measure_messages); }},
      {KeySpec::Make("measure.warmup_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(kCycleMax)
           .Doc("cycles mode: cycles before the first sample window"),
       [](const Items& v, SimConfig* c) { c->measure.warmup_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.warmup_cycles); }},
      {KeySpec::Make("measure.sample_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("cycles mode: length of one sample window"),
       [](const Items& v, SimConfig* c) { c->measure.sample_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.sample_cycles); }},
      {KeySpec::Make("measure.convergence", VT::kFloat)
           .Min(0, /*open=*/true)
           .Max(1, /*open=*/true)
           .Doc("cycles mode: stop when a window's mean latency differs by less than this "
                "fraction from the window before it and from the window three before it, and "
                "the measurement is not saturated"),
       [](const Items& v, SimConfig* c) { c->measure.convergence = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.measure.convergence); }},
      {KeySpec::Make("measure.max_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("both modes: cap on simulated cycles (the point's `cycles` never exceeds it); "
                "reaching it is said in the point's note, and is not by itself saturation"),
       [](const Items& v, SimConfig* c) { c->measure.max_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.max_cycles); }},
      {KeySpec::Make("measure.watchdog_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("deadlock watchdog: error when flits are in the network and none moved for "
                "this long plus router.link_cycles + router.hop_cycles + "
                "router.table_lookup_cycles + 1 (a flit on a link or in a hop pipeline is "
                "not stalled)"),
       [](const Items& v, SimConfig* c) { c->measure.watchdog_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.measure.watchdog_cycles); }},
      {KeySpec::Make("seed", VT::kInt, Shape::kSweep)
           .Min(0)
           .Doc("random seed; the same seed gives identical results; a list runs each"),
       [](const Items& v, SimConfig* c) { c->seed = static_cast<uint64_t>(I64(v[0])); },
       [](const SimConfig& c) { return std::to_string(c.seed); }},
  };
}

// The paper's router as options (docs/simulator.md, "Router options").
std::vector<Binding> FidelityBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("router.eject_flits", VT::kInt)
           .Unit("flits/cycle")
           .Min(1)
           .Max(32)
           .Doc("flits the ejection port hands to the PE per cycle, each from another input "
                "port (the paper's 32-bit PE port: 1)"),
       [](const Items& v, SimConfig* c) { c->router.eject_flits = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.eject_flits); }},
      {KeySpec::Make("router.switch_bubble_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(1e6)
           .Doc("idle cycles an output port needs before it sends a flit of another message "
                "than its last one (the paper's bubble on a VC switch: 1); 0: none"),
       [](const Items& v, SimConfig* c) { c->router.switch_bubble_cycles = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.switch_bubble_cycles); }},
      {KeySpec::Make("router.header_units", VT::kEnum)
           .Allowed(Names(kHeaderUnits))
           .Doc("per_vc: a private header pipeline per input VC; per_port: one address "
                "decoder and output arbiter per input port shared by its VCs (Fig. 6)"),
       [](const Items& v, SimConfig* c) { c->router.header_units = FromName(kHeaderUnits, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kHeaderUnits, c.router.header_units)); }},
      {KeySpec::Make("router.table_read_ports", VT::kInt)
           .Min(0)
           .Max(32)
           .Doc("routing-table reads a router starts per cycle, one per group of input VCs "
                "(VC number mod ports; the paper: 2); 0: no limit"),
       [](const Items& v, SimConfig* c) { c->router.table_read_ports = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.router.table_read_ports); }},
      {KeySpec::Make("routing.dor_tie", VT::kEnum)
           .Allowed(Names(kDorTies))
           .Doc("dor on a torus, destination exactly k/2 away: random (per message), parity "
                "(of the other coordinates of source and destination) or plus (always +)"),
       [](const Items& v, SimConfig* c) { c->routing.dor_tie = FromName(kDorTies, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kDorTies, c.routing.dor_tie)); }},
      {KeySpec::Make("routing.dor_dateline", VT::kEnum)
           .Allowed(Names(kDorDatelines))
           .Doc("dor on a torus: shared (every VC the dateline order allows) or split (one "
                "fixed half of the VCs per (current, destination))"),
       [](const Items& v, SimConfig* c) {
         c->routing.dor_dateline = FromName(kDorDatelines, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kDorDatelines, c.routing.dor_dateline));
       }},
      {KeySpec::Make("routing.duato_atomic", VT::kEnum)
           .Allowed(Names(kDuatoAtomics))
           .Doc("duato with wormhole: which VCs take a new message only once empty: adaptive, "
                "all, escape or none (escape and none can deadlock: docs/simulator.md)"),
       [](const Items& v, SimConfig* c) {
         c->routing.duato_atomic = FromName(kDuatoAtomics, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kDuatoAtomics, c.routing.duato_atomic));
       }},
      {KeySpec::Make("traffic.source_queue", VT::kInt)
           .Unit("messages")
           .Min(0)
           .Max(kIntMax)
           .Doc("messages a PE may hold (queued + being sent): a creation that finds it full "
                "waits until a message has left the PE (the paper's waiting sender: 1); 0: "
                "unbounded"),
       [](const Items& v, SimConfig* c) { c->traffic.source_queue = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.traffic.source_queue); }},
  };
}

// Keys of the fault-tolerant routings (updown, detour-ud, detour-nf).
std::vector<Binding> FaultRoutingBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("routing.root", VT::kInt)
           .Min(-1)
           .Max(kMaxNodes - 1)
           .Doc("up*/down* root node number (updown, detour-ud); -1 or a faulty node: the "
                "lowest-numbered healthy node"),
       [](const Items& v, SimConfig* c) { c->routing.root = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.routing.root); }},
      {KeySpec::Make("routing.timeout_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("detour-ud: a head blocked this long on FA-VCs is presumed deadlocked and "
                "starts recovery on the UD-VC"),
       [](const Items& v, SimConfig* c) { c->routing.timeout_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.routing.timeout_cycles); }},
      {KeySpec::Make("routing.fault_region_distance", VT::kInt)
           .Unit("hops")
           .Min(1)
           .Max(1 << 16)
           .Doc("detour-ud: nodes within this distance of a faulty channel form the fault "
                "region (1: the channel's end nodes)"),
       [](const Items& v, SimConfig* c) { c->routing.fault_region_distance = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.routing.fault_region_distance); }},
  };
}

std::vector<Binding> RunBindings() {
  return {
      {KeySpec::Make("run.memory_limit", ValueType::kInt)
           .Unit("bytes")
           .Min(0)
           .Max(kCycleMax)
           .Doc("memory a point may use: a network estimated larger is refused before any point "
                "runs, and a point stops as saturated before its source queues fill the rest; "
                "0 = half of the physical memory (and of ulimit -v, if set)"),
       [](const Items& v, SimConfig* c) { c->run.memory_limit = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.run.memory_limit); }},
      // Parallel simulation (docs/simulator.md, "Parallel simulation"; engine/partition.h).
      {KeySpec::Make("run.threads", ValueType::kInt)
           .Min(0)
           .Max(4096)
           .Doc("threads per process, each evaluating one partition of the network (under "
                "mpirun: per rank); 0 = one per core this process may run on. Results are "
                "identical for every count; a network too small for them runs on fewer "
                "(run.partition_min_nodes) and says so"),
       [](const Items& v, SimConfig* c) { c->run.threads = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.run.threads); }},
      {KeySpec::Make("run.partition", ValueType::kEnum)
           .Allowed(Names(kPartitionShapes))
           .Doc("how the network is cut into partitions: slab = contiguous blocks along the "
                "highest dimension (fewest messages between partitions on a ring of slabs; "
                "best for up to about k partitions), block = a block of every dimension "
                "(fewer boundary channels per partition for many partitions; mesh or torus "
                "only)"),
       [](const Items& v, SimConfig* c) { c->run.partition = FromName(kPartitionShapes, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kPartitionShapes, c.run.partition)); }},
      {KeySpec::Make("run.partition_min_nodes", ValueType::kInt)
           .Unit("nodes")
           .Min(1)
           .Max(kIntMax)
           .Doc("fewest nodes a partition may have: with fewer per thread (or rank), fewer "
                "partitions are used and the run says so on stderr (a small network gains "
                "nothing from more threads: they wait for each other every cycle)"),
       [](const Items& v, SimConfig* c) { c->run.partition_min_nodes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.run.partition_min_nodes); }},
  };
}

// The group topology and via-node detour keys (docs/gateway.md).
std::vector<Binding> GatewayBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("network.groups", VT::kInt)
           .Min(1)
           .Max(1 << 20)
           .Doc("group topology: number of groups G (a ring of G across groups)"),
       [](const Items& v, SimConfig* c) { c->network.groups = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.groups); }},
      {KeySpec::Make("network.group_size", VT::kInt)
           .Unit("nodes")
           .Min(1)
           .Max(30)
           .Doc("group topology: nodes S per group, fully connected; node <g>G<i> has "
                "index (g-1)*S + i"),
       [](const Items& v, SimConfig* c) { c->network.group_size = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.network.group_size); }},
      {KeySpec::Make("routing.detour_switch", VT::kEnum)
           .Allowed(Names(kDetourSwitches))
           .Doc("dor-detour: aware = every router knows the faults and a message switches "
                "to its via nodes where its normal path first crosses one; detector = the "
                "router next to the fault switches it"),
       [](const Items& v, SimConfig* c) {
         c->routing.detour_switch = FromName(kDetourSwitches, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kDetourSwitches, c.routing.detour_switch));
       }},
  };
}

bool Bool(const Scalar& s) { return std::get<bool>(s); }
std::string StrList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
  return s + "]";
}

// The gateway model's keys (nic/nic_config.h, docs/gateway.md).
std::vector<Binding> NicBindings() {
  using VT = ValueType;
  return {
      {KeySpec::Make("nic.enabled", VT::kString, Shape::kList)
           .Doc("the enable register at start (nic.jobs changes it): nodes whose NIC is "
                "enabled (I/O nodes), by name (\"3G0\"), coordinates name (\"3,4\") or number"),
       [](const Items& v, SimConfig* c) {
         c->nic.enabled.clear();
         for (const Scalar& s : v) c->nic.enabled.push_back(Str(s));
       },
       [](const SimConfig& c) { return StrList(c.nic.enabled); }},
      {KeySpec::Make("nic.management_node", VT::kString)
           .Doc("the node the management node is attached to (Fig. 5: 2G2)"),
       [](const Items& v, SimConfig* c) { c->nic.management_node = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.management_node; }},
      {KeySpec::Make("nic.detours", VT::kEnum)
           .Allowed(Names(kDetourPolicies))
           .Doc("where the NICs' detours come from: none, learned (outgoing packets), managed "
                "(management node after a fault), preloaded (every node at start)"),
       [](const Items& v, SimConfig* c) { c->nic.detours = FromName(kDetourPolicies, v[0]); },
       [](const SimConfig& c) { return std::string(ToName(kDetourPolicies, c.nic.detours)); }},
      {KeySpec::Make("nic.frames", VT::kInt)
           .Unit("frames")
           .Min(0)
           .Max(kCycleMax)
           .Doc("ingress frames generated internally (0: none); > 0 or nic.egress_rate > 0 "
                "runs the gateway model"),
       [](const Items& v, SimConfig* c) { c->nic.frames = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.frames); }},
      {KeySpec::Make("nic.ingress_rate", VT::kFloat)
           .Unit("frames/cycle")
           .Min(0, true)
           .Max(1)
           .Doc("arrival rate of internally generated ingress frames (Poisson)"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_rate = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.ingress_rate); }},
      {KeySpec::Make("nic.ingress_frame_bytes", VT::kInt)
           .Unit("bytes")
           .Min(22)
           .Max(9018)
           .Doc("size of internally generated ingress frames, FCS excluded"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_frame_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.ingress_frame_bytes); }},
      {KeySpec::Make("nic.bad_fcs_fraction", VT::kFloat)
           .Min(0)
           .Max(1)
           .Doc("share of internally generated ingress frames with a wrong FCS"),
       [](const Items& v, SimConfig* c) { c->nic.bad_fcs_fraction = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.bad_fcs_fraction); }},
      {KeySpec::Make("nic.egress_rate", VT::kFloat)
           .Unit("frames/node/cycle")
           .Min(0)
           .Max(1)
           .Doc("frames each compute node sends to the outside (Bernoulli per cycle)"),
       [](const Items& v, SimConfig* c) { c->nic.egress_rate = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.egress_rate); }},
      {KeySpec::Make("nic.egress_frame_bytes", VT::kInt)
           .Unit("bytes")
           .Min(22)
           .Max(9018)
           .Doc("size of egress frames, FCS excluded"),
       [](const Items& v, SimConfig* c) { c->nic.egress_frame_bytes = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.egress_frame_bytes); }},
      {KeySpec::Make("nic.egress_frames", VT::kInt)
           .Unit("frames")
           .Min(0)
           .Max(kCycleMax)
           .Doc("stop generating egress frames after this many (0: no cap)"),
       [](const Items& v, SimConfig* c) { c->nic.egress_frames = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.egress_frames); }},
      {KeySpec::Make("nic.notify_delay_cycles", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(kCycleMax)
           .Doc("delay from a node's failure or repair to the management node's notification"),
       [](const Items& v, SimConfig* c) { c->nic.notify_delay_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.notify_delay_cycles); }},
      {KeySpec::Make("nic.cpu_cycles_per_frame", VT::kInt)
           .Unit("cycles")
           .Min(0)
           .Max(kCycleMax)
           .Doc("> 0: the Fig. 1 baseline, each frame occupies the I/O node's CPU this long "
                "(one frame at a time); 0: the patent's NIC on the router"),
       [](const Items& v, SimConfig* c) { c->nic.cpu_cycles_per_frame = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.cpu_cycles_per_frame); }},
      {KeySpec::Make("nic.cpu_directions", VT::kEnum)
           .Allowed(Names(kCpuDirections))
           .Doc("the frames the Fig. 1 baseline's I/O CPU handles: both (ingress and egress, "
                "as the patent's Fig. 1) or ingress (inbound frames only)"),
       [](const Items& v, SimConfig* c) { c->nic.cpu_directions = FromName(kCpuDirections, v[0]); },
       [](const SimConfig& c) {
         return std::string(ToName(kCpuDirections, c.nic.cpu_directions));
       }},
      {KeySpec::Make("nic.retransmit", VT::kBool)
           .Doc("re-send lost frames from their source, as TCP would: ingress frames from the "
                "external switch, egress frames from their compute node"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.retransmit ? "true" : "false"); }},
      {KeySpec::Make("nic.retransmit_timeout_cycles", VT::kInt)
           .Unit("cycles")
           .Min(1)
           .Max(kCycleMax)
           .Doc("a lost frame is re-sent this long after its loss"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit_timeout_cycles = I64(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.retransmit_timeout_cycles); }},
      {KeySpec::Make("nic.retransmit_max", VT::kInt)
           .Min(1)
           .Max(1000)
           .Doc("tries per frame (the first included) before it counts as lost"),
       [](const Items& v, SimConfig* c) { c->nic.retransmit_max = I32(v[0]); },
       [](const SimConfig& c) { return std::to_string(c.nic.retransmit_max); }},
      {KeySpec::Make("nic.macs", VT::kString, Shape::kList)
           .Doc("per-node MACs over the default 02:00:00:00:HH:LL (node index in hex): "
                "[\"3G2=02:aa:00:00:00:01\"]"),
       [](const Items& v, SimConfig* c) {
         c->nic.macs.clear();
         for (const Scalar& s : v) c->nic.macs.push_back(Str(s));
       },
       [](const SimConfig& c) { return StrList(c.nic.macs); }},
      {KeySpec::Make("nic.ingress_pcap", VT::kString)
           .Doc("pcap capture (Ethernet) of ingress frames with timestamps, read streaming; "
                "replaces nic.frames; the run lasts until every frame is delivered, "
                "discarded or lost"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_pcap = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.ingress_pcap; }},
      {KeySpec::Make("nic.ingress_fcs", VT::kBool)
           .Doc("the capture's frames end in their FCS (checked: S31-S33); false: taken as "
                "good"),
       [](const Items& v, SimConfig* c) { c->nic.ingress_fcs = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.ingress_fcs ? "true" : "false"); }},
      {KeySpec::Make("nic.egress_pcap", VT::kString)
           .Doc("write the frames leaving through the NICs (with their FCS) to this pcap file"),
       [](const Items& v, SimConfig* c) { c->nic.egress_pcap = Str(v[0]); },
       [](const SimConfig& c) { return c.nic.egress_pcap; }},
      {KeySpec::Make("nic.pcap_cycles_per_second", VT::kFloat)
           .Unit("cycles/s")
           .Min(1)
           .Max(1e15)
           .Doc("capture time to cycles: a frame's cycle = seconds since the first frame x "
                "this"),
       [](const Items& v, SimConfig* c) { c->nic.pcap_cycles_per_second = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.nic.pcap_cycles_per_second); }},
      {KeySpec::Make("nic.internal_traffic", VT::kBool)
           .Doc("run the traffic.* synthetic traffic beside the external traffic"),
       [](const Items& v, SimConfig* c) { c->nic.internal_traffic = Bool(v[0]); },
       [](const SimConfig& c) { return std::string(c.nic.internal_traffic ? "true" : "false"); }},
  };
}

std::vector<Binding> Bindings() {
  std::vector<Binding> all = NetworkAndRouterBindings();
  for (auto* part :
       {&RoutingAndTrafficBindings, &MeasureBindings, &FaultRoutingBindings, &FidelityBindings,
        &RunBindings, &GatewayBindings, &NicBindings, &SssBindings}) {
    for (Binding& b : part()) all.push_back(std::move(b));
  }
  const SimConfig defaults;
  for (Binding& b : all) b.spec.default_text = b.show(defaults);
  return all;
}

}  // namespace

std::string_view TopologyName(TopologyKind t) {
  const TopologyEntry* e = FindTopology(t);
  return e == nullptr ? std::string_view("?") : e->name;
}
std::string_view SwitchingName(Switching s) { return ToName(kSwitchings, s); }
std::string_view InjectionName(InjectionKind i) { return ToName(kInjections, i); }
std::string_view MeasureModeName(MeasureMode m) { return ToName(kMeasureModes, m); }
std::string_view HeaderUnitsName(HeaderUnits h) { return ToName(kHeaderUnits, h); }
std::string_view DorTieName(DorTieRule t) { return ToName(kDorTies, t); }
std::string_view DorDatelineName(DorDateline d) { return ToName(kDorDatelines, d); }
std::string_view DuatoAtomicName(DuatoAtomic a) { return ToName(kDuatoAtomics, a); }
std::string_view DetourPolicyName(DetourPolicy d) { return ToName(kDetourPolicies, d); }

std::span<const std::string_view> SweepKeyOrder() { return kSweepOrder; }

config::Schema SimConfigSchema() {
  std::vector<KeySpec> keys;
  for (Binding& b : Bindings()) keys.push_back(std::move(b.spec));
  for (config::KeySpec& k : FaultKeySpecs()) keys.push_back(std::move(k));
  for (config::KeySpec& k : NicJobKeySpecs()) keys.push_back(std::move(k));
  for (config::KeySpec& k : BooksimKeySpecs()) keys.push_back(std::move(k));
  for (config::KeySpec& k : SssStructuredKeySpecs()) keys.push_back(std::move(k));
  for (config::KeySpec& k : WorkloadKeySpecs()) keys.push_back(std::move(k));
  for (config::KeySpec& k : SimModuleKeySpecs()) keys.push_back(std::move(k));
  return config::Schema(std::move(keys));
}

namespace {

// network.k against network.n, the node count, and the hot-spot node numbers.
void CheckNetwork(const config::ConfigValues& values, SimConfig* c,
                  std::vector<std::string>* errors) {
  const config::Value* k = values.Find("network.k");
  const config::Value* n = values.Find("network.n");
  const int dims = c->network.n;
  if (c->network.topology == TopologyKind::kGroup) return;  // MakeTopology checks it
  if (c->network.topology == TopologyKind::kGraph || c->network.topology == TopologyKind::kTree) {
    if (Status st = CheckMemory(*c); !st.ok()) {  // MakeTopology checks the rest
      const config::Value* at = values.Find("run.memory_limit");
      errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    }
    return;
  }
  if (k == nullptr) {
    c->network.k.assign(dims, SimConfig().network.k[0]);
  } else if (!k->is_list) {
    c->network.k.assign(dims, c->network.k[0]);
  } else if (static_cast<int>(k->items.size()) != dims) {
    errors->push_back(
        config::KeyError("network.k",
                         fmt::format("has {} radices but network.n = {}{} (give one int for "
                                     "every dimension, or a list of network.n ints)",
                                     k->items.size(), dims, n ? "" : " (the default)"),
                         k->origin)
            .message());
    return;
  }
  const TopologyKind kind = c->network.topology;
  if (kind != TopologyKind::kMesh && kind != TopologyKind::kTorus) {  // indirect: MakeTopology
    if (Status st = CheckMemory(*c); !st.ok()) {
      const config::Value* at = values.Find("run.memory_limit");
      if (at == nullptr) at = k ? k : n;
      errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    }
    return;
  }
  int64_t nodes = 1;
  for (int r : c->network.k) nodes = std::min(nodes * r, kMaxNodes + 1);
  if (nodes > kMaxNodes) {
    errors->push_back(config::KeyError("network.k",
                                       fmt::format("the network would have more than {} "
                                                   "nodes, the most ukai simulates",
                                                   kMaxNodes),
                                       k ? k->origin : n->origin)
                          .message());
    return;
  }
  // The router state index and the memory estimate: arithmetic only, so that a network too
  // large is refused at once (before any topology is built).
  const int ports = 2 * dims + 1;
  if (nodes > Fabric::MaxRouters(ports, c->router)) {
    errors->push_back(config::KeyError("network.k",
                                       fmt::format("{} nodes are too many for the router state "
                                                   "index with router.vcs = {} and "
                                                   "router.pe_vcs = {} (at most {})",
                                                   nodes, c->router.vcs, c->router.pe_vcs,
                                                   Fabric::MaxRouters(ports, c->router)),
                                       k   ? k->origin
                                       : n ? n->origin
                                           : config::Origin{})
                          .message());
    return;
  }
  if (Status st = CheckMemory(*c); !st.ok()) {
    const config::Value* at = values.Find("run.memory_limit");
    if (at == nullptr) at = k ? k : n;
    errors->push_back(at ? fmt::format("{} {}", st.message(), at->origin.Where()) : st.message());
    return;
  }
  if (const config::Value* hot = values.Find("traffic.hotspot_nodes")) {
    for (int node : c->traffic.hotspot_nodes) {
      if (node >= nodes) {
        errors->push_back(config::KeyError("traffic.hotspot_nodes",
                                           fmt::format("node {} does not exist (the network "
                                                       "has nodes 0..{})",
                                                       node, nodes - 1),
                                           hot->origin)
                              .message());
        break;
      }
    }
  }
}

// A swept injection parameter that the chosen injection process does not use.
void CheckUnusedSweeps(const config::ConfigValues& values, const SimConfig& c,
                       std::vector<std::string>* errors) {
  struct Rule {
    std::string_view key;
    InjectionKind needs;
  };
  for (const Rule& r : {Rule{"traffic.rate", InjectionKind::kBernoulli},
                        Rule{"traffic.interval", InjectionKind::kInterval}}) {
    const config::Value* v = values.Find(r.key);
    if (v != nullptr && v->items.size() > 1 && c.traffic.injection != r.needs) {
      errors->push_back(
          config::KeyError(r.key,
                           fmt::format("is swept but traffic.injection = \"{}\" "
                                       "does not use it (set traffic.injection "
                                       "= \"{}\")",
                                       InjectionName(c.traffic.injection), InjectionName(r.needs)),
                           v->origin)
              .message());
    }
  }
}

// What only the simulator knows, for one point on an already built topology.
Status CheckSupported(const SimConfig& c, const Topology& topology) {
  UKAI_RETURN_IF_ERROR(ValidateConfig(c));
  Result<const RoutingEntry*> routing = FindRoutingAlgorithm(c.routing.algorithm);
  if (!routing.ok()) return routing.status();
  if (c.faults.any()) {
    Result<FaultPlan> faults = PlanFaults(topology, c.faults, c.seed);
    if (!faults.ok()) return faults.status();
    // The routing judges the network with its cycle-0 faults, as Network::Create builds it.
    if (const auto* cube = dynamic_cast<const KaryNCube*>(&topology)) {
      KaryNCube faulty = *cube;
      faults->initial.ApplyTo(&faulty);
      UKAI_RETURN_IF_ERROR((*routing)->supports(faulty, c));
    }
  }
  UKAI_RETURN_IF_ERROR((*routing)->supports(topology, c));
  if (c.workload.active()) return CheckWorkload(c, topology);  // workload/run_workload.h
  if (c.nic.active()) {  // the gateway model's nodes and MACs (nic/gateway.h)
    Result<NicNodes> nic = ResolveNicConfig(c, topology);
    if (!nic.ok()) return nic.status();
  }
  if (c.sss.active()) return CheckSssConfig(c, topology);  // nic/sss_nic.h
  Result<std::unique_ptr<TrafficPattern>> pattern = MakePattern(topology, c.traffic);
  if (!pattern.ok()) return pattern.status();
  const int flits = static_cast<int>((int64_t{c.traffic.message_bytes} + c.router.flit_bytes - 1) /
                                     c.router.flit_bytes);
  Result<std::unique_ptr<InjectionProcess>> injection = MakeInjection(c.traffic, flits);
  return injection.ok() ? Status::Ok() : injection.status();
}

// Runs CheckSupported on every point; reports each distinct problem once, with the place
// of the key it names and the first point that has it.
void CheckPointsSupported(const config::ConfigValues& values, const std::vector<SimConfig>& points,
                          std::vector<std::string>* errors) {
  Result<std::unique_ptr<Topology>> topology = MakeTopology(points.front().network);
  std::vector<std::string> seen;
  for (size_t i = 0; i < points.size(); ++i) {
    const SimConfig& c = points[i];
    Status st = topology.ok() ? CheckSupported(c, **topology) : topology.status();
    if (st.ok() || std::find(seen.begin(), seen.end(), st.message()) != seen.end()) continue;
    seen.push_back(st.message());
    std::string where;
    // The key the simulator's error is about (Status::key()) gives the place in the file.
    if (const config::Value* v = st.key().empty() ? nullptr : values.Find(st.key())) {
      where = fmt::format(" {}", v->origin.Where());
    }
    std::string point;
    if (points.size() > 1) {
      point = fmt::format(" (point {} of {}: routing.algorithm = {}, traffic.pattern = {})", i + 1,
                          points.size(), c.routing.algorithm, c.traffic.pattern);
    }
    errors->push_back(fmt::format("{}{}{}", st.message(), where, point));
    if (!topology.ok()) break;
  }
}

}  // namespace

Result<std::vector<SimConfig>> ExpandSimConfigs(const config::ConfigValues& values) {
  const std::vector<Binding> bindings = Bindings();
  SimConfig base;
  struct Dim {
    const Binding* binding;
    const config::Value* value;
  };
  std::vector<Dim> dims;
  for (std::string_view key : kSweepOrder) {
    for (const Binding& b : bindings) {
      const config::Value* v = values.Find(key);
      if (b.spec.key == key && v != nullptr && v->items.size() > 1) dims.push_back({&b, v});
    }
  }
  for (const Binding& b : bindings) {
    const config::Value* v = values.Find(b.spec.key);
    if (v == nullptr) continue;
    b.set(b.spec.shape == Shape::kSweep ? Items{v->items[0]} : v->items, &base);
  }
  std::vector<std::string> errors;
  ReadFaultConfig(values, &base.faults, &errors);
  ReadNicJobConfig(values, &base.nic, &errors);
  ReadBooksimModelConfig(values, &base);
  ReadSssStructured(values, &base, &errors);
  ReadWorkloadConfig(values, &base.workload, &errors);
  ReadSimModuleConfig(values, &base.sim_module, &errors);
  CheckNetwork(values, &base, &errors);
  CheckUnusedSweeps(values, base, &errors);
  size_t total = 1;
  for (const Dim& d : dims) total = std::min(total * d.value->items.size(), kMaxPoints + 1);
  if (total > kMaxPoints && !dims.empty()) {
    errors.push_back(config::KeyError(dims.back().binding->spec.key,
                                      fmt::format("the sweep has more than {} points", kMaxPoints),
                                      dims.back().value->origin)
                         .message());
  }
  if (!errors.empty()) return config::ErrorList(errors);

  // Odometer over the swept keys; the last one varies fastest.
  std::vector<SimConfig> points;
  std::vector<size_t> index(dims.size(), 0);
  for (;;) {
    SimConfig point = base;
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i].binding->set(Items{dims[i].value->items[index[i]]}, &point);
    }
    points.push_back(std::move(point));
    size_t i = dims.size();
    while (i > 0 && ++index[i - 1] == dims[i - 1].value->items.size()) index[--i] = 0;
    if (i == 0) break;
  }
  CheckPointsSupported(values, points, &errors);
  if (!errors.empty()) return config::ErrorList(errors);
  return points;
}

std::string DescribeSimLists(bool markdown) {
  std::string out;
  const std::string sweep = fmt::format("{}", fmt::join(kSweepOrder, ", "));
  if (markdown) {
    out += fmt::format("Sweep keys, outermost first: {}.\n", sweep);
    out += "\n| routing.algorithm | default clock (MHz) | description |\n|---|---|---|\n";
    for (const RoutingEntry& e : RoutingAlgorithms()) {
      out += fmt::format("| `{}` | {} | {} |\n", e.name, e.default_clock_mhz, e.doc);
    }
    out += "\n| traffic.pattern | description |\n|---|---|\n";
    for (const PatternEntry& e : TrafficPatterns()) {
      out += fmt::format("| `{}` | {} |\n", e.name, e.doc);
    }
    return out;
  }
  out += fmt::format("Sweep keys may be lists; every combination runs, outermost first:\n  {}\n\n",
                     sweep);
  out += "Routing algorithms (routing.algorithm):\n";
  for (const RoutingEntry& e : RoutingAlgorithms()) {
    out += fmt::format("  {:<10} {} (default clock {} MHz)\n", e.name, e.doc, e.default_clock_mhz);
  }
  out += "\nTraffic patterns (traffic.pattern):\n";
  for (const PatternEntry& e : TrafficPatterns()) {
    out += fmt::format("  {:<10} {}\n", e.name, e.doc);
  }
  return out;
}

}  // namespace ukai::sim
