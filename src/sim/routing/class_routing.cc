#include "sim/routing/class_routing.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "sim/router/selection.h"
#include "sim/routing/dimension_order.h"

namespace ukai::sim {
namespace {

constexpr int kStateShift = 4;

uint64_t MessageSeed(int src, int dst, int64_t created) {
  return Mix64((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) ^
               static_cast<uint32_t>(dst) ^
               (static_cast<uint64_t>(created) * 0x9e3779b97f4a7c15ULL));
}

// VCs lo..hi-1 of class `cls` among `classes` equal classes of `vcs` VCs.
uint32_t RangeMask(int vcs, int classes, int cls) {
  const int lo = cls * vcs / classes, hi = (cls + 1) * vcs / classes;
  return static_cast<uint32_t>(((uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1));
}

}  // namespace

ClassRouting::ClassRouting(const SwitchTopology& topology, int vcs, int classes,
                           std::string describe, bool one_vc_per_class)
    : topo_(topology),
      vcs_(vcs),
      classes_(classes),
      describe_(std::move(describe)),
      one_vc_per_class_(one_vc_per_class) {}

uint32_t ClassRouting::ClassMask(int cls) const {
  if (cls < 0 || cls >= classes_) return 0;
  return one_vc_per_class_ ? 1u << cls : RangeMask(vcs_, classes_, cls);
}

uint32_t ClassRouting::InjectionMask() const {
  return one_vc_per_class_ ? RangeMask(vcs_, 1, 0) : ClassMask(0);
}

uint32_t ClassRouting::EjectionMask(uint32_t state, bool fresh) const {
  return one_vc_per_class_ ? ClassMask(EjectClass(state, fresh)) : RangeMask(vcs_, 1, 0);
}

int ClassRouting::ClassOfVc(int vc) const {
  for (int c = 0; c < classes_; ++c) {
    if ((ClassMask(c) >> vc) & 1u) return c;
  }
  return -1;
}

int ClassRouting::UsedCredits(const RouteRequest& request, int port, int vcs) {
  if (request.out_vcs == nullptr) return 0;
  int used = 0;
  const OutputVcState* base = request.out_vcs + static_cast<size_t>(port) * request.out_vc_stride;
  for (int v = 0; v < vcs; ++v) used += std::max(0, request.vc_depth - base[v].credits);
  return used;
}

void ClassRouting::Route(const RouteRequest& r, RouteResult* result) const {
  if (topo_.IsTerminal(r.node)) {  // a terminal's one port
    result->Add(0, InjectionMask());
    return;
  }
  const int router = topo_.RouterOf(r.node);
  const int dst_router = topo_.DestinationRouter(r.dst);
  const bool fresh =
      r.in_port == topo_.PePort() || topo_.IsTerminal(topo_.Neighbor(r.node, r.in_port).node);
  uint32_t state = fresh ? 0 : (*r.message_state >> kStateShift) & 0xF;
  if (dst_router == router) {  // eject towards the destination terminal
    result->Add(topo_.TerminalPort(r.dst), EjectionMask(state, fresh));
    return;
  }
  const uint64_t seed = MessageSeed(r.src, r.dst, r.created);
  const uint64_t hop_seed = ChoicePerHop() ? Mix64(seed + static_cast<uint64_t>(router)) : seed;
  const At at{
      router,     r.dst,
      dst_router, topo_.IsTerminal(r.src) ? topo_.TerminalRouter(r.src) : topo_.RouterOf(r.src),
      fresh,      static_cast<int>(hop_seed % static_cast<uint64_t>(Choices())),
      -1,         &r};
  RouteAt(at, &state, result);
  *r.message_state = (*r.message_state & ~(0xFu << kStateShift)) | (state << kStateShift);
}

// The checker's view of a ClassRouting (see the header).
class ClassEscape final : public EscapeFunction {
 public:
  explicit ClassEscape(const ClassRouting& r) : r_(r) {}
  std::string Describe() const override { return r_.describe_; }
  int Variants() const override { return r_.ChoicePerHop() ? 1 : r_.Choices(); }
  void SelectVariant(int variant) const override { variant_ = variant; }
  std::string Rationale() const override {
    return "every VC; ejections on every VC; hops unioned over every routing state of the arriving "
           "VC's class and "
           "both adaptive decisions; a per-message random choice fixed per exploration, one "
           "exploration per choice";
  }
  void Next(int node, int in_port, int in_vc, int dst, std::vector<EscapeHop>* out) const override {
    const SwitchTopology& t = r_.topo_;
    RouteResult result;
    if (t.IsTerminal(node)) {
      if (in_port == t.PePort()) result.Add(0, r_.InjectionMask());
      Emit(result, out);
      return;
    }
    const int router = t.RouterOf(node);
    const int dst_router = t.DestinationRouter(dst);
    if (dst_router == router) {
      result.Add(t.TerminalPort(dst), RangeMask(r_.vcs_, 1, 0));
      Emit(result, out);
      return;
    }
    const bool fresh = in_port == t.PePort() || t.IsTerminal(t.Neighbor(node, in_port).node);
    const int cls = r_.ClassOfVc(in_vc);
    RouteRequest request;
    request.node = node;
    for (uint32_t s = 0; s < 16; ++s) {
      if (fresh ? s != 0 : r_.StateClass(s) != cls) continue;
      for (int choice = 0; choice < r_.Choices(); ++choice) {
        if (!r_.ChoicePerHop() && choice != variant_) continue;
        for (int decision = 0; decision < 2; ++decision) {
          const ClassRouting::At at{router, dst, dst_router, -1, fresh, choice, decision, &request};
          uint32_t state = s;
          result.Clear();
          r_.RouteAt(at, &state, &result);
          Emit(result, out);
        }
      }
    }
  }

 private:
  static void Emit(const RouteResult& result, std::vector<EscapeHop>* out) {
    for (int i = 0; i < result.size(); ++i) {
      for (uint32_t m = result[i].vc_mask; m != 0; m &= m - 1) {
        const EscapeHop hop{result[i].port, std::countr_zero(m)};
        if (std::find_if(out->begin(), out->end(), [&](const EscapeHop& h) {
              return h.port == hop.port && h.vc == hop.vc;
            }) == out->end()) {
          out->push_back(hop);
        }
      }
    }
  }

  const ClassRouting& r_;
  mutable int variant_ = 0;  // the choice of the exploration under way
};

std::unique_ptr<EscapeFunction> ClassRouting::Escape() const {
  return std::make_unique<ClassEscape>(*this);
}

}  // namespace ukai::sim
