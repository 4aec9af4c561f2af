// The event-driven communication controller (Figs 19-21, 26 and 42): it runs only on the
// two events, a new communication and a finished communication, and sleeps otherwise.
//
// New communication (S201-S210): append row X; if row X-1 waits, X waits too (arrival order
// is kept); else link verification: the direct links of the operation (for collectives all
// links between the communicator's members it needs) and, for p2p, multicast, reduce and
// allreduce (and, with group_relay, scatter and gather: Fig. 29), the 1-hop links:
//   fixed-k (embodiment 3): every relay (p2p K = N-2, multicast K = N with the sender,
//     reduce / allreduce K = N); decide with the size rule; start if every needed link and
//     relay unit is idle, else wait;
//   variable-k (embodiments 1 and 6): direct selection is all-or-nothing; 1-hop selection
//     takes up to k_max relays whose hops are all idle (at least k_min); both -> size rule;
//     one -> use it (1-hop only when the direct links are busy); none -> wait;
//   direct: the plain full mesh.
// Finished communication (S261-S271): release its links, delete the row (rows below move
// up), then try the waiting rows from the top in order and stop at the first that still
// cannot start (read literally, Fig. 26 retries that row for ever: claims-004 X9).
// When all 1024 numbers are taken, new communications queue (in order) outside the table.
//
// Thread safety: none; one thread drives a Controller.
#ifndef UKAI_SIM_FULLMESH_CONTROLLER_H_
#define UKAI_SIM_FULLMESH_CONTROLLER_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/fullmesh/fullmesh_types.h"
#include "sim/fullmesh/plan.h"
#include "sim/fullmesh/tables.h"

namespace ukai::sim::fullmesh {

// A communication the controller started.
struct Started {
  int64_t op_index = -1;
  Operation op;
  int16_t number = 0;
  Plan plan;
  double baseline_us = -1;  // the direct-only plan's duration when already timed, else -1
};

class Controller {
 public:
  // `config` is copied and must be valid (ValidateFullMesh); so must every operation.
  explicit Controller(const FullMeshConfig& config);

  // New-communication event for `op` (the workload's operation number `op_index`); appends
  // what starts to `started`. The row keeps a copy of the operation.
  void OnNew(int64_t op_index, const Operation& op, std::vector<Started>* started);
  // Communication-finished event for the row with `number`.
  void OnFinish(int16_t number, std::vector<Started>* started);

  const CommTable& comm_table() const { return comm_; }
  const LinkTable& link_table() const { return links_; }
  int relay_units_busy(int node) const { return relay_busy_[node]; }
  size_t queued_outside() const { return overflow_.size(); }
  // The timing of operations of type `t` (reductions have their own relay kind and T1).
  const TimingParams& timing(OpType t) const { return IsReduction(t) ? reduce_timing_ : timing_; }
  PlanTimer* timer() { return &timer_; }

 private:
  // Link verification for the row at `pos`: true (and `plan`) when it can start now.
  bool Select(const CommRow& row, Plan* plan);
  // Both take the operation's direct-only plan in `direct`.
  bool SelectVariable(const Operation& op, const std::vector<int>& members,
                      const std::vector<int>& pool, Plan direct, Plan* plan);
  bool SelectGroupRelay(const Operation& op, const std::vector<int>& members,
                        const std::vector<int>& pool, Plan direct, Plan* plan);
  // The relay plan of `op` over `relays` (with the direct link for p2p when `direct`).
  Plan RelayPlan(const Operation& op, const std::vector<int>& members,
                 const std::vector<int>& relays, bool direct) const;
  // The size rule: true when the relay plan should be used rather than the direct one.
  // first-principles times both plans and keeps the times (Plan::predicted_us).
  bool UseRelays(const Operation& op, Plan& direct, Plan& relayed);
  // Nodes that may relay for `op` (before idleness checks), ascending.
  std::vector<int> RelayPool(const Operation& op, const std::vector<int>& members) const;
  // True when every link of `plan` has an idle plane link and every relay a free unit.
  bool Available(const Plan& plan) const;
  bool RelayFree(int node) const { return relay_busy_[node] < relay_units_; }
  void TryStart(size_t pos, std::vector<Started>* started, bool* ok);
  void Admit(int64_t op_index, const Operation& op, std::vector<Started>* started);
  CommRow MakeRow(int64_t op_index, const Operation& op) const;

  FullMeshConfig config_;
  TimingParams timing_;         // p2p, multicast, scatter, gather, ...: T1 of fullmesh.relay
  TimingParams reduce_timing_;  // reduce, allreduce: T1 of the reduce relay
  CommTable comm_;
  LinkTable links_;
  std::vector<int> relay_busy_;
  int relay_units_;
  std::deque<std::pair<int64_t, Operation>> overflow_;
  PlanTimer timer_;
  double last_direct_us_ = -1;  // the direct plan's time in the current Select, if timed
};

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_CONTROLLER_H_
