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
#include "sim/experiment/config_checks.h"
#include "sim/experiment/fault_config.h"
#include "sim/experiment/gateway_keys.h"
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
constexpr EnumName<Switching> kSwitchings[] = {{Switching::kWormhole, "wormhole"},
                                               {Switching::kVirtualCutThrough, "vct"},
                                               {Switching::kVctSaf, "vct-saf"},
                                               {Switching::kStoreAndForward, "saf"}};
constexpr EnumName<FlowControl> kFlowControls[] = {{FlowControl::kAdvance, "advance"},
                                                   {FlowControl::kInBand, "in-band"}};
constexpr EnumName<InjectionKind> kInjections[] = {{InjectionKind::kBernoulli, "bernoulli"},
                                                   {InjectionKind::kInterval, "interval"},
                                                   {InjectionKind::kOnOff, "on_off"}};
constexpr EnumName<MeasureMode> kMeasureModes[] = {
    {MeasureMode::kMessages, "messages"},
    {MeasureMode::kCycles, "cycles"},
    {MeasureMode::kBooksim, "booksim"},
    {MeasureMode::kBooksimThroughput, "booksim_throughput"}};

constexpr EnumName<DorTieRule> kDorTies[] = {
    {DorTieRule::kRandom, "random"}, {DorTieRule::kParity, "parity"}, {DorTieRule::kPlus, "plus"}};
constexpr EnumName<DorDateline> kDorDatelines[] = {{DorDateline::kShared, "shared"},
                                                   {DorDateline::kSplit, "split"},
                                                   {DorDateline::kBooksim, "booksim"}};
constexpr EnumName<HeaderUnits> kHeaderUnits[] = {{HeaderUnits::kPerVc, "per_vc"},
                                                  {HeaderUnits::kPerPort, "per_port"}};
constexpr EnumName<PartitionShape> kPartitionShapes[] = {{PartitionShape::kSlab, "slab"},
                                                         {PartitionShape::kBlock, "block"}};
constexpr EnumName<DuatoAtomic> kDuatoAtomics[] = {{DuatoAtomic::kAdaptive, "adaptive"},
                                                   {DuatoAtomic::kAll, "all"},
                                                   {DuatoAtomic::kEscape, "escape"},
                                                   {DuatoAtomic::kNone, "none"}};
constexpr EnumName<MinAdaptCandidates> kMinAdaptCandidates[] = {
    {MinAdaptCandidates::kAll, "all"}, {MinAdaptCandidates::kBooksim, "booksim"}};
constexpr EnumName<DragonflyVcs> kDragonflyVcs[] = {{DragonflyVcs::kSplit, "split"},
                                                    {DragonflyVcs::kBooksim, "booksim"}};

template <typename T>
std::string NumberList(const std::vector<T>& v) {
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
       [](const SimConfig& c) { return NumberList(c.network.k); }},
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
      {KeySpec::Make("router.flow_control", VT::kEnum)
           .Allowed(Names(kFlowControls))
           .Doc("advance: credits announce room before a flit is sent, beside the data; "
                "in-band: flow control during the packet (the SSS-CORE paper's alternative): "
                "each flit crossing a channel costs the reverse channel its next cycle, which "
                "carries the flow-control symbol instead of data (docs/sss.md)"),
       [](const Items& v, SimConfig* c) { c->router.flow_control = FromName(kFlowControls, v[0]); },
       [](const SimConfig& c) { return std::string(FlowControlName(c.router.flow_control)); }},
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
      {KeySpec::Make("traffic.size_mix_flits", VT::kInt, Shape::kList)
           .Min(1)
           .Max(32767)
           .Doc("a mix of message sizes in flits (BookSim2's packet_size list), one drawn per "
                "message; with BookSim2's measurement only; empty: traffic.message_bytes"),
       [](const Items& v, SimConfig* c) {
         c->traffic.size_mix_flits.clear();
         for (const Scalar& s : v) c->traffic.size_mix_flits.push_back(I32(s));
       },
       [](const SimConfig& c) { return NumberList(c.traffic.size_mix_flits); }},
      {KeySpec::Make("traffic.size_mix_weights", VT::kFloat, Shape::kList)
           .Min(0, /*open=*/true)
           .Doc("the sizes' weights (BookSim2's packet_size_rate), one per size; empty: equal"),
       [](const Items& v, SimConfig* c) {
         c->traffic.size_mix_weights.clear();
         for (const Scalar& s : v) c->traffic.size_mix_weights.push_back(F64(s));
       },
       [](const SimConfig& c) { return NumberList(c.traffic.size_mix_weights); }},
      {KeySpec::Make("traffic.injection", VT::kEnum)
           .Allowed(Names(kInjections))
           .Doc("bernoulli: a message starts with probability rate/flits each cycle; "
                "interval: one message every traffic.interval cycles per node; on_off: "
                "bursts, BookSim2's on/off process (traffic.burst_alpha, _beta, _r1)"),
       [](const Items& v, SimConfig* c) { c->traffic.injection = FromName(kInjections, v[0]); },
       [](const SimConfig& c) { return std::string(InjectionName(c.traffic.injection)); }},
      {KeySpec::Make("traffic.rate", VT::kFloat, Shape::kSweep)
           .Unit("flits/node/cycle")
           .Min(0, /*open=*/true)
           .Max(1)
           .Doc("offered load of bernoulli and on_off injection"),
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
      {KeySpec::Make("traffic.burst_alpha", VT::kFloat)
           .Min(-1)
           .Max(1)
           .Doc("on_off injection: probability per cycle that an off node turns on; < 0: "
                "from burst_beta, burst_r1 and the rate"),
       [](const Items& v, SimConfig* c) { c->traffic.burst_alpha = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.traffic.burst_alpha); }},
      {KeySpec::Make("traffic.burst_beta", VT::kFloat)
           .Min(-1)
           .Max(1)
           .Doc("on_off injection: probability per cycle that an on node turns off; < 0: from "
                "burst_alpha, burst_r1 and the rate"),
       [](const Items& v, SimConfig* c) { c->traffic.burst_beta = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.traffic.burst_beta); }},
      {KeySpec::Make("traffic.burst_r1", VT::kFloat)
           .Min(-1)
           .Max(1)
           .Doc("on_off injection: probability that an on node creates a message in a cycle; "
                "< 0 (default): rate / flits x (alpha + beta) / alpha"),
       [](const Items& v, SimConfig* c) { c->traffic.burst_r1 = F64(v[0]); },
       [](const SimConfig& c) { return Num(c.traffic.burst_r1); }},
      {KeySpec::Make("traffic.hotspot_nodes", VT::kInt, Shape::kList)
           .Min(0)
           .Max(kKaryNCubeMaxNodes - 1)
           .Doc("hotspot pattern: the hot destination node numbers (< number of nodes)"),
       [](const Items& v, SimConfig* c) {
         c->traffic.hotspot_nodes.clear();
         for (const Scalar& s : v) c->traffic.hotspot_nodes.push_back(I32(s));
       },
       [](const SimConfig& c) { return NumberList(c.traffic.hotspot_nodes); }},
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
           .Doc("dor on a torus: shared (every VC the dateline order allows), split (one "
                "fixed half of the VCs per (current, destination)) or booksim (BookSim2's "
                "dim_order_torus: the upper half for a message that wraps in the dimension, the "
                "lower half otherwise, fixed where it enters the dimension)"),
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
      {KeySpec::Make("routing.min_adapt_candidates", VT::kEnum)
           .Allowed(Names(kMinAdaptCandidates))
           .Doc("min_adapt: all (adaptive VCs toward every unfinished dimension) or booksim "
                "(as BookSim2's code runs: toward the lowest unfinished dimension only, on a "
                "torus VC 3 alone; the BookSim reader's choice, docs/booksim.md)"),
       [](const Items& v, SimConfig* c) {
         c->routing.min_adapt_candidates = FromName(kMinAdaptCandidates, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kMinAdaptCandidates, c.routing.min_adapt_candidates));
       }},
      {KeySpec::Make("routing.valiant_via_destination", VT::kBool)
           .Doc("valiant: a message whose path to its intermediate node passes its destination "
                "goes on to the intermediate first, on every VC at the destination (BookSim2's "
                "valiant_mesh / valiant_torus; the BookSim reader sets it); false: delivered "
                "there"),
       [](const Items& v, SimConfig* c) {
         c->routing.valiant_via_destination = std::get<bool>(v[0]);
       },
       [](const SimConfig& c) {
         return std::string(c.routing.valiant_via_destination ? "true" : "false");
       }},
      {KeySpec::Make("routing.dragonfly_vcs", VT::kEnum)
           .Allowed(Names(kDragonflyVcs))
           .Doc("dragonfly min and ugal: split (router.vcs divided among the VC classes; "
                "terminals inject on class 0, routers eject on every VC) or booksim (class c "
                "on VC c alone whatever router.vcs says, injection on any VC, ejection on the "
                "class's VC: BookSim2's min_dragonflynew / ugal_dragonflynew; the BookSim "
                "reader's choice, docs/booksim.md)"),
       [](const Items& v, SimConfig* c) {
         c->routing.dragonfly_vcs = FromName(kDragonflyVcs, v[0]);
       },
       [](const SimConfig& c) {
         return std::string(ToName(kDragonflyVcs, c.routing.dragonfly_vcs));
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
           .Max(kKaryNCubeMaxNodes - 1)
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
std::string_view FlowControlName(FlowControl f) { return ToName(kFlowControls, f); }
std::string_view InjectionName(InjectionKind i) { return ToName(kInjections, i); }
std::string_view MeasureModeName(MeasureMode m) { return ToName(kMeasureModes, m); }
std::string_view HeaderUnitsName(HeaderUnits h) { return ToName(kHeaderUnits, h); }
std::string_view DorTieName(DorTieRule t) { return ToName(kDorTies, t); }
std::string_view DorDatelineName(DorDateline d) { return ToName(kDorDatelines, d); }
std::string_view DuatoAtomicName(DuatoAtomic a) { return ToName(kDuatoAtomics, a); }

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
