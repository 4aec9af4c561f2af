// `detour-nf`: Duato's fully adaptive routing plus a Negative-First partially adaptive VC
// for non-minimal routes round faults (spec detour-ud.md, Table 1: 2 non-adaptive + 1 fully
// adaptive + 1 partially adaptive VC at 4 VCs), on a k-ary n-cube.
//
// VCs: escape VCs [0, e) run dimension-order routing with dateline classes (e = 2 on a
// torus, 1 on a mesh, as `duato`); VC e is the Negative-First (NF) VC; the rest are
// fully adaptive (router.vcs >= 4 on a torus, >= 3 on a mesh).
// Per head (Duato's protocol with a fault-dependent escape):
//   - on the NF VC (it arrived on it): Negative-First only, to the destination: legal
//     paths take "-" channels then "+" channels, never a wrap-around channel of a torus
//     (so its channel dependencies are acyclic), and follow a shortest legal path in the
//     network with its faults removed (PhasedPathTable; the "+" phase is kept in the
//     routing state). It never returns to the other VCs. On a torus the NF sub-network is
//     the mesh left by cutting every ring once: at the wrap-around channels by default;
//     with faults, the first cut position (over up to kMaxCuts combinations) that leaves
//     no pair without an escape (a reconfiguration-time choice, like a table).
//   - else tier 0: every live minimal direction on the adaptive VCs; tier 1 (escape): the
//     dimension-order hop on its dateline VC when the whole dimension-order path from here
//     is fault-free, otherwise the NF VC along a shortest Negative-First path.
// The escape sub-function (DOR where its path is intact, else NF) is connected wherever
// NF can route round the faults and its extended dependency graph is acyclic (NF never
// depends on the other VCs), so Duato's theorem applies; VC allocation is atomic as in
// `duato`.
// Placements it cannot handle: a (node, destination) pair whose dimension-order path is
// broken and that has no Negative-First path in the mesh sub-network (wrap-around channels
// excluded) without faults — e.g. a fault next to the destination on its "-" side in
// every dimension that the route must enter from (tests/sim/detour_nf_test.cc). Such pairs
// at cycle 0 are a config error (Unroutable()); after a timed fault, messages with no way
// on are drained as undeliverable (counted), never a hang.
#ifndef UKAI_SIM_ROUTING_DETOUR_NF_H_
#define UKAI_SIM_ROUTING_DETOUR_NF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/routing/phased_table.h"
#include "sim/routing/route_state.h"
#include "sim/routing/routing.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

class DetourNfRouting final : public RoutingFunction {
 public:
  static constexpr uint32_t kNfBit = 1u << 4;  // took the NF VC (kRoutingBits)

  DetourNfRouting(const KaryNCube& topology, int vcs);
  void Route(const RouteRequest& request, RouteResult* result) const override;
  bool AtomicVcAllocation() const override { return true; }
  void TopologyChanged() override { Rebuild(); }

  int nf_vc() const { return nf_vc_; }
  // Whether the dimension-order path from node to dst avoids every fault.
  bool DorPathIntact(int node, int dst) const {
    return dor_ok_[static_cast<size_t>(node) * topo_.NumNodes() + dst] != 0;
  }
  const PhasedPathTable& nf_table() const { return nf_; }
  static constexpr int64_t kMaxCuts = 4096;

  // The ring cut of dimension d: the channel between coordinates cut(d) and cut(d) + 1.
  int cut(int d) const { return cut_[d]; }
  // "" when every healthy (node, destination) pair has an escape (an intact DOR path or a
  // Negative-First path), else a description of the first pair that has none.
  std::string Unroutable() const;

 private:
  void Rebuild();
  void BuildNf();

  const KaryNCube& topo_;
  int escape_vcs_, nf_vc_;
  uint32_t adaptive_mask_;
  std::vector<uint8_t> dor_ok_;  // node * N + dst
  std::vector<int> cut_;         // per dimension (torus), see cut()
  PhasedPathTable nf_;           // phase 0 = "-" channels, phase 1 = "+" channels
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DETOUR_NF_H_
