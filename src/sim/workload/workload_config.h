// WorkloadConfig: the `workload.*` keys of the flit-level simulator (docs/workloads.md,
// docs/config.md): which workload drives the network -- the synthetic traffic.* patterns
// (the default), a netrace trace or an OTF2 archive -- and how a trace is mapped onto the
// network. Plain values, filled by experiment/workload_config.h.
//
// Units: cycles are router cycles; sizes are bytes.
#ifndef UKAI_SIM_WORKLOAD_WORKLOAD_CONFIG_H_
#define UKAI_SIM_WORKLOAD_WORKLOAD_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ukai::sim {

enum class WorkloadKind { kSynthetic, kNetrace, kOtf2 };
// How an OTF2 collective becomes point-to-point messages (workload/collectives.h).
enum class CollectiveAlgorithm { kAuto, kBinomial, kRing, kRecursiveDoubling };
// OTF2: whether the time between a rank's communication calls is replayed.
enum class ComputeMode { kTrace, kNone };
// netrace: trace node -> network node; OTF2: rank -> network node.
enum class NodeMapKind { kLinear, kRandom, kList };

struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::kSynthetic;
  // The trace: a netrace .tra.bz2 file, or an OTF2 anchor file (traces.otf2). A relative
  // path in a config file is taken from the config file's directory.
  std::string file;
  std::string file_where;  // where workload.file was set (for errors)

  // netrace.
  int region = 0;                               // start region (the replay runs from it to the end)
  bool dependencies = true;                     // a packet waits for the packets it depends on
  double cycle_scale = 1.0;                     // trace cycles per network cycle (> 0)
  NodeMapKind node_map = NodeMapKind::kLinear;  // "row-major" (kLinear) or a list
  std::vector<int> node_list;                   // kList: network node of trace node i

  // OTF2.
  int64_t eager_bytes = 65536;  // a send up to this size leaves at once (else rendezvous)
  CollectiveAlgorithm collective_algorithm = CollectiveAlgorithm::kAuto;
  ComputeMode compute = ComputeMode::kTrace;
  NodeMapKind rank_map = NodeMapKind::kLinear;  // linear, random (with seed) or a list
  std::vector<int> rank_list;                   // kList: network node of rank i

  // Both trace kinds.
  int64_t packet_bytes = 4096;  // largest packet a message is cut into
  int64_t control_bytes = 8;    // a rendezvous request, a barrier token, a 0-byte message
  // Whether measure.max_cycles was set: a trace replay then stops there; otherwise it runs to
  // the trace's end (a finite trace always ends; the watchdog still catches a deadlock).
  bool capped = false;

  bool active() const { return kind != WorkloadKind::kSynthetic; }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_WORKLOAD_CONFIG_H_
