// Network: the reconfiguration protocol's execution (engine/reconfiguration.h) and the
// discards with retransmission from the source.
#include <algorithm>

#include "sim/engine/network.h"

namespace ukai::sim {

void Network::StartReconfiguration(const std::vector<int>& region) {
  const ReconfigConfig& rc = config_.faults.reconfig;
  region_ = region;
  WithTopology(*target_);  // plan on the network as it will be
  const int root = ChooseRoot(*topology_, rc, root_priority_, routing_->Root(), region_);
  plan_ = PlanReconfiguration(*topology_, rc, now_, region_, root,
                              config_.routing.fault_region_distance);
  WithTopology(*faults_);
  if (reconfiguring_) reconfiguration_cycles_ += now_ - plan_.start;  // the cancelled one
  reconfiguring_ = true;
  detected_ = prepared_ = finished_ = false;
  committed_.assign(static_cast<size_t>(topology_->NumNodes()), 0);
  fabric_->SetHoldUnroutable(true);  // heads with no live way wait for the new tables
}

void Network::AdvanceReconfiguration() {
  const ReconfigConfig& rc = config_.faults.reconfig;
  if (!detected_ && now_ >= plan_.detect) {
    detected_ = true;
    Discard(rc.discard == ReconfigConfig::Discard::kAll);
  }
  if (!prepared_ && now_ >= plan_.root_start + rc.compute_cycles) {
    prepared_ = true;
    WithTopology(*target_);
    routing_->PrepareTables(plan_.root);
    WithTopology(*faults_);
  }
  bool changed = false;
  for (int v = 0; prepared_ && !finished_ && v < topology_->NumNodes(); ++v) {
    if (!committed_[v] && plan_.update[v] >= 0 && now_ >= plan_.update[v]) {
      committed_[v] = 1;
      routing_->CommitNodeTables(v);
      changed = true;
    }
  }
  if (!finished_ && now_ >= plan_.done) {
    finished_ = true;
    *faults_ = *target_;  // repairs take effect with the new tables
    WithTopology(*faults_);
    ApplyFaultState();
    routing_->FinishTables();
    fabric_->SetHoldUnroutable(false);
    region_.clear();
    // Assumption 1 at the end too: recovery started under mixed tables is discarded.
    if (rc.discard == ReconfigConfig::Discard::kRecovering) Discard(false);
    changed = true;
  }
  if (changed) {
    fabric_->ForgetRoutes();
    for (int r = 0; r < topology_->NumNodes(); ++r) {
      if (fabric_->HasFlits(r)) Activate(r);
    }
  }
  if (finished_ && now_ >= plan_.end) {
    reconfiguring_ = false;
    ++reconfigurations_;
    reconfiguration_cycles_ += plan_.end - plan_.start;
  }
}

// Discards the in-flight messages on the recovery sub-network (`all`: every in-flight
// message) and resends them from their source (reconfig.retransmit), keeping their creation
// cycle; a message whose source or destination is faulty becomes undeliverable instead.
void Network::Discard(bool all) {
  std::vector<int32_t> ids;
  fabric_->InFlight(&ids);
  for (const Pe& pe : pe_) {
    if (pe.current >= 0) ids.push_back(pe.current);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<int32_t> chosen;
  for (int32_t id : ids) {
    if (all || routing_->OnRecoveryNetwork(messages_[id].routing_state)) chosen.push_back(id);
  }
  if (chosen.empty()) return;
  auto discarded = [&](int32_t msg) {
    return std::binary_search(chosen.begin(), chosen.end(), msg);
  };
  fabric_->Purge(discarded);
  for (int32_t node = 0; node < static_cast<int32_t>(pe_.size()); ++node) {
    Pe& pe = pe_[node];
    if (pe.current >= 0 && discarded(pe.current)) {
      pe.current = -1;
      pe_busy_[node] = pe.queue_head >= 0 ? 1 : 0;
    }
  }
  for (int32_t id : chosen) {
    const Message m = messages_[id];
    messages_.Release(id);
    ++messages_discarded_;
    if (config_.faults.reconfig.retransmit && target_->NodeFaulty(m.src) == false &&
        !target_->NodeFaulty(m.dst)) {
      CreateMessage(m.src, m.dst, m.length);
      --messages_created_;  // a resend, not a new message
      ++messages_retransmitted_;
      messages_[pe_[m.src].queue_tail].created = m.created;
    } else {
      ++messages_undeliverable_;
    }
  }
  for (int r = 0; r < topology_->NumNodes(); ++r) {
    if (fabric_->HasFlits(r)) Activate(r);
  }
}

}  // namespace ukai::sim
