// The optical full-mesh machine with 1-hop relay links (spec/fullmesh-relay.md): its
// configuration, its communicators and the operations of a workload.
//
// Nodes are numbered 0..N-1 (the document's node k is our node k-1). Times are in
// microseconds, sizes in bytes, bandwidths in Gb/s (10^9 bit/s) per link and direction.
// Thread safety: plain values.
#ifndef UKAI_SIM_FULLMESH_FULLMESH_TYPES_H_
#define UKAI_SIM_FULLMESH_FULLMESH_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ukai::sim::fullmesh {

// Where a relay turns data around; fixes the whole 1-hop latency T1 (not an addition to T0).
enum class RelayKind {
  kMemory,        // through processor/memory (embodiments 1 and 4): 4 us
  kSwitch,        // through the distributed switch + relay unit (embodiments 2 and 3): 2.1 us
  kSwitchReduce,  // reduce unit inside the switch (embodiment 5): 2.4 us
};

// How a relay forwards its part.
enum class RelayMode {
  kPipelined,        // forwards chunk by chunk while still receiving (default)
  kStoreAndForward,  // holds its whole part before forwarding
};

// Which relays the controller takes.
enum class Policy {
  kFixedK,     // embodiment 3: every relay (K maximal); waits while any needed link is busy
  kVariableK,  // embodiments 1 and 6: only relays whose hops are idle, K in [k_min, k_max]
  kDirect,     // the plain full mesh: direct links only (the baseline)
};

// When 1-hop links are worth using (spec X1/X2; docs/fullmesh.md has the formulas).
enum class Decision {
  kFirstPrinciples,  // predicted time of the relay plan < time of the direct-only plan
  kPrinted,          // the document's formulas read as "size >" (guarded denominators)
  kThreshold,        // size > threshold_bytes (a threshold measured beforehand)
  kAlways,           // always use the 1-hop links (embodiment 2's option)
};

// Where the tables live.
enum class TableSite {
  kEveryNode,  // embodiment 3: every node keeps a copy; no extra message
  kMainNode,   // embodiment 1: one node decides and sends an instruction sheet first
};

enum class OpType {
  kP2p,
  kMulticast,
  kScatter,
  kGather,
  kReduce,
  kAllreduce,
  kAllgather,
  kAlltoall
};

// A group of nodes (MPI communicator). comms[0] of a config is always WORLD.
struct Communicator {
  std::string name;
  std::vector<int> members;  // ascending node numbers, >= 2 of them
};

// One operation of a workload.
//   bytes: p2p / multicast: the message; scatter / gather / allgather / all-to-all: the block
//   each node sends or receives per peer; reduce / allreduce: each node's vector (a multiple
//   of 4: the elements are 32-bit integers summed modulo 2^32).
struct Operation {
  double at_us = 0;  // arrival time at the controller
  OpType type = OpType::kP2p;
  int root = 0;   // p2p / multicast / scatter sender; gather / reduce receiver
  int dest = -1;  // p2p receiver
  int comm = 0;   // index into FullMeshConfig::comms
  int64_t bytes = 0;
  uint32_t tag = 0;             // the table's ID column (MPI tag)
  bool broadcast_name = false;  // written as "broadcast" (multicast to the communicator)
};

struct FullMeshConfig {
  int nodes = 8;
  double bandwidth_gbps = 25;  // B: the document's header example (20 is its other example)
  double t0_us = 2;            // direct-link latency
  RelayKind relay = RelayKind::kSwitch;  // relays of p2p, multicast, scatter, gather, ...
  // Relays of reduce and allreduce: memory (emb 4) or switch-reduce (emb 5); nullopt (auto) =
  // `relay` when it can sum (memory, switch-reduce), else memory: the switch relay unit of
  // embodiments 2, 3 and 6 forwards and copies but has no adder.
  std::optional<RelayKind> reduce_relay;
  double t1_us = 0;         // whole 1-hop latency of every relay kind; 0 = the kind's value
  int relays_per_node = 1;  // M: concurrent relayed communications per node and plane
  int planes = 1;           // 1 or 2 switch planes (embodiment 7)
  bool awg = false;         // check the cyclic-AWG wavelength plan
  RelayMode relay_mode = RelayMode::kPipelined;
  int64_t chunk_bytes = 256;  // pipelined: the unit a relay forwards (~ one 50 ns packet)
  Policy policy = Policy::kFixedK;
  int k_min = 1;  // variable-k: fewest relays worth starting with
  int k_max = 0;  // variable-k: most relays taken; 0 = the operation's maximum
  Decision decision = Decision::kFirstPrinciples;
  int64_t threshold_bytes = 10000;  // decision = threshold (80 kbit, embodiment 1's value)
  TableSite tables = TableSite::kEveryNode;
  int sheet_entry_bytes = 4;             // main-node: bytes per entry of the ~2N-entry sheet
  bool group_relay = false;              // Fig. 29: relays may be nodes outside the communicator
  bool data = true;                      // move and check real bytes (false: timing only)
  uint64_t seed = 1;                     // data contents
  std::vector<Communicator> comms = {};  // [0] = WORLD, filled by Normalize()

  double T1() const;  // T1 of `relay`
  RelayKind ReduceRelay() const;
  RelayKind RelayFor(OpType t) const;
  double T1For(OpType t) const;  // T1 of the relay kind operations of type `t` use
  double BytesPerUs() const { return bandwidth_gbps * 1e3 / 8.0; }
  // Fills comms[0] = WORLD when absent.
  void Normalize();
};

std::string_view OpTypeName(OpType t);
std::string_view RelayKindName(RelayKind k);
std::string_view RelayModeName(RelayMode m);
std::string_view PolicyName(Policy p);
std::string_view DecisionName(Decision d);
std::string_view TableSiteName(TableSite s);

// True for the operations that reduce (their bytes must be a multiple of 4).
inline bool IsReduction(OpType t) { return t == OpType::kReduce || t == OpType::kAllreduce; }

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_FULLMESH_TYPES_H_
