// `dor-detour`: dimension-order routing with via-node detours (the gateway patent, seed
// 000 ¶92, ¶116), on any topology with a DorPlanner (mesh, torus, group).
//
// A message may carry a list of via nodes (Message::via, at most Message::kMaxVia). On its
// normal path it is routed in dimension order to its destination. When the normal path is
// blocked by a fault and the message carries a detour, it switches to the detour: it is
// routed in dimension order to the first via node, then to the next, then to its
// destination. Where it switches (routing.detour_switch, the patent's two variants):
//   - "aware": every router knows which nodes and channels are faulty (the topology's
//     liveness); a message switches at the first router from which the dimension-order
//     path to its destination crosses a fault — for faults present at injection that is
//     its source;
//   - "detector": only the node next to the fault notices it: a message switches at the
//     router whose next normal hop leads to a dead channel or node (that node "adds the
//     detour selection to the header"); the legs then start there.
// Without a detour, or when a detour leg itself meets a fault, the message has no live
// candidate and the router drains it as undeliverable (counted by the Network).
//
// Deadlock freedom (ours): the VCs are split into L = min(3, vcs / C) layers of C classes
// (C = DorPlanner::classes(): 2 dateline classes on rings, 1 on a mesh), each class
// per_class = vcs / (L * C) VCs. Every dimension-order leg runs on one layer; a message
// starts on layer 0 and moves one layer up each time it starts a new leg (switching away
// from its normal path mid-way, or leaving a via node); switching at its source starts
// the first detour leg on layer 0. Each layer is dimension-order routing with dateline
// classes (deadlock free), and messages only move to higher layers, so the channel
// dependency graph has no cycle. A message that would need a layer beyond L - 1 is
// undeliverable (so with the default 4 VCs on a ring, one via node switched at the
// source; 6 VCs allow a mid-way switch with one via node).
//
// Message state word: bits 0-7 via nodes passed, bit 8 on the detour, bits 9-15 layer.
// Thread safety: Route() is const and reads only the topology's liveness.
#ifndef UKAI_SIM_ROUTING_DETOUR_H_
#define UKAI_SIM_ROUTING_DETOUR_H_

#include <memory>

#include "sim/routing/dor_planner.h"
#include "sim/routing/routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

enum class DetourSwitch { kAware, kDetector };

class DetourRouting final : public RoutingFunction {
 public:
  static constexpr int kMaxLayers = 3;
  // `planner` must be DorPlanner::For(topology); `vcs` >= 2 * planner->classes().
  DetourRouting(const Topology& topology, std::unique_ptr<DorPlanner> planner, int vcs,
                DetourSwitch mode);
  void Route(const RouteRequest& request, RouteResult* result) const override;

  int layers() const { return layers_; }
  // The state word of a message on its detour, on VC layer `layer`, having passed `passed`
  // of its via nodes (the deadlock checker, detour_check.h, routes such messages).
  static uint32_t DetourState(int layer, int passed);

 private:
  uint32_t Mask(int layer, int cls) const {
    return LayerClassMask(layer, planner_->classes(), per_class_, cls);
  }
  bool Blocked(int node, int dst) const;

  const Topology& topo_;
  std::unique_ptr<DorPlanner> planner_;
  DetourSwitch mode_;
  int layers_;
  int per_class_;
};

// Plain dimension-order routing on a topology with a DorPlanner (the group topology's
// `dor`): every VC of the dateline class (ClassMask of dimension_order.h).
class PlannedDorRouting final : public RoutingFunction {
 public:
  PlannedDorRouting(std::unique_ptr<DorPlanner> planner, int vcs)
      : planner_(std::move(planner)), vcs_(vcs) {}
  void Route(const RouteRequest& request, RouteResult* result) const override;

 private:
  std::unique_ptr<DorPlanner> planner_;
  int vcs_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DETOUR_H_
