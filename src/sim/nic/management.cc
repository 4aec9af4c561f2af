// The gateway's management node (gateway patent Figs. 5 and 14, ¶60-62, ¶85, ¶123-130;
// docs/gateway.md, "Management node at run time"): the NIC enable register and the job
// launches that change it (nic.jobs), fault and repair notices (nic.notify_delay_cycles
// after the event), the NICs' table updates (policy managed) and the compute nodes'
// assignments (I/O node, detour to it, return detour from it). Every command after boot
// travels through the interconnect as a message from the management node and applies when
// it arrives; a command the interconnect cannot deliver is counted and sent again at the
// next management event.
//
// Gateway member functions; the data they use is declared in gateway.h.
#include <algorithm>

#include "sim/nic/detour_search.h"
#include "sim/nic/gateway.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {

void Gateway::InitManagement(const NicNodes& nodes) {
  const int n = net_->topology().NumNodes();
  const size_t nics = nic_nodes_.size();
  nic_on_.assign(nics, 0);
  for (size_t k = 0; k < nodes.enabled.size(); ++k) nic_on_[k] = 1;  // nic.enabled come first
  for (size_t k = 0; k < nics; ++k) {
    if (nic_on_[k] != 0) ports_up_.push_back(static_cast<int>(k));
  }
  register_ = nic_on_;
  commanded_ = nic_on_;
  reported_ = known_faulty_;
  jobs_ = nodes.jobs;
  mgmt_rows_.assign(nics, std::vector<std::vector<int>>(n));
  handed_.assign(n, Command{});
  io_of_.assign(n, 0);
  return_detour_.assign(n, {});
  out_detour_.assign(n, {});
  SendAssignments(/*boot=*/true);
  // Faults present at boot: managed rows before traffic; preloaded: a row for every node,
  // the I/O node's own too (no detour: the NIC hands the frame to its own node).
  const Topology& t = net_->topology();
  for (size_t k = 0; k < nics; ++k) {
    const int io = nic_nodes_[k];
    if (config_.nic.detours == DetourPolicy::kManaged && register_[k] != 0) {
      for (const AddressRow& row : RowChanges(static_cast<int>(k))) nics_[k]->Set(row);
    } else if (config_.nic.detours == DetourPolicy::kPreloaded) {
      for (int d = 0; d < n; ++d) {
        auto via = d == io ? std::nullopt : DisjointDetour(*planner_, t, io, d, MaxVia());
        nics_[k]->Set({MacOf(d), d, via ? *via : std::vector<int>{}});
      }
    }
    nics_[k]->ClearTrace();
  }
}

// A node failed or was repaired in the network: its notice leaves for the management
// node. A failed I/O node's NIC loses its link at once (the switch sees it); it comes back
// by an enable command once the management node knows of the repair.
void Gateway::WatchFaults(int64_t now) {
  for (int i = 0; i < net_->topology().NumNodes(); ++i) {
    const uint8_t faulty = net_->faults().NodeFaulty(i) ? 1 : 0;
    if (faulty != reported_[i]) {
      reported_[i] = faulty;
      notices_.push_back({now + config_.nic.notify_delay_cycles, i, faulty != 0});
    }
  }
  for (size_t k = 0; k < nic_nodes_.size(); ++k) {
    if (nic_on_[k] != 0 && net_->faults().NodeFaulty(nic_nodes_[k])) {
      SetNicUp(static_cast<int>(k), false);
      commanded_[k] = 0;
    }
  }
}

// Faults and repairs reach the management node after the delay; job launches are due.
void Gateway::Notify(int64_t now) {
  // A fault event changes the network's faults at once; a repair with reconfig.mode =
  // protocol only late in its reconfiguration: watch the faults while one runs.
  const int64_t seen = net_->fault_events_applied() + net_->reconfigurations();
  if (seen != events_seen_ || net_->reconfiguring()) {
    events_seen_ = seen;
    WatchFaults(now);
  }
  bool changed = false;
  while (!notices_.empty() && notices_.front().cycle <= now) {
    known_faulty_[notices_.front().node] = notices_.front().failed ? 1 : 0;
    notices_.pop_front();
    changed = true;
  }
  if (changed) {  // S42-S43, and the compute nodes' detours to and from their I/O node
    SyncRegister();
    SendTableUpdates();
    SendAssignments(/*boot=*/false);
  }
  while (next_job_ < jobs_.size() && jobs_[next_job_].first <= now) {
    LaunchJob(jobs_[next_job_++].second);
  }
}

// A job launch: the new enable register, then the NICs' rows and the nodes' assignments.
void Gateway::LaunchJob(const std::vector<int>& enabled) {
  ++counters_.job_launches;
  std::fill(register_.begin(), register_.end(), 0);
  for (int k : enabled) register_[k] = 1;
  SyncRegister();
  SendTableUpdates();
  SendAssignments(/*boot=*/false);
}

// An enable or disable command to every live NIC whose commanded state is not the register's.
void Gateway::SyncRegister() {
  for (size_t k = 0; k < register_.size(); ++k) {
    if (register_[k] == commanded_[k] || known_faulty_[nic_nodes_[k]] != 0) continue;
    commanded_[k] = register_[k];
    Command c;
    c.kind = register_[k] != 0 ? Command::kEnable : Command::kDisable;
    c.nic = static_cast<int>(k);
    SendCommand(nic_nodes_[k], std::move(c));
    ++counters_.nic_commands_sent;
  }
}

// The rows of NIC k that differ from what the management node last sent it: a detour for
// every destination whose path from the I/O node crosses a known fault, none for the others.
std::vector<AddressRow> Gateway::RowChanges(int k) {
  const Topology& t = net_->topology();
  const int io = nic_nodes_[k];
  std::vector<uint8_t> affected(t.NumNodes(), 0);
  for (int d : AffectedDestinations(*planner_, t, io, known_faulty_)) affected[d] = 1;
  std::vector<AddressRow> rows;
  for (int d = 0; d < t.NumNodes(); ++d) {
    if (d == io || known_faulty_[d] != 0) continue;
    std::vector<int> want;
    if (affected[d] != 0) {
      auto via = FindDetour(*planner_, t, io, d, known_faulty_, MaxVia());
      if (!via) continue;  // no detour round the known faults: the row stays
      want = std::move(*via);
    }
    std::vector<int>& sent = mgmt_rows_[k][d];
    if (want == sent) continue;
    if (want.empty()) ++counters_.table_rows_cleared;
    sent = want;
    rows.push_back({MacOf(d), d, std::move(want)});
  }
  return rows;
}

// S43: one table-update message per enabled live NIC whose rows change (policy managed).
void Gateway::SendTableUpdates() {
  if (config_.nic.detours != DetourPolicy::kManaged) return;
  const Topology& t = net_->topology();
  for (size_t k = 0; k < nics_.size(); ++k) {
    const int io = nic_nodes_[k];
    if (register_[k] == 0 || known_faulty_[io] != 0) continue;
    Tagged u;
    u.kind = Tagged::kUpdate;
    u.nic = static_cast<int>(k);
    u.rows = RowChanges(static_cast<int>(k));
    if (u.rows.empty()) continue;
    // A command of 8 bytes per row header + 4 per via node (ours).
    size_t bytes = 8;
    for (const AddressRow& r : u.rows) bytes += 8 + 4 * r.detour.size();
    const std::vector<int> via = io == mgmt_
                                     ? std::vector<int>{}
                                     : FindDetour(*planner_, t, mgmt_, io, known_faulty_, MaxVia())
                                           .value_or(std::vector<int>{});
    net_->CreateMessage(mgmt_, io, Flits(bytes), via, Tag(std::move(u)));
    ++counters_.table_updates_sent;
  }
}

// True when the dimension-order path src -> dst crosses a node the management node knows
// to be faulty.
bool Gateway::KnownBlocked(int src, int dst) const {
  const std::vector<int> path = planner_->Path(net_->topology(), src, dst);
  return std::any_of(path.begin() + 1, path.end(), [&](int v) { return known_faulty_[v] != 0; });
}

// Node i's assignment: the nearest enabled live NIC (fewest hops, ties by NIC order), the
// detour to it when its own way out crosses a known fault (ours, not in the patent), and the
// return detour for its command blocks when the way back does (not with policy none).
Gateway::Command Gateway::AssignmentOf(int i) const {
  const Topology& t = net_->topology();
  Command c;
  c.node = i;
  size_t best_hops = SIZE_MAX;
  for (size_t k = 0; k < nic_nodes_.size(); ++k) {
    if (register_[k] == 0 || known_faulty_[nic_nodes_[k]] != 0) continue;
    const size_t hops = planner_->Path(t, nic_nodes_[k], i).size();
    if (hops < best_hops) c.nic = static_cast<int>(k), best_hops = hops;
  }
  if (c.nic < 0) c.nic = std::max(0, handed_[i].nic);  // no live NIC enabled: keep the old
  const int io = nic_nodes_[c.nic];
  if (io == i) return c;
  if (KnownBlocked(i, io)) {
    c.out = FindDetour(*planner_, t, i, io, known_faulty_, MaxVia()).value_or(std::vector<int>{});
  }
  if (config_.nic.detours != DetourPolicy::kNone && KnownBlocked(io, i)) {
    c.ret = FindDetour(*planner_, t, io, i, known_faulty_, MaxVia()).value_or(std::vector<int>{});
  }
  return c;
}

// Every live node whose assignment changes gets it: directly at boot (job launch before
// traffic), else as a message.
void Gateway::SendAssignments(bool boot) {
  for (int i = 0; i < net_->topology().NumNodes(); ++i) {
    if (known_faulty_[i] != 0) continue;
    Command c = AssignmentOf(i);
    const Command& h = handed_[i];
    if (c.nic == h.nic && c.out == h.out && c.ret == h.ret) continue;
    handed_[i] = c;
    if (boot) {
      io_of_[i] = c.nic;
      out_detour_[i] = std::move(c.out);
      return_detour_[i] = std::move(c.ret);
      continue;
    }
    SendCommand(i, std::move(c));
    ++counters_.egress_updates_sent;
  }
}

// A command message management node -> dst: 8 bytes + 4 per via node it carries (ours),
// with a detour round the known faults.
void Gateway::SendCommand(int dst, Command c) {
  const size_t bytes = 8 + 4 * (c.out.size() + c.ret.size());
  const std::vector<int> via =
      dst == mgmt_ ? std::vector<int>{}
                   : FindDetour(*planner_, net_->topology(), mgmt_, dst, known_faulty_, MaxVia())
                         .value_or(std::vector<int>{});
  Tagged m;
  m.kind = Tagged::kCommand;
  const int64_t tag = Tag(std::move(m));
  commands_.emplace(tag, std::move(c));
  net_->CreateMessage(mgmt_, dst, Flits(bytes), via, tag);
}

// A command arrived (or was undeliverable: counted, sent again at the next event).
void Gateway::ApplyCommand(int64_t tag, bool delivered) {
  auto it = commands_.find(tag);
  if (it == commands_.end()) return;
  Command c = std::move(it->second);
  commands_.erase(it);
  if (!delivered) {
    ++counters_.management_messages_lost;
    if (c.kind == Command::kAssign) {
      handed_[c.node].nic = -1;
    } else {
      commanded_[c.nic] = 2;
    }
    return;
  }
  if (c.kind == Command::kAssign) {
    io_of_[c.node] = c.nic;
    out_detour_[c.node] = std::move(c.out);
    return_detour_[c.node] = std::move(c.ret);
  } else {
    SetNicUp(c.nic, c.kind == Command::kEnable);
  }
}

// The NIC's setting unit applies an enable/disable command; the external switch sees the
// link go up or down. Down: the switch forgets the MACs it learned behind that NIC (they go
// by the unknown-MAC rule until learned again), and the frames waiting at the NIC are
// dropped (counted; retransmitted or lost as any lost frame).
void Gateway::SetNicUp(int k, bool up) {
  if ((nic_on_[k] != 0) == up) return;
  nic_on_[k] = up ? 1 : 0;
  ports_up_.clear();
  for (size_t j = 0; j < nic_on_.size(); ++j) {
    if (nic_on_[j] != 0) ports_up_.push_back(static_cast<int>(j));
  }
  if (up) return;
  std::erase_if(switch_table_, [k](const auto& entry) { return entry.second == k; });
  while (!nic_queue_[k].empty()) {
    const int64_t id = nic_queue_[k].front().second;
    nic_queue_[k].pop_front();
    ++counters_.frames_dropped_disabled;
    Finish(id, false);
  }
  while (!egress_cpu_queue_[k].empty()) {  // Fig. 1: egress frames at the I/O node's CPU
    Tagged t = std::move(egress_cpu_queue_[k].front().second);
    egress_cpu_queue_[k].pop_front();
    ++counters_.egress_dropped_disabled;
    EgressLost(std::move(t));
  }
}

// A table update the interconnect could not deliver: its rows are sent again.
void Gateway::UpdateLost(const Tagged& t) {
  ++counters_.management_messages_lost;
  for (const AddressRow& r : t.rows) mgmt_rows_[t.nic][r.node] = {-1};
}

// An egress packet that did not leave (undeliverable, or its NIC disabled): re-sent from its
// source after the timeout with nic.retransmit, else lost.
void Gateway::EgressLost(Tagged t) {
  const NicConfig& c = config_.nic;
  if (c.retransmit && t.tries < c.retransmit_max && !net_->faults().NodeFaulty(t.node)) {
    egress_retries_.emplace_back(net_->now() + c.retransmit_timeout_cycles, std::move(t));
    return;
  }
  ++counters_.egress_lost;
}

Status Gateway::ResendEgress() {
  while (!egress_retries_.empty() && egress_retries_.front().first <= net_->now()) {
    Tagged t = std::move(egress_retries_.front().second);
    egress_retries_.pop_front();
    Result<wire::GatewayPacket> p = wire::DecodePacket(t.bytes);
    if (!p.ok()) return p.status();
    ++counters_.egress_retransmitted;
    SendEgressTry(t.node, p->frame, t.tries + 1);
  }
  return Status::Ok();
}

}  // namespace ukai::sim
