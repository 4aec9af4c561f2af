// Network: the reconfiguration protocol's execution (engine/reconfiguration.h: episodes
// re-planned on every event, their actions executed in cycle order) and the discards with
// retransmission from the source.
#include <algorithm>

#include "sim/engine/network.h"

namespace ukai::sim {

// Records a timed event of the running episode (a new episode when none runs).
void Network::AddReconfigSite(const FaultEvent& event) {
  if (!reconfiguring_) {
    episode_base_ = std::make_unique<FaultState>(*target_);
    sites_.clear();
    wave_sets_.clear();
    reconfiguring_ = true;
    finished_ = false;
  }
  ReconfigSite site;
  site.event = event;
  if (event.other >= 0) {
    site.ends = {event.node, event.other};
  } else {
    for (int p = 0; p < topology_->NumNetworkPorts(); ++p) {
      const PortRef far = topology_->Neighbor(event.node, p);
      if (far.valid()) site.ends.push_back(far.node);
    }
  }
  sites_.push_back(std::move(site));
}

// Plans the episode again with its new sites. The plan is causal: the actions before this
// cycle are those already executed, and the waves prepared so far keep their indices.
void Network::ReplanReconfiguration() {
  plan_ = PlanEpisode(topology_.get(), *episode_base_, sites_, config_.faults.reconfig,
                      root_priority_, routing_->Root(), config_.routing.fault_region_distance);
  WithTopology(*faults_);
  wave_sets_.resize(plan_.waves.size(), -1);
  next_action_ = 0;
  while (next_action_ < plan_.actions.size() && plan_.actions[next_action_].cycle < now_) {
    ++next_action_;
  }
  fabric_->SetHoldUnroutable(true);  // heads with no live way wait for the new tables
}

void Network::AdvanceReconfiguration() {
  bool changed = false;
  while (reconfiguring_ && next_action_ < plan_.actions.size() &&
         plan_.actions[next_action_].cycle <= now_) {
    changed |= ExecuteReconfigAction(plan_.actions[next_action_++]);
  }
  if (changed) {
    fabric_->ForgetRoutes();
    ActivateNodesWithFlits();
  }
}

// One step of the plan; true when routes may have changed.
bool Network::ExecuteReconfigAction(const ReconfigAction& a) {
  const ReconfigConfig& rc = config_.faults.reconfig;
  switch (a.kind) {
    case ReconfigAction::Kind::kDiscard:
      Discard(rc.discard == ReconfigConfig::Discard::kAll);
      return false;
    case ReconfigAction::Kind::kPrepare: {  // the wave's root computes its fault list's tables
      const ReconfigWave& w = plan_.waves[a.wave];
      WithTopology(EpisodeState(*episode_base_, sites_, w.sites));
      wave_sets_[a.wave] = routing_->PrepareTables(w.root);
      WithTopology(*faults_);
      return false;
    }
    case ReconfigAction::Kind::kCommit:
      routing_->CommitNodeTables(a.node, wave_sets_[a.wave]);
      return true;
    case ReconfigAction::Kind::kFinish:
      finished_ = true;
      *faults_ = *target_;  // repairs take effect with the new tables
      WithTopology(*faults_);
      ApplyFaultState();
      routing_->FinishTables(wave_sets_[a.wave]);
      fabric_->SetHoldUnroutable(false);
      // Assumption 1 at the end too: recovery started under mixed tables is discarded.
      if (rc.discard == ReconfigConfig::Discard::kRecovering) Discard(false);
      return true;
    case ReconfigAction::Kind::kEnd:
      EndReconfiguration();
      return false;
  }
  return false;
}

// Counts the episode; nodes its restart has not reached yet stay paused until it does.
void Network::EndReconfiguration() {
  for (size_t v = 0; v < paused_until_.size(); ++v) {
    if (plan_.resume[v] > now_) paused_until_[v] = std::max(paused_until_[v], plan_.resume[v]);
  }
  reconfiguring_ = false;
  ++reconfigurations_;
  reconfiguration_cycles_ += plan_.end - plan_.start;
  reconfiguration_regions_ += plan_.regions;
  cancelled_root_candidates_ += plan_.cancelled;
}

// Discards the in-flight messages on the recovery sub-network (`all`: every in-flight
// message) and resends them from their source (reconfig.retransmit), keeping their creation
// cycle; a message whose source or destination is faulty becomes undeliverable instead.
// The live copy of a message decides (under MPI a copy whose head went to another rank is
// stale, rank_exchange.h); every rank then removes every copy of the chosen messages, and
// each source resends its own in the order (source, creation).
void Network::Discard(bool all) {
  std::vector<int32_t> ids;
  fabric_->InFlight(&ids);
  for (const NodeRun& run : fabric_->local_routers()) {
    for (int32_t node = run.begin; node < run.end; ++node) {
      if (pe_[node].current >= 0) ids.push_back(pe_[node].current);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<DiscardInfo> chosen;
  for (int32_t id : ids) {
    const Message& m = (*messages_)[id];
    if (!m.forwarded && (all || routing_->OnRecoveryNetwork(m.routing_state))) {
      chosen.push_back({m.uid(), m.src, m.dst, m.length, m.created});
    }
  }
  chosen = AllRanksDiscards(std::move(chosen));
  if (chosen.empty()) return;
  std::sort(chosen.begin(), chosen.end(),
            [](const DiscardInfo& a, const DiscardInfo& b) { return a.uid < b.uid; });
  auto discarded = [&](int32_t msg) {
    const uint64_t uid = (*messages_)[msg].uid();
    return std::binary_search(
        chosen.begin(), chosen.end(), DiscardInfo{uid, 0, 0, 0, 0},
        [](const DiscardInfo& a, const DiscardInfo& b) { return a.uid < b.uid; });
  };
  std::vector<Fabric::PurgedCredits> remote;
  fabric_->Purge(discarded, &remote);
  ExchangePurgedCredits(remote);
  for (const NodeRun& run : fabric_->local_routers()) {
    for (int32_t node = run.begin; node < run.end; ++node) {
      Pe& pe = pe_[node];
      if (pe.current >= 0 && discarded(pe.current)) {
        pe.current = -1;
        SetPeBusy(node, pe.queue_head >= 0);
      }
    }
  }
  for (int32_t id : ids) {
    if (discarded(id)) messages_->Release(id);
  }
  for (const DiscardInfo& d : chosen) {
    Part* part = PartOf(d.src);
    if (part == nullptr) continue;  // another rank's source resends it
    ++serial_.discarded;
    // Out of BookSim2's in-flight count (its resend, queued below, counts again).
    serial_.inflight_flits -= d.length;
    serial_.inflight_created_sum -= d.created * d.length;
    if (config_.faults.reconfig.retransmit && target_->NodeFaulty(d.src) == false &&
        !target_->NodeFaulty(d.dst)) {
      QueueMessage(*part, d.src, d.dst, d.length, {}, -1, d.created);
      --serial_.messages_created;  // a resend, not a new message
      ++serial_.retransmitted;
    } else {
      ++serial_.undeliverable;
    }
  }
  ActivateNodesWithFlits();
}

}  // namespace ukai::sim
