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
#include "sim/topology/fault_spec.h"

namespace ukai::sim {

enum class TopologyKind { kMesh, kTorus, kGroup, kCMesh, kFlatFly, kFatTree, kDragonfly };
enum class Switching { kWormhole, kVirtualCutThrough };
enum class InjectionKind { kBernoulli, kInterval };
enum class MeasureMode { kMessages, kCycles };
// The paper's router as options (docs/simulator.md, "Router options"). DOR on a torus: how
// a tie (destination exactly k/2 away) goes, and which dateline VC scheme it uses.
enum class DorTieRule { kRandom, kParity, kPlus };
enum class DorDateline { kShared, kSplit };
// Duato with wormhole: which VCs a router hands to a new message only once they are empty.
enum class DuatoAtomic { kAdaptive, kAll, kEscape, kNone };
// Header units: a private header pipeline per input VC, or one address decoder and one
// output arbiter per input port shared by its VCs (the paper's Fig. 6).
enum class HeaderUnits { kPerVc, kPerPort };

struct NetworkConfig {
  TopologyKind topology = TopologyKind::kTorus;
  int n = 2;                      // dimensions, >= 1
  std::vector<int> k = {10, 10};  // radix per dimension (size n), each >= 2
  int groups = 6;                 // group topology: groups G (ring length), >= 1
  int group_size = 4;             // group topology: nodes S per group (fully connected)
  // Indirect topologies (terminals on routers: topology/switch_topology.h).
  int concentration = 4;  // cmesh, flatfly: terminals per router, >= 1
  int dragonfly_p = 2;    // dragonfly: terminals per router, >= 1
  int dragonfly_a = 0;    // dragonfly: routers per group; 0: 2 * dragonfly_p
  int dragonfly_h = 0;    // dragonfly: global channels per router; 0: dragonfly_p
};

struct RouterConfig {
  int vcs = 4;              // virtual channels per network port
  int vc_buffer_flits = 8;  // depth of each VC buffer, flits
  int pe_vcs = 2;           // VCs of the PE (injection) interface
  Switching switching = Switching::kWormhole;
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
};

enum class DetourSwitchKind { kAware, kDetector };

struct RoutingConfig {
  std::string algorithm = "dor";  // a name in the routing registry (routing/registry.h)
  // The paper's router as options (docs/simulator.md, "Router options").
  DorTieRule dor_tie = DorTieRule::kRandom;
  DorDateline dor_dateline = DorDateline::kShared;
  DuatoAtomic duato_atomic = DuatoAtomic::kAdaptive;
  // Fault tolerance and deadlock recovery (updown, detour-ud, detour-nf):
  int root = -1;                  // up*/down* root node number; -1: lowest healthy node
  int64_t timeout_cycles = 128;   // detour-ud: blocking time that starts deadlock recovery
  int fault_region_distance = 2;  // detour-ud: nodes within this distance of a fault
  DetourSwitchKind detour_switch = DetourSwitchKind::kAware;  // dor-detour: where to switch
};

struct TrafficConfig {
  std::string pattern =
      "uniform";           // uniform transpose bitcomp bitrev shuffle tornado neighbor hotspot
  int message_bytes = 64;  // payload per message; flits = ceil(bytes / flit_bytes)
  InjectionKind injection = InjectionKind::kBernoulli;
  double rate = 0.1;                     // bernoulli: offered flits / node / cycle, (0, 1]
  int64_t interval = 100;                // interval: cycles between messages of one node, >= 1
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
};

// Resource bounds of a point (experiment/memory_budget.h).
struct RunConfig {
  int64_t memory_limit = 0;  // bytes a point may use; 0: half of the physical memory
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
  NicConfig nic;  // nic.* (nic/nic_config.h): the gateway model
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_SIM_CONFIG_H_
