#include "sim/routing/detour.h"

#include <algorithm>

namespace ukai::sim {
namespace {

constexpr uint32_t kViaMask = 0xFF;
constexpr uint32_t kOnDetour = 1u << 8;
constexpr int kLayerShift = 9;

}  // namespace

DetourRouting::DetourRouting(const Topology& topology, std::unique_ptr<DorPlanner> planner, int vcs,
                             DetourSwitch mode)
    : topo_(topology), planner_(std::move(planner)), mode_(mode) {
  const int c = planner_->classes();
  layers_ = std::max(1, std::min(kMaxLayers, vcs / c));
  per_class_ = std::max(1, vcs / (layers_ * c));
}

uint32_t DetourRouting::DetourState(int layer, int passed) {
  return kOnDetour | static_cast<uint32_t>(passed) | (static_cast<uint32_t>(layer) << kLayerShift);
}

bool DetourRouting::Blocked(int node, int dst) const {
  if (!topo_.AnyFault()) return false;
  if (mode_ == DetourSwitch::kAware) return planner_->PathBlocked(topo_, node, dst);
  const DorHop hop = planner_->Next(node, dst);
  const PortRef next = topo_.LiveNeighbor(node, hop.port);
  return !next.valid() || !topo_.NodeAlive(next.node);
}

void DetourRouting::Route(const RouteRequest& req, RouteResult* result) const {
  uint32_t state = *req.message_state;
  int passed = static_cast<int>(state & kViaMask);
  int layer = static_cast<int>(state >> kLayerShift);
  bool switched_here = false;
  if ((state & kOnDetour) == 0) {
    if (req.via_count == 0 || !Blocked(req.node, req.dst)) {
      const DorHop hop = planner_->Next(req.node, req.dst);
      result->Add(hop.port, Mask(0, hop.dateline_class));
      return;
    }
    state |= kOnDetour;  // switch: from the source on layer 0, mid-way one layer up
    if (req.in_port != topo_.PePort()) ++layer;
    switched_here = true;
  }
  bool reached_via = false;
  while (passed < req.via_count && req.via[passed] == req.node) {
    ++passed;
    reached_via = true;
  }
  if (reached_via && !switched_here) ++layer;  // a leg ended here; the next one starts
  *req.message_state = (state & kOnDetour) | static_cast<uint32_t>(passed) |
                       (static_cast<uint32_t>(layer) << kLayerShift);
  if (layer >= layers_) return;  // out of VC layers: undeliverable
  const int target = passed < req.via_count ? req.via[passed] : req.dst;
  const DorHop hop = planner_->Next(req.node, target);
  if (hop.port < 0) return;
  result->Add(hop.port, Mask(layer, hop.dateline_class));
}

void PlannedDorRouting::Route(const RouteRequest& req, RouteResult* result) const {
  const DorHop hop = planner_->Next(req.node, req.dst);
  if (hop.port < 0) return;
  const uint32_t all = vcs_ >= 32 ? ~0u : ((1u << vcs_) - 1);
  result->Add(hop.port, planner_->classes() == 2 ? ClassMask(0, vcs_, hop.dateline_class) : all);
}

}  // namespace ukai::sim
