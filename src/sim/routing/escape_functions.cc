#include "sim/routing/escape_functions.h"

#include "sim/routing/dimension_order.h"

namespace ukai::sim {
namespace {

void AddMask(int port, uint32_t mask, std::vector<EscapeHop>* out) {
  for (uint32_t m = mask; m != 0; m &= m - 1) out->push_back({port, __builtin_ctz(m)});
}

}  // namespace

std::string DorEscape::Describe() const {
  switch (dateline_) {
    case DorDateline::kShared:
      return "dimension order with the shared dateline on every VC";
    case DorDateline::kBooksim:
      return "dimension order with BookSim2's dateline classes (fixed at a dimension's entry)";
    case DorDateline::kSplit:
      break;
  }
  return "dimension order with dateline classes on every VC";
}

void DorEscape::Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const {
  const DorHop hop = NextDorHop(t_, node, dst);
  if (hop.port < 0) return;
  Add(hop.port, hop.dim, hop.dateline_class, node, in_port, in_vc, dst, out);
  if (tie_ != DorTieRule::kPlus && t_.torus() &&
      2 * t_.Offset(hop.dim, t_.Coord(node, hop.dim), t_.Coord(dst, hop.dim)) == t_.k(hop.dim)) {
    const DorHop minus = NextDorHop(t_, node, dst, 1u << hop.dim);
    Add(minus.port, minus.dim, minus.dateline_class, node, in_port, in_vc, dst, out);
  }
}

void DorEscape::Add(int port, int dim, int cls, int node, int in_port, int in_vc, int dst,
                    std::vector<EscapeHop>* out) const {
  uint32_t mask;
  if (!t_.torus()) {
    mask = vcs_ >= 32 ? ~0u : (1u << vcs_) - 1;
  } else if (dateline_ == DorDateline::kBooksim) {
    // The class was fixed where the message entered the ring; the checker knows only where
    // the head is: along the ring its VC tells the class (both where the classes share a VC),
    // entering the ring the class follows from here.
    const bool plus = (port & 1) == 0;
    if (in_port == (port ^ 1)) {
      mask = 0;
      for (int c = 0; c < 2; ++c) {
        if ((BooksimClassMask(vcs_, c) >> in_vc & 1u) != 0) mask |= BooksimClassMask(vcs_, c);
      }
    } else {
      mask = BooksimClassMask(vcs_,
                              BooksimDatelineClass(plus, t_.Coord(node, dim), t_.Coord(dst, dim)));
    }
  } else if (dateline_ == DorDateline::kShared) {
    mask = SharedDatelineMask(t_, DorHop{port, dim, cls}, node, dst, in_port, in_vc, vcs_);
  } else {
    mask = ClassMask(0, vcs_, cls);
  }
  AddMask(port, mask, out);
}

void UpDownEscape::Next(int node, int in_port, int, int dst, std::vector<EscapeHop>* out) const {
  bool down = false;
  if (in_port < t_.NumNetworkPorts()) {
    down = !tables_.IsUpChannel(t_.Neighbor(node, in_port).node, node);
  }
  for (uint32_t m = tables_.Ports(node, dst, down); m != 0; m &= m - 1) {
    AddMask(__builtin_ctz(m), mask_, out);
  }
}

RoutedEscape::RoutedEscape(const Topology& t, const RoutingFunction& routing, int vcs,
                           RoutedEscapeSpec spec)
    : t_(t), routing_(routing), spec_(std::move(spec)), adaptive_vc_(-1) {
  for (int v = 0; v < vcs && v < 32; ++v) {
    if ((spec_.escape_vcs >> v & 1u) == 0) {
      adaptive_vc_ = v;
      break;
    }
  }
}

void RoutedEscape::Route(int node, int in_port, int in_vc, int dst, RouteResult* out) const {
  const bool on_escape = in_port < t_.NumNetworkPorts() && in_vc >= 0 && in_vc < 32 &&
                         (spec_.escape_vcs >> in_vc & 1u);
  uint32_t state = on_escape ? spec_.escape_state : 0;
  RouteRequest r;
  r.node = node;
  r.in_port = in_port;
  r.in_vc = in_vc;
  r.src = node;
  r.dst = dst;
  r.length_flits = 1;
  r.blocked_cycles = on_escape ? 0 : spec_.entry_blocked;
  r.message_state = &state;
  out->Clear();
  routing_.Route(r, out);
}

void RoutedEscape::Next(int node, int in_port, int in_vc, int dst,
                        std::vector<EscapeHop>* out) const {
  RouteResult result;
  Route(node, in_port, in_vc, dst, &result);
  for (int i = 0; i < result.size(); ++i) {
    AddMask(result[i].port, result[i].vc_mask & spec_.escape_vcs, out);
  }
}

uint32_t RoutedEscape::AdaptivePorts(int node, int in_port, int in_vc, int dst) const {
  RouteResult result;
  Route(node, in_port, in_vc, dst, &result);
  uint32_t ports = 0;
  for (int i = 0; i < result.size(); ++i) {
    if ((result[i].vc_mask & ~spec_.escape_vcs) != 0) ports |= 1u << result[i].port;
  }
  return ports;
}

}  // namespace ukai::sim
