#include "sim/routing/detour_nf.h"

#include <algorithm>
#include <cstdlib>

#include "sim/routing/dimension_order.h"

namespace ukai::sim {

DetourNfRouting::DetourNfRouting(const KaryNCube& topology, int vcs)
    : topo_(topology), escape_vcs_(topology.torus() ? 2 : 1), nf_vc_(escape_vcs_) {
  const uint32_t all = vcs >= 32 ? ~0u : ((1u << vcs) - 1);
  adaptive_mask_ = all & ~((2u << nf_vc_) - 1);
  Rebuild();
}

void DetourNfRouting::Rebuild() {
  const int n = topo_.NumNodes();
  // dor_ok(v, d): v == d, or the DOR hop from v is live and dor_ok(next, d). Walk each
  // path once, memoising (0 unknown, 1 intact, 2 broken).
  std::vector<uint8_t> memo(static_cast<size_t>(n) * n, 0);
  std::vector<int> path;
  for (int d = 0; d < n; ++d) {
    for (int v = 0; v < n; ++v) {
      path.clear();
      int u = v;
      uint8_t verdict = 1;
      while (u != d) {
        const uint8_t known = memo[static_cast<size_t>(u) * n + d];
        if (known != 0) {
          verdict = known;
          break;
        }
        path.push_back(u);
        const DorHop hop = NextDorHop(topo_, u, d);
        if (!topo_.NodeAlive(u) || !topo_.ChannelAlive(u, hop.port)) {
          verdict = 2;
          break;
        }
        u = topo_.Neighbor(u, hop.port).node;
      }
      if (!topo_.NodeAlive(d)) verdict = 2;
      for (int w : path) memo[static_cast<size_t>(w) * n + d] = verdict;
    }
  }
  dor_ok_.assign(memo.size(), 0);
  for (size_t i = 0; i < memo.size(); ++i) dor_ok_[i] = memo[i] != 2 ? 1 : 0;
  // The NF sub-network is the mesh left when each ring of a torus is cut at one place.
  // Try the cut positions (dimension 0 fastest, starting from the wrap-around channels)
  // until every pair has an escape; keep the wrap-around cut when none works.
  cut_.assign(topo_.n(), 0);
  for (int d = 0; d < topo_.n(); ++d) cut_[d] = topo_.torus() ? topo_.k(d) - 1 : -1;
  if (!topo_.torus() || !topo_.AnyFault()) {
    BuildNf();
    return;
  }
  int64_t combos = 1;
  for (int d = 0; d < topo_.n(); ++d) combos = std::min<int64_t>(combos * topo_.k(d), kMaxCuts);
  std::vector<int> start = cut_;
  for (int64_t i = 0; i < combos; ++i) {
    int64_t rest = i;
    for (int d = 0; d < topo_.n(); ++d) {
      cut_[d] = static_cast<int>((start[d] + rest) % topo_.k(d));
      rest /= topo_.k(d);
    }
    BuildNf();
    if (Unroutable().empty()) return;
  }
  cut_ = start;
  BuildNf();
}

void DetourNfRouting::BuildNf() {
  nf_.Build(topo_, [&](int v, int p) {
    const int d = p / 2;
    const int c = topo_.Coord(v, d);
    const bool plus = p % 2 == 0;
    if (topo_.torus() && (plus ? c == cut_[d] : c == (cut_[d] + 1) % topo_.k(d))) return -1;
    return plus ? 1 : 0;
  });
}

std::string DetourNfRouting::Unroutable() const {
  const int n = topo_.NumNodes();
  for (int v = 0; v < n; ++v) {
    for (int d = 0; d < n; ++d) {
      if (v == d || !topo_.NodeAlive(v) || !topo_.NodeAlive(d) || DorPathIntact(v, d)) continue;
      if (nf_.Distance(v, d, false) == PhasedPathTable::kUnreachable) {
        return "no escape from " + topo_.NodeName(v) + " to " + topo_.NodeName(d) +
               ": its dimension-order path crosses a fault and no Negative-First path "
               "avoids them";
      }
    }
  }
  return "";
}

void DetourNfRouting::Route(const RouteRequest& r, RouteResult* result) const {
  uint32_t& state = *r.message_state;
  CountMisroute(topo_, r, &state);
  const bool net_in = r.in_port < topo_.NumNetworkPorts();
  if (net_in && r.in_vc == nf_vc_) {  // on the NF VC: Negative-First to the end
    state |= kNfBit;
    const PortRef back = topo_.Neighbor(r.node, r.in_port);
    if (back.valid() && back.port % 2 == 0) state |= kDownBit;  // came by a "+" channel
    const uint32_t ports = nf_.Ports(r.node, r.dst, (state & kDownBit) != 0);
    for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), 1u << nf_vc_);
    return;
  }
  for (int d = 0; d < topo_.n(); ++d) {  // tier 0: fully adaptive minimal
    const int c = topo_.Coord(r.node, d);
    const int t = topo_.Coord(r.dst, d);
    if (c == t) continue;
    const int off = topo_.Offset(d, c, t);
    result->Add(2 * d + (off > 0 ? 0 : 1), adaptive_mask_, 0);
    if (topo_.torus() && 2 * std::abs(off) == topo_.k(d)) result->Add(2 * d + 1, adaptive_mask_, 0);
  }
  if (DorPathIntact(r.node, r.dst)) {  // tier 1: the escape
    const DorHop hop = NextDorHop(topo_, r.node, r.dst);
    result->Add(hop.port, topo_.torus() ? (hop.dateline_class == 0 ? 1u : 2u) : 1u, 1);
    return;
  }
  const uint32_t ports = nf_.Ports(r.node, r.dst, false);
  for (uint32_t m = ports; m != 0; m &= m - 1) result->Add(__builtin_ctz(m), 1u << nf_vc_, 1);
}

}  // namespace ukai::sim
