#include "sim/fullmesh/controller.h"

#include <algorithm>

#include "sim/fullmesh/decision.h"

namespace ukai::sim::fullmesh {

Controller::Controller(const FullMeshConfig& config)
    : config_(config),
      links_(config.nodes, config.planes),
      relay_busy_(config.nodes, 0),
      relay_units_(config.relays_per_node * config.planes),
      timer_(config.nodes) {
  config_.Normalize();
  timing_.bytes_per_us = config_.BytesPerUs();
  timing_.t0_us = config_.t0_us;
  timing_.t1_us = config_.T1();
  timing_.mode = config_.relay_mode;
  timing_.chunk_bytes = config_.chunk_bytes;
  reduce_timing_ = timing_;
  reduce_timing_.t1_us = config_.T1For(OpType::kReduce);
}

CommRow Controller::MakeRow(int64_t op_index, const Operation& op) const {
  CommRow row;
  row.type = op.type;
  const bool rooted_sender =
      op.type == OpType::kP2p || op.type == OpType::kMulticast || op.type == OpType::kScatter;
  const bool rooted_receiver = op.type == OpType::kGather || op.type == OpType::kReduce;
  row.sender = rooted_sender ? op.root : -1;
  row.receiver = op.type == OpType::kP2p ? op.dest : rooted_receiver ? op.root : -1;
  row.comm = op.comm;
  row.precision = IsReduction(op.type) ? 4 : 1;
  row.count = op.bytes / row.precision;
  row.send_address = (static_cast<uint64_t>(op_index) + 1) << 24;
  row.recv_address = row.send_address | (uint64_t{1} << 23);
  row.id = op.tag;
  row.op_index = op_index;
  row.op = op;
  return row;
}

std::vector<int> Controller::RelayPool(const Operation& op, const std::vector<int>& members) const {
  std::vector<int> pool;
  const bool fixed = config_.policy == Policy::kFixedK;
  auto member = [&](int n) { return std::binary_search(members.begin(), members.end(), n); };
  for (int n = 0; n < config_.nodes; ++n) {
    switch (op.type) {
      case OpType::kP2p:
        if (n != op.root && n != op.dest && (member(n) || config_.group_relay)) pool.push_back(n);
        break;
      case OpType::kMulticast:
        if (member(n) && (fixed || n != op.root)) pool.push_back(n);
        break;
      case OpType::kReduce:  // embodiment 6 (Fig. 41A): the root does not relay
        if (member(n) && (fixed || n != op.root)) pool.push_back(n);
        break;
      case OpType::kAllreduce:
        if (member(n)) pool.push_back(n);
        break;
      case OpType::kScatter:
      case OpType::kGather:
        if (config_.group_relay && !member(n)) pool.push_back(n);
        break;
      case OpType::kAllgather:
      case OpType::kAlltoall:
        break;
    }
  }
  return pool;
}

Plan Controller::RelayPlan(const Operation& op, const std::vector<int>& members,
                           const std::vector<int>& relays, bool direct) const {
  switch (op.type) {
    case OpType::kP2p:
      return P2pRelayPlan(op, relays, direct);
    case OpType::kMulticast:
      return MulticastRelayPlan(op, members, relays);
    default:
      return ReduceRelayPlan(op, members, relays);
  }
}

bool Controller::UseRelays(const Operation& op, Plan& direct, Plan& relayed) {
  switch (config_.decision) {
    case Decision::kAlways:
      return true;
    case Decision::kThreshold:
      return op.bytes > config_.threshold_bytes;
    case Decision::kPrinted:
      return static_cast<double>(op.bytes) >
             PrintedThresholdBytes(op.type, static_cast<int>(relayed.relays.size()),
                                   config_.policy == Policy::kFixedK, timing_.bytes_per_us,
                                   timing_.t0_us, timing(op.type).t1_us);
    case Decision::kFirstPrinciples:
      break;
  }
  relayed.predicted_us = timer_.Duration(relayed, timing(op.type));
  direct.predicted_us = last_direct_us_ = timer_.Duration(direct, timing(op.type));
  return relayed.predicted_us < direct.predicted_us;
}

bool Controller::Available(const Plan& plan) const {
  for (const Segment& s : plan.segments) {
    if (s.hop != Hop::kLocal && links_.FreeLink(s.from, s.to) < 0) return false;
  }
  for (int r : plan.relays) {
    if (!RelayFree(r)) return false;
  }
  return true;
}

bool Controller::Select(const CommRow& row, Plan* plan) {
  const Operation& op = row.op;
  const std::vector<int>& members = config_.comms[op.comm].members;
  Plan direct = DirectPlan(op, members);
  const std::vector<int> pool =
      config_.policy == Policy::kDirect ? std::vector<int>{} : RelayPool(op, members);
  if (pool.empty()) {
    *plan = std::move(direct);
    return Available(*plan);
  }
  if (op.type == OpType::kScatter || op.type == OpType::kGather) {
    return SelectGroupRelay(op, members, pool, std::move(direct), plan);
  }
  if (config_.policy == Policy::kVariableK) {
    return SelectVariable(op, members, pool, std::move(direct), plan);
  }
  // fixed-k: every relay; the size rule first (S216), then every chosen link must be idle.
  Plan relayed = RelayPlan(op, members, pool, true);
  *plan = UseRelays(op, direct, relayed) ? std::move(relayed) : std::move(direct);
  return Available(*plan);
}

bool Controller::SelectVariable(const Operation& op, const std::vector<int>& members,
                                const std::vector<int>& pool, Plan direct, Plan* plan) {
  const bool direct_ok = Available(direct);
  const size_t k_max = config_.k_max > 0 ? static_cast<size_t>(config_.k_max) : pool.size();
  auto idle = [this](int a, int b) { return a == b || links_.FreeLink(a, b) >= 0; };
  std::vector<int> chosen;
  for (int r : pool) {
    if (chosen.size() >= k_max) break;
    if (!RelayFree(r)) continue;
    bool ok = true;
    switch (op.type) {
      case OpType::kP2p:  // [0115]
        ok = idle(op.root, r) && idle(r, op.dest);
        break;
      case OpType::kMulticast:  // [0116]
        ok = idle(op.root, r);
        for (int q : members) ok = ok && (q == op.root || idle(r, q));
        break;
      default:  // reduce [0117], allreduce [0118]
        for (int q : members) {
          ok = ok && idle(q, r);
          if (op.type == OpType::kAllreduce || q == op.root) ok = ok && idle(r, q);
        }
        break;
    }
    if (ok) chosen.push_back(r);
  }
  const bool relay_ok = !chosen.empty() && static_cast<int>(chosen.size()) >= config_.k_min;
  if (!direct_ok && !relay_ok) return false;
  if (!relay_ok) {
    *plan = std::move(direct);
    return true;
  }
  Plan relayed = RelayPlan(op, members, chosen, direct_ok);
  if (direct_ok && !UseRelays(op, direct, relayed)) {
    *plan = std::move(direct);
  } else {
    *plan = std::move(relayed);
  }
  return Available(*plan);
}

bool Controller::SelectGroupRelay(const Operation& op, const std::vector<int>& members,
                                  const std::vector<int>& pool, Plan direct, Plan* plan) {
  const bool scatter = op.type == OpType::kScatter;
  const bool fixed = config_.policy == Policy::kFixedK;
  std::vector<int> relay_of;
  size_t next = 0;
  bool any = false;
  for (int q : members) {
    if (q == op.root) continue;
    int chosen = -1;
    while (chosen < 0 && next < pool.size()) {
      const int r = pool[next++];
      const bool idle = RelayFree(r) &&
                        (scatter ? links_.FreeLink(op.root, r) >= 0 && links_.FreeLink(r, q) >= 0
                                 : links_.FreeLink(q, r) >= 0 && links_.FreeLink(r, op.root) >= 0);
      if (fixed || idle) chosen = r;
    }
    relay_of.push_back(chosen);
    any |= chosen >= 0;
  }
  if (!any) {
    *plan = std::move(direct);
    return Available(*plan);
  }
  Plan relayed = GroupRelayPlan(op, members, relay_of);
  *plan = UseRelays(op, direct, relayed) ? std::move(relayed) : std::move(direct);
  return Available(*plan);
}

void Controller::TryStart(size_t pos, std::vector<Started>* started, bool* ok) {
  CommRow& row = comm_.rows()[pos];
  Plan plan;
  last_direct_us_ = -1;
  *ok = Select(row, &plan);
  if (!*ok) {
    row.state = RowState::kWaiting;
    return;
  }
  for (const Segment& s : plan.segments) {
    if (s.hop == Hop::kLocal) continue;
    bool held = false;  // one link per pair, even when several segments use it
    for (int p = 0; p < links_.planes() && !held; ++p) {
      held = links_.usage(links_.LinkId(s.from, s.to, p)) == row.number;
    }
    if (held) continue;
    const int32_t link = links_.FreeLink(s.from, s.to);
    links_.Take(link, row.number, s.hop);
    row.links.push_back(link);
  }
  for (int r : plan.relays) ++relay_busy_[r];
  row.relays = plan.relays;
  row.state = RowState::kCommunicating;
  started->push_back(Started{row.op_index, row.op, row.number, std::move(plan), last_direct_us_});
}

void Controller::Admit(int64_t op_index, const Operation& op, std::vector<Started>* started) {
  const size_t pos = comm_.Append(MakeRow(op_index, op));
  if (pos > 0 && comm_.rows()[pos - 1].state == RowState::kWaiting) {
    comm_.rows()[pos].state = RowState::kWaiting;  // S203: order is kept
    return;
  }
  bool ok;
  TryStart(pos, started, &ok);
}

void Controller::OnNew(int64_t op_index, const Operation& op, std::vector<Started>* started) {
  if (!overflow_.empty() || !comm_.HasFreeNumber()) {
    overflow_.emplace_back(op_index, op);
    return;
  }
  Admit(op_index, op, started);
}

void Controller::OnFinish(int16_t number, std::vector<Started>* started) {
  const int at = comm_.Find(number);
  if (at < 0) return;
  CommRow& row = comm_.rows()[at];
  for (int32_t link : row.links) links_.Release(link);
  for (int r : row.relays) --relay_busy_[r];
  comm_.Remove(number);                                           // S261
  for (size_t pos = 0; pos < comm_.rows().size(); ++pos) {        // S262-S271, stopping at a row
    if (comm_.rows()[pos].state != RowState::kWaiting) continue;  // that cannot start
    bool ok;
    TryStart(pos, started, &ok);
    if (!ok) break;
  }
  while (!overflow_.empty() && comm_.HasFreeNumber()) {
    const std::pair<int64_t, Operation> next = overflow_.front();
    overflow_.pop_front();
    Admit(next.first, next.second, started);
  }
}

}  // namespace ukai::sim::fullmesh
