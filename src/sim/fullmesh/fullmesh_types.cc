#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

namespace {

double KindT1(RelayKind relay) {
  switch (relay) {
    case RelayKind::kMemory:
      return 4.0;
    case RelayKind::kSwitch:
      return 2.1;
    case RelayKind::kSwitchReduce:
      return 2.4;
  }
  return 2.1;
}

}  // namespace

double FullMeshConfig::T1() const { return t1_us > 0 ? t1_us : KindT1(relay); }

RelayKind FullMeshConfig::ReduceRelay() const {
  if (reduce_relay.has_value()) return *reduce_relay;
  return relay == RelayKind::kSwitch ? RelayKind::kMemory : relay;
}

RelayKind FullMeshConfig::RelayFor(OpType t) const {
  return IsReduction(t) ? ReduceRelay() : relay;
}

double FullMeshConfig::T1For(OpType t) const { return t1_us > 0 ? t1_us : KindT1(RelayFor(t)); }

void FullMeshConfig::Normalize() {
  if (!comms.empty() && comms[0].name == "WORLD") return;
  Communicator world{"WORLD", {}};
  for (int n = 0; n < nodes; ++n) world.members.push_back(n);
  comms.insert(comms.begin(), std::move(world));
}

std::string_view OpTypeName(OpType t) {
  switch (t) {
    case OpType::kP2p:
      return "p2p";
    case OpType::kMulticast:
      return "multicast";
    case OpType::kScatter:
      return "scatter";
    case OpType::kGather:
      return "gather";
    case OpType::kReduce:
      return "reduce";
    case OpType::kAllreduce:
      return "allreduce";
    case OpType::kAllgather:
      return "allgather";
    case OpType::kAlltoall:
      return "alltoall";
  }
  return "?";
}

std::string_view RelayKindName(RelayKind k) {
  switch (k) {
    case RelayKind::kMemory:
      return "memory";
    case RelayKind::kSwitch:
      return "switch";
    case RelayKind::kSwitchReduce:
      return "switch-reduce";
  }
  return "?";
}

std::string_view RelayModeName(RelayMode m) {
  return m == RelayMode::kPipelined ? "pipelined" : "store-and-forward";
}

std::string_view PolicyName(Policy p) {
  switch (p) {
    case Policy::kFixedK:
      return "fixed-k";
    case Policy::kVariableK:
      return "variable-k";
    case Policy::kDirect:
      return "direct";
  }
  return "?";
}

std::string_view DecisionName(Decision d) {
  switch (d) {
    case Decision::kFirstPrinciples:
      return "first-principles";
    case Decision::kPrinted:
      return "printed";
    case Decision::kThreshold:
      return "threshold";
    case Decision::kAlways:
      return "always";
  }
  return "?";
}

std::string_view TableSiteName(TableSite s) {
  return s == TableSite::kEveryNode ? "every-node" : "main-node";
}

}  // namespace ukai::sim::fullmesh
