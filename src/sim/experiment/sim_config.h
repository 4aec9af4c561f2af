// SimConfig: the typed configuration of one simulation point (LevelDB Options style: every
// field has its default written here). The flit-level model's schema
// (experiment/config_schema.h) fills it from a config read by the front door
// (experiment/front_door.h), and `ukai sim describe` prints the same schema; RunPoint()
// (experiment/run.h) consumes it. Sweeps (a list for traffic.rate, traffic.interval or
// traffic.message_bytes, ...) are expanded into one SimConfig per point.
//
// Units: cycles are router clock cycles; sizes are bytes unless the name says flits.
// Thread safety: a plain value.
#ifndef UKAI_SIM_EXPERIMENT_SIM_CONFIG_H_
#define UKAI_SIM_EXPERIMENT_SIM_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/nic/nic_config.h"
#include "sim/nic/sss_config.h"
#include "sim/topology/fault_spec.h"
#include "sim/topology/graph_spec.h"
#include "sim/workload/sim_module_config.h"
#include "sim/workload/workload_config.h"

namespace ukai::sim {

enum class TopologyKind {
  kMesh,
  kTorus,
  kGroup,
  kGraph,
  kTree,
  kCMesh,
  kFlatFly,
  kFatTree,
  kDragonfly
};
// kVctSaf: virtual cut-through that falls back to store-and-forward (docs/sss.md): a head
// that finds no free output when its hop pipeline ends waits until its whole message is in
// the buffer. kStoreAndForward: every head waits for its whole message at every router.
enum class Switching { kWormhole, kVirtualCutThrough, kVctSaf, kStoreAndForward };
// router.flow_control (docs/sss.md, "Flow control"): kAdvance: credits announce room before a
// flit is sent and travel beside the data (no channel time). kInBand: the SSS-CORE paper's
// alternative, flow control during the packet: every data flit that crosses a channel makes
// the receiver answer with a flow-control symbol on the reverse channel in the next cycle,
// which then carries no data.
enum class FlowControl { kAdvance, kInBand };
enum class InjectionKind { kBernoulli, kInterval, kOnOff };
// Whether the injection process takes its load from traffic.rate (bernoulli and on_off).
inline bool UsesRate(InjectionKind k) { return k != InjectionKind::kInterval; }
// kBooksim / kBooksimThroughput: BookSim2's method (sim_type = latency / throughput):
// warm-up sample periods, sample periods until three in a row converge, the latency
// threshold for an unstable run, then the drain of measured packets (docs/booksim.md).
enum class MeasureMode { kMessages, kCycles, kBooksim, kBooksimThroughput };
// The router's timing: ukai's (router.hop_cycles per hop) or BookSim2's iq router
// (stage delays, 1-cycle injection and ejection channels: docs/booksim.md).
enum class RouterModel { kUkai, kBooksim };
// How a routed head gets an output VC (router.vc_allocator): kMaxCredit, ukai's selection
// (router/selection.h: the lowest tier with a free VC, the most credits within it);
// kIslip, BookSim2's islip with one iteration (every free candidate VC is requested, tiers
// ignored: each output VC grants one requesting input VC round-robin, each input VC accepts
// one grant round-robin over its router's output VCs); kSeparableInputFirst, BookSim2's
// separable_input_first (each input VC requests one free candidate VC: the best tier,
// round-robin within it; each output VC grants one request round-robin). kAuto: kIslip
// with router.model = "booksim" (BookSim2's default), else kMaxCredit.
enum class VcAllocator { kAuto, kMaxCredit, kIslip, kSeparableInputFirst };
// The paper's router as options (docs/simulator.md, "Router options"). DOR on a torus: how
// a tie (destination exactly k/2 away) goes, and which dateline VC scheme it uses.
enum class DorTieRule { kRandom, kParity, kPlus };
enum class DorDateline { kShared, kSplit, kBooksim };
// Duato with wormhole: which VCs a router hands to a new message only once they are empty.
enum class DuatoAtomic { kAdaptive, kAll, kEscape, kNone };
// routing.min_adapt_candidates: kAll: min_adapt offers the adaptive VCs toward every
// unfinished dimension; kBooksim: as BookSim2's min_adapt_mesh / min_adapt_torus run, only
// toward the lowest unfinished dimension (its OutputSet is a std::set ordered by priority
// alone, so of several ranges of one priority only the first is kept), on a torus on VC 3
// alone.
enum class MinAdaptCandidates { kAll, kBooksim };
// routing.dragonfly_vcs: kSplit: the dragonfly's routings (min, ugal) split router.vcs into
// their VC classes (class c: VCs c*V/C .. (c+1)*V/C - 1), a terminal injects on class 0 and
// a router ejects on every VC; kBooksim: as BookSim2's min_dragonflynew / ugal_dragonflynew
// run: class c on VC c alone whatever router.vcs says, a terminal injects on any VC and a
// router ejects on the VC of the message's class.
enum class DragonflyVcs { kSplit, kBooksim };
// Header units: a private header pipeline per input VC, or one address decoder and one
// output arbiter per input port shared by its VCs (the paper's Fig. 6).
enum class HeaderUnits { kPerVc, kPerPort };

struct NetworkConfig {
  TopologyKind topology = TopologyKind::kTorus;
  int n = 2;                      // dimensions, >= 1
  std::vector<int> k = {10, 10};  // radix per dimension (size n), each >= 2
  int groups = 6;                 // group topology: groups G (ring length), >= 1
  int group_size = 4;             // group topology: nodes S per group (fully connected)
  // Graph topology (topology/graph.h, docs/sss.md): a BookSim2 anynet file (the path as
  // resolved against the config file's folder), or the TOML lists network.nodes,
  // network.switches and network.links.
  std::string file;
  GraphSpec graph;
  // Tree topology: levels of switches of `tree_arity` children each; the link from a switch
  // to its parent is tree_upper_bandwidth parallel channels.
  int tree_arity = 4;
  int tree_levels = 3;
  int tree_upper_bandwidth = 1;
  // Indirect topologies (terminals on routers: topology/switch_topology.h).
  int concentration = 4;  // cmesh, flatfly: terminals per router, >= 1
  int dragonfly_p = 2;    // dragonfly: terminals per router, >= 1
  int dragonfly_a = 0;    // dragonfly: routers per group; 0: 2 * dragonfly_p
  int dragonfly_h = 0;    // dragonfly: global channels per router; 0: dragonfly_p
  // dragonfly: cycles of a local (in-group) and of a global channel; 0: router.link_cycles.
  int dragonfly_local_cycles = 0;
  int dragonfly_global_cycles = 0;
};

struct RouterConfig {
  int vcs = 4;              // virtual channels per network port
  int vc_buffer_flits = 8;  // depth of each VC buffer, flits
  int pe_vcs = 2;           // VCs of the PE (injection) interface
  Switching switching = Switching::kWormhole;
  FlowControl flow_control = FlowControl::kAdvance;
  int hop_cycles = 5;           // header pipeline per router: latch, decode, 2x arb, transfer
  int link_cycles = 1;          // router-to-router channel delay
  int table_lookup_cycles = 5;  // extra header delay when a routing table is read
  int flit_bytes = 4;           // physical channel width (32 bits in the spec)
  double clock_mhz = 0;         // 0: the routing algorithm's synthesized clock (Table 1)
  // The paper's router as options (docs/simulator.md, "Router options").
  int eject_flits = 1;           // flits/cycle the ejection port hands to the PE
  int switch_bubble_cycles = 0;  // idle cycles before an output port changes message
  HeaderUnits header_units = HeaderUnits::kPerVc;
  int table_read_ports = 0;  // routing-table reads a router starts per cycle; 0: no limit
  // router.model = "booksim": BookSim2's iq router stages (cycles each) replace hop_cycles.
  RouterModel model = RouterModel::kUkai;
  int routing_delay = 1, vc_alloc_delay = 1, sw_alloc_delay = 1;
  int st_prepare_delay = 0, st_final_delay = 1;
  bool speculative = false;  // switch allocation beside VC allocation
  VcAllocator vc_allocator = VcAllocator::kAuto;
  // router.model = "booksim": cycles a credit waits in the router that receives it before
  // it counts (BookSim2 credit_delay), after its credit channel, as long as the data channel.
  int credit_delay = 0;
};

// The header delay per router of router.model = "booksim": routing, VC and switch
// allocation (in parallel when speculative), switch traversal; at least 1.
inline int BooksimHopCycles(const RouterConfig& r) {
  const int alloc =
      r.speculative ? (r.vc_alloc_delay > r.sw_alloc_delay ? r.vc_alloc_delay : r.sw_alloc_delay)
                    : r.vc_alloc_delay + r.sw_alloc_delay;
  const int hop = r.routing_delay + alloc + r.st_prepare_delay + r.st_final_delay;
  return hop < 1 ? 1 : hop;
}
// Cycles router.model = "booksim" adds to every message: its injection and ejection
// channels of one cycle each.
inline constexpr int kBooksimEndpointCycles = 2;
// router.model = "booksim": the switch traversal stages (st_prepare + st_final, at most
// BooksimHopCycles() - 1). BookSim2 runs them after switch allocation, when the flit has
// left its input buffer, so the router counts them on the channel a flit leaves by
// (router/fabric.h): the next head of that buffer starts its pipeline at once, and a body
// flit goes as soon as it has arrived and has a credit.
inline int BooksimTraversalCycles(const RouterConfig& r) {
  const int st = r.st_prepare_delay + r.st_final_delay;
  const int hop = BooksimHopCycles(r);
  return st < hop - 1 ? st : hop - 1;
}

enum class DetourSwitchKind { kAware, kDetector };
// routing.source_routes: shortest paths, up*/down* paths, or auto (shortest on a network
// whose switches form no cycle, up*/down* otherwise).
enum class SourceRouteMode { kAuto, kShortest, kUpDown };

struct RoutingConfig {
  std::string algorithm = "dor";  // a name in the routing registry (routing/registry.h)
  // The paper's router as options (docs/simulator.md, "Router options").
  DorTieRule dor_tie = DorTieRule::kRandom;
  DorDateline dor_dateline = DorDateline::kShared;
  DuatoAtomic duato_atomic = DuatoAtomic::kAdaptive;
  MinAdaptCandidates min_adapt_candidates = MinAdaptCandidates::kAll;
  // valiant: a message whose path to its intermediate node passes its destination goes on
  // to the intermediate node first, on every VC at the destination (BookSim2's valiant_mesh
  // and valiant_torus); false: it is delivered there.
  bool valiant_via_destination = false;
  DragonflyVcs dragonfly_vcs = DragonflyVcs::kSplit;
  // Fault tolerance and deadlock recovery (updown, detour-ud, detour-nf):
  int root = -1;                  // up*/down* root node number; -1: lowest healthy node
  int64_t timeout_cycles = 128;   // detour-ud: blocking time that starts deadlock recovery
  int fault_region_distance = 2;  // detour-ud: nodes within this distance of a fault
  DetourSwitchKind detour_switch = DetourSwitchKind::kAware;  // dor-detour: where to switch
  // source (routing/source_routing.h): how the route tables are computed, how many routes
  // a pair may use, and FIFO order between every pair of nodes.
  SourceRouteMode source_routes = SourceRouteMode::kAuto;
  int source_paths = 4;
  bool in_order = false;
};

struct TrafficConfig {
  std::string pattern =
      "uniform";           // uniform transpose bitcomp bitrev shuffle tornado neighbor hotspot
  int message_bytes = 64;  // payload per message; flits = ceil(bytes / flit_bytes)
  // A mix of message sizes (BookSim2's packet_size list with packet_size_rate): each
  // message takes size_mix_flits[i] flits with probability size_mix_weights[i] / their sum
  // (equal weights when none are given); empty: every message has message_bytes. Only with
  // BookSim2's measurement (measure.mode = booksim / booksim_throughput).
  std::vector<int> size_mix_flits;
  std::vector<double> size_mix_weights;
  InjectionKind injection = InjectionKind::kBernoulli;
  double rate = 0.1;       // bernoulli, on_off: offered flits / node / cycle, (0, 1]
  int64_t interval = 100;  // interval: cycles between messages of one node, >= 1
  // on_off (BookSim2's OnOffInjectionProcess): per node and cycle an off node turns on with
  // probability burst_alpha, an on node turns off with burst_beta, and an on node then
  // creates a message with probability burst_r1. One of the three may be < 0: it follows
  // from the others and the message rate p = rate / flits (p = r1 alpha / (alpha + beta)).
  double burst_alpha = 0.5;
  double burst_beta = 0.5;
  double burst_r1 = -1.0;
  std::vector<int> hotspot_nodes = {0};  // hotspot: the hot destinations
  double hotspot_fraction = 0.1;         // hotspot: share of messages sent to a hot node
  int source_queue = 0;  // messages a PE may hold (queued + being sent); 0: unbounded
};

struct MeasureConfig {
  MeasureMode mode = MeasureMode::kMessages;
  int64_t warmup_messages = 3000;   // messages mode: deliveries skipped network-wide
  int64_t measure_messages = 4000;  // messages mode: deliveries measured after warm-up
  int64_t warmup_cycles = 10000;    // cycles mode: cycles before the first sample window
  int64_t sample_cycles = 10000;    // cycles mode: length of one sample window
  double convergence = 0.02;        // cycles mode: relative change of mean latency to stop
  int64_t max_cycles = 2000000;     // both modes: cap; reaching it marks the point saturated
  int64_t watchdog_cycles = 20000;  // deadlock watchdog: no flit moved for this long
  // booksim modes (BookSim2's warmup_periods, max_samples, latency_thres, stopping_thres,
  // acc_stopping_thres; the sample period is sample_cycles).
  int64_t warmup_periods = 3;
  int64_t max_samples = 10;
  double latency_threshold = 500;  // cycles; < 0: none
  double stopping_threshold = 0.05;
  double accepted_stopping_threshold = 0.05;
};

// Resource bounds of a point (experiment/memory_budget.h).
// Parallel simulation (engine/partition.h): how the network is cut into partitions.
enum class PartitionShape { kSlab, kBlock };
class RankGroup;  // engine/rank_group.h

struct RunConfig {
  int64_t memory_limit = 0;  // bytes a point may use; 0: half of the physical memory
  // Parallel simulation (docs/simulator.md, "Parallel simulation"): partitions evaluated
  // by this many threads per process (0: one per core this process may run on), cut in
  // this shape, each with at least partition_min_nodes nodes (fewer partitions otherwise).
  int threads = 1;
  PartitionShape partition = PartitionShape::kSlab;
  int partition_min_nodes = 64;
  // The MPI ranks the network is split across: set by the program that joined the MPI
  // job (`ukai sim run` under mpirun), not a config key; null: this process alone. Not
  // owned; outlives every point run with it.
  RankGroup* ranks = nullptr;
};

struct SimConfig {
  NetworkConfig network;
  RouterConfig router;
  RoutingConfig routing;
  TrafficConfig traffic;
  MeasureConfig measure;
  uint64_t seed = 1;
  FaultConfig faults;  // faults.* (topology/fault_spec.h)

  RunConfig run;
  NicConfig nic;               // nic.* (nic/nic_config.h): the gateway model
  SssConfig sss;               // the SSS-CORE NIC model's keys (nic/sss_config.h, docs/sss.md)
  WorkloadConfig workload;     // workload.* (workload/workload_config.h): trace replay
  SimModuleConfig sim_module;  // sim.* (workload/sim_module_config.h): the runtime's sim module
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_SIM_CONFIG_H_
