#include "sim/routing/valiant.h"

#include <bit>
#include <string>
#include <vector>

#include "sim/routing/dimension_order.h"

namespace ukai::sim {
namespace {

constexpr uint32_t kPhaseBit = 1u << 4;

}  // namespace

int TwoPhaseRouting::Intermediate(int src, int dst, int64_t created) const {
  uint64_t h =
      Mix64((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) ^ static_cast<uint32_t>(dst) ^
            (static_cast<uint64_t>(created) * 0x9e3779b97f4a7c15ULL));
  if (!romm_) return static_cast<int>(h % static_cast<uint64_t>(topo_.NumNodes()));
  int mid = 0;
  for (int d = 0; d < topo_.n(); ++d) {
    const int s = topo_.Coord(src, d);
    const int off = topo_.Offset(d, s, topo_.Coord(dst, d));
    const int span = off < 0 ? -off : off;
    const int step = static_cast<int>(h % static_cast<uint64_t>(span + 1));
    h = Mix64(h + 1);
    const int k = topo_.k(d);
    const int c = ((s + (off < 0 ? -step : step)) % k + k) % k;
    mid += c * topo_.stride(d);
  }
  return mid;
}

void TwoPhaseRouting::Hop(int node, int target, int phase, int* port, uint32_t* mask) const {
  const DorHop hop = NextDorHop(topo_, node, target);
  *port = hop.port;
  const int half = vcs_ / 2;
  const int first = phase == 0 ? 0 : half;
  const int count = phase == 0 ? half : vcs_ - half;
  *mask = topo_.torus() ? ClassMask(first, count, hop.dateline_class)
                        : (((count >= 32) ? ~0u : ((1u << count) - 1)) << first);
}

void TwoPhaseRouting::Route(const RouteRequest& r, RouteResult* result) const {
  uint32_t& state = *r.message_state;
  if (r.in_port == topo_.PePort()) state &= ~kPhaseBit;
  const int mid = Intermediate(r.src, r.dst, r.created);
  if ((state & kPhaseBit) == 0 && r.node == mid) state |= kPhaseBit;
  const int phase = (state & kPhaseBit) != 0 ? 1 : 0;
  int port = -1;
  uint32_t mask = 0;
  if (via_destination_ && r.node == r.dst) {  // asked at the destination (RoutesAtDestination)
    const uint32_t all = vcs_ >= 32 ? ~0u : (1u << vcs_) - 1;
    if (phase == 1) {
      result->Add(RouteResult::kEjectPort, all);
      return;
    }
    // Passing the destination in phase 0: on to the intermediate node, on every VC.
    Hop(r.node, mid, phase, &port, &mask);
    if (port >= 0) result->Add(port, all);
    return;
  }
  Hop(r.node, phase == 0 ? mid : r.dst, phase, &port, &mask);
  if (port >= 0) result->Add(port, mask);
}

namespace {

class TwoPhaseEscape final : public EscapeFunction {
 public:
  explicit TwoPhaseEscape(const TwoPhaseRouting& r) : r_(r) {}
  std::string Describe() const override {
    return "two-phase dimension order (phase 0 on the lower half of the VCs, phase 1 on the "
           "upper; dateline classes in each half on a torus)";
  }
  std::string Rationale() const override {
    return "one exploration per intermediate node; the phase follows from the VC's half";
  }
  int Variants() const override { return r_.topology().NumNodes(); }
  void SelectVariant(int variant) const override { mid_ = variant; }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override {
    int phase = in_port == r_.topology().PePort() ? 0 : (in_vc >= r_.vcs() / 2 ? 1 : 0);
    if (phase == 0 && node == mid_) phase = 1;
    int port = -1;
    uint32_t mask = 0;
    r_.Hop(node, phase == 0 ? mid_ : dst, phase, &port, &mask);
    if (port < 0) return;
    // BookSim2's valiant passes the destination in phase 0 on every VC.
    if (r_.via_destination() && phase == 0 && node == dst) {
      mask = r_.vcs() >= 32 ? ~0u : (1u << r_.vcs()) - 1;
    }
    for (uint32_t m = mask; m != 0; m &= m - 1) out->push_back({port, std::countr_zero(m)});
  }

 private:
  const TwoPhaseRouting& r_;
  mutable int mid_ = 0;
};

}  // namespace

std::unique_ptr<EscapeFunction> TwoPhaseRouting::Escape() const {
  return std::make_unique<TwoPhaseEscape>(*this);
}

}  // namespace ukai::sim
