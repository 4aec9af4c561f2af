#include "sim/fullmesh/machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/fullmesh/tree_plan.h"

namespace ukai::sim::fullmesh {
namespace {

// The most relays an operation of `type` could ever have (for the K-range check).
int MaxRelays(const FullMeshConfig& c, const Operation& op, int members) {
  switch (op.type) {
    case OpType::kP2p:
      return (c.group_relay ? c.nodes : members) - 2;
    case OpType::kMulticast:
      return c.policy == Policy::kFixedK ? members : members - 1;
    case OpType::kReduce:
      return c.policy == Policy::kFixedK ? members : members - 1;
    case OpType::kAllreduce:
      return members;
    default:
      return -1;  // no K
  }
}

Status CheckComms(const FullMeshConfig& c) {
  for (size_t g = 1; g < c.comms.size(); ++g) {
    const Communicator& comm = c.comms[g];
    if (comm.members.size() < 2) {
      return Status::InvalidArgument(
                 fmt::format(
                     "fullmesh.groups: group '{}' has {} node(s); a communicator needs at least 2",
                     comm.name, comm.members.size()))
          .WithKey("fullmesh.groups");
    }
    for (size_t i = 0; i < comm.members.size(); ++i) {
      const int m = comm.members[i];
      if (m < 0 || m >= c.nodes) {
        return Status::InvalidArgument(
                   fmt::format("fullmesh.groups: group '{}' names node {}, but the nodes are 0..{}",
                               comm.name, m, c.nodes - 1))
            .WithKey("fullmesh.groups");
      }
      if (i > 0 && comm.members[i - 1] >= m) {
        return Status::InvalidArgument(fmt::format("fullmesh.groups: group '{}' must list distinct "
                                                   "nodes (node {} repeats or is out "
                                                   "of order)",
                                                   comm.name, m))
            .WithKey("fullmesh.groups");
      }
    }
  }
  return Status::Ok();
}

Status CheckOp(const FullMeshConfig& c, const Operation& op, size_t i, const OpNaming& naming) {
  auto bad = [i, &naming](const std::string& what) {
    return Status::InvalidArgument(
               fmt::format("{}: {} {}: {}", naming.key, naming.item, i + 1, what))
        .WithKey(std::string(naming.key));
  };
  if (op.comm < 0 || op.comm >= static_cast<int>(c.comms.size()))
    return bad("unknown communicator");
  const std::vector<int>& m = c.comms[op.comm].members;
  const int n = static_cast<int>(m.size());
  auto member = [&m](int x) { return std::binary_search(m.begin(), m.end(), x); };
  const bool rooted = op.type != OpType::kAllreduce && op.type != OpType::kAllgather &&
                      op.type != OpType::kAlltoall;
  if (rooted && !member(op.root)) {
    return bad(
        fmt::format("root node {} is not in communicator {}", op.root, c.comms[op.comm].name));
  }
  if (op.type == OpType::kP2p && (!member(op.dest) || op.dest == op.root)) {
    return bad(
        fmt::format("p2p receiver {} must be another node of {}", op.dest, c.comms[op.comm].name));
  }
  if (op.bytes < 1) return bad("bytes must be >= 1");
  if (IsReduction(op.type) && op.bytes % 4 != 0) {
    return bad(fmt::format("{} bytes = {} is not a multiple of 4 (32-bit elements)",
                           OpTypeName(op.type), op.bytes));
  }
  if (!(op.at_us >= 0) || !std::isfinite(op.at_us)) return bad("the time must be >= 0");
  const int max_k = MaxRelays(c, op, n);
  if (c.policy == Policy::kVariableK && max_k >= 0 && c.k_min > max_k) {
    return Status::InvalidArgument(fmt::format("fullmesh.k_min: {} is out of range for operation "
                                               "{} ({} over {} nodes has at most "
                                               "{} relays)",
                                               c.k_min, i + 1, OpTypeName(op.type), n, max_k))
        .WithKey("fullmesh.k_min");
  }
  if (c.policy == Policy::kVariableK && max_k >= 0 && c.k_max > max_k) {
    return Status::InvalidArgument(fmt::format("fullmesh.k_max: {} is out of range for operation "
                                               "{} ({} over {} nodes has at most {} relays)",
                                               c.k_max, i + 1, OpTypeName(op.type), n, max_k))
        .WithKey("fullmesh.k_max");
  }
  const double factor =
      op.type == OpType::kScatter || op.type == OpType::kGather || op.type == OpType::kAllgather
          ? 2.0 * n
      : op.type == OpType::kAlltoall ? 2.0 * n * n
                                     : 3.0 * n;
  if (c.data && factor * static_cast<double>(op.bytes) > double(int64_t{1} << 32)) {
    return bad("its buffers would exceed 4 GiB; set fullmesh.data = false for timing only");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateFullMesh(const FullMeshConfig& config, const std::vector<Operation>& ops,
                        const OpNaming& naming) {
  FullMeshConfig c = config;
  c.Normalize();
  if (c.nodes < 3 || c.nodes > 4096) {
    return Status::InvalidArgument(
               fmt::format("fullmesh.nodes: {} is out of range [3, 4096]", c.nodes))
        .WithKey("fullmesh.nodes");
  }
  if (c.planes < 1 || c.planes > 2) {
    return Status::InvalidArgument(fmt::format("fullmesh.planes: {} must be 1 or 2", c.planes))
        .WithKey("fullmesh.planes");
  }
  if (c.k_max > c.nodes) {
    return Status::InvalidArgument(
               fmt::format(
                   "fullmesh.k_max: {} is out of range (no operation has more than N = {} relays)",
                   c.k_max, c.nodes))
        .WithKey("fullmesh.k_max");
  }
  if (c.k_max > 0 && c.k_min > c.k_max) {
    return Status::InvalidArgument(
               fmt::format("fullmesh.k_min: {} is larger than fullmesh.k_max = {}", c.k_min,
                           c.k_max))
        .WithKey("fullmesh.k_min");
  }
  if (!(c.T1() > 0) || !(c.t0_us >= 0) || !(c.bandwidth_gbps > 0)) {
    return Status::InvalidArgument(
        "fullmesh.t0_us / fullmesh.t1_us / fullmesh.bandwidth_gbps: must be positive");
  }
  UKAI_RETURN_IF_ERROR(CheckComms(c));
  if (c.awg) {
    Result<int64_t> fibres = CheckCyclicAwgPlan(c.nodes, c.planes);
    if (!fibres.ok()) return fibres.status();
  }
  for (size_t i = 0; i < ops.size(); ++i) UKAI_RETURN_IF_ERROR(CheckOp(c, ops[i], i, naming));
  return Status::Ok();
}

Result<int64_t> CheckCyclicAwgPlan(int nodes, int planes) {
  // seen_out[j * N + w]: output fibre j already receives wavelength w.
  std::vector<uint8_t> seen_in(static_cast<size_t>(nodes) * nodes, 0);
  std::vector<uint8_t> seen_out(seen_in.size(), 0);
  for (int i = 0; i < nodes; ++i) {
    for (int j = 0; j < nodes; ++j) {
      if (i == j) continue;
      const int w = ((j - i) % nodes + nodes) % nodes;  // 1..N-1
      const size_t in = static_cast<size_t>(i) * nodes + w;
      const size_t out = static_cast<size_t>(j) * nodes + w;
      if (w == 0 || seen_in[in] || seen_out[out]) {
        return Status::Internal(fmt::format(
            "fullmesh.awg: wavelength {} of pair {} -> {} collides in the cyclic AWG plan", w, i,
            j));
      }
      seen_in[in] = seen_out[out] = 1;
    }
  }
  return int64_t{2} * nodes * planes;
}

double TreeBaselineUs(const Operation& op, int members, double bytes_per_us, double t0_us) {
  const double steps = std::ceil(std::log2(static_cast<double>(members)));
  const double s = static_cast<double>(op.bytes) / bytes_per_us;
  switch (op.type) {
    case OpType::kMulticast:
    case OpType::kReduce:
      return steps * (t0_us + s);
    case OpType::kAllreduce:  // reduce, then broadcast
      return 2 * steps * (t0_us + s);
    case OpType::kScatter:
    case OpType::kGather:  // halving blocks: (n-1) blocks cross the busiest link in all
      return steps * t0_us + (members - 1) * s;
    case OpType::kAllgather:  // gather, then broadcast of the n blocks
      return steps * t0_us + (members - 1) * s + steps * (t0_us + members * s);
    default:
      return 0;
  }
}

Machine::Machine(const FullMeshConfig& config, std::vector<Operation> ops) : config_(config) {
  // Arrival order: by time, ties in workload order; indices stay the workload's.
  auto order = std::make_shared<std::vector<int64_t>>(ops.size());
  std::iota(order->begin(), order->end(), 0);
  auto shared = std::make_shared<std::vector<Operation>>(std::move(ops));
  std::stable_sort(order->begin(), order->end(), [&shared](int64_t a, int64_t b) {
    return (*shared)[a].at_us < (*shared)[b].at_us;
  });
  results_.resize(shared->size());
  auto pos = std::make_shared<size_t>(0);
  source_ = [order, shared, pos, this](Operation* op) {
    if (*pos == order->size()) return false;
    *op = (*shared)[(*order)[*pos]];
    next_index_ = (*order)[(*pos)++];
    return true;
  };
  sink_ = [this](int64_t index, const Operation&, const OpResult& r) { results_[index] = r; };
  Init();
}

Machine::Machine(const FullMeshConfig& config, OpSource source, OpSink sink)
    : config_(config), sink_(std::move(sink)) {
  source_ = [src = std::move(source), this, count = int64_t{0}](Operation* op) mutable {
    if (!src(op)) return false;
    next_index_ = count++;
    return true;
  };
  Init();
}

void Machine::Init() {
  config_.Normalize();
  controller_ = std::make_unique<Controller>(config_);
  live_.resize(kMaxCommunications);
  if (config_.tables == TableSite::kMainNode) {
    sheet_us_ =
        config_.t0_us + 2.0 * config_.nodes * config_.sheet_entry_bytes / config_.BytesPerUs();
  }
  Pull();
}

void Machine::Pull() { has_next_ = source_(&next_); }  // the source sets next_index_

void Machine::Launch(std::vector<Started>* started) {
  PlanTimer& timer = *controller_->timer();
  for (Started& s : *started) {
    const Operation& op = s.op;
    const std::vector<int>& members = config_.comms[op.comm].members;
    Live& live = live_[s.number];
    live.op = op;
    OpResult& r = live.result;
    r.op_index = s.op_index;
    r.arrival_us = op.at_us;
    r.start_us = now_;
    r.relays = static_cast<int>(s.plan.relays.size());
    r.relay_nodes = s.plan.relays;
    r.direct = s.plan.direct;
    r.transfers = static_cast<int64_t>(s.plan.segments.size());
    const double duration = s.plan.predicted_us >= 0
                                ? s.plan.predicted_us
                                : timer.Duration(s.plan, controller_->timing(op.type));
    r.finish_us = now_ + sheet_us_ + duration;
    r.baseline_us = s.baseline_us >= 0
                        ? s.baseline_us
                        : timer.Duration(DirectPlan(op, members), controller_->timing(op.type));
    const Plan tree = TreePlan(op, members);
    r.tree_us = !HasTreePlan(op.type) ? 0 : timer.Duration(tree, controller_->timing(op.type));
    if (config_.data) {
      const uint64_t seed = config_.seed * 1000003u + static_cast<uint64_t>(s.op_index);
      r.data_checked = true;
      r.data_ok = true;
      for (const Plan* plan : {static_cast<const Plan*>(&s.plan), &tree}) {
        if (plan == &tree && !HasTreePlan(op.type)) continue;
        OpData data = MakeOpData(op, members, config_.nodes, seed);
        ExecutePlanData(*plan, &data);
        r.data_ok = r.data_ok && CheckOpData(op, members, data);
      }
    }
    finishes_.push(Finish{r.finish_us, seq_++, s.number, s.op_index});
  }
  started->clear();
}

bool Machine::Step() {
  if (finishes_.empty() && !has_next_) return false;
  const bool finish_first = !finishes_.empty() && (!has_next_ || finishes_.top().at <= next_.at_us);
  if (finish_first) {
    const Finish f = finishes_.top();
    finishes_.pop();
    now_ = f.at;
    ++completed_;
    last_event_ = MachineEvent{true, now_, f.op_index, f.number};
    controller_->OnFinish(f.number, &started_);
    const Live& live = live_[f.number];
    sink_(f.op_index, live.op, live.result);
  } else {
    next_.at_us = std::max(now_, next_.at_us);
    now_ = next_.at_us;
    last_event_ = MachineEvent{false, now_, next_index_, -1};
    controller_->OnNew(next_index_, next_, &started_);
    Pull();
  }
  max_rows_ = std::max(max_rows_, controller_->comm_table().rows().size());
  Launch(&started_);
  return true;
}

const std::vector<OpResult>& Machine::Run() {
  while (Step()) {
  }
  return results_;
}

}  // namespace ukai::sim::fullmesh
