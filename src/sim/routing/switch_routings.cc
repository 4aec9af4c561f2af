#include "sim/routing/switch_routings.h"

#include <limits>
#include <string>

#include "sim/topology/concentrated_grid.h"
#include "sim/topology/dragonfly.h"
#include "sim/topology/fat_tree.h"

namespace ukai::sim {
namespace {

// Dragonfly state: the VC class of the last hop, which tells the way on. min: 0 in the
// source group, 1 from the global channel on. ugal: 0 Valiant before its first global
// channel (towards the intermediate group), 1 on the way to the destination group's
// global channel (minimal from the source, or Valiant from the intermediate group), 2 in
// the destination group (also for a message that stays in its group). A global hop adds 1.
class DragonflyRouting final : public ClassRouting {
 public:
  DragonflyRouting(const Dragonfly& t, int vcs, bool ugal, bool one_vc_per_class)
      : ClassRouting(t, vcs, ugal ? 3 : 2,
                     std::string(ugal ? "dragonfly UGAL (3 classes: Valiant in the source "
                                        "group, towards the destination group, in it"
                                      : "dragonfly minimal (2 classes: source group, then the "
                                        "rest") +
                         (one_vc_per_class ? "; class c on VC c alone)" : ")"),
                     one_vc_per_class),
        t_(t),
        ugal_(ugal) {}

 protected:
  int StateClass(uint32_t s) const override {
    return static_cast<int>(s) < classes() ? static_cast<int>(s) : -1;
  }
  int Choices() const override { return ugal_ ? t_.groups() - 2 : 1; }
  // A message from a terminal of the destination router: BookSim2's phase there is 0 (min)
  // or 2 (ugal: destination in the source group).
  int EjectClass(uint32_t state, bool fresh) const override {
    return fresh ? (ugal_ ? 2 : 0) : StateClass(state);
  }

  void RouteAt(const At& at, uint32_t* state, RouteResult* result) const override {
    const int g = t_.GroupOf(at.router), gd = t_.GroupOf(at.dst_router);
    if (ugal_ && at.fresh) *state = g == gd ? 2u : (Decide(at, g, gd) ? 0u : 1u);
    const int target = ugal_ && *state == 0 ? Intermediate(at.choice, g, gd) : gd;
    result->Clear();
    const int port = PortTowards(at.router, target, at.dst_router, state);  // may count a hop
    AddHop(port, *state, result);
  }

 private:
  // The intermediate group of choice `choice`: the choice-th group other than a and b.
  static int Intermediate(int choice, int a, int b) {
    int g = choice;
    for (int skip : {std::min(a, b), std::max(a, b)}) {
      if (g >= skip) ++g;
    }
    return g;
  }
  // The port from `router` towards group `target` (the destination router when it is in
  // it); a global hop adds one to the state's count.
  int PortTowards(int router, int target, int dst_router, uint32_t* state) const {
    const int g = t_.GroupOf(router), i = router % t_.a();
    const int next = g == target ? dst_router : t_.GatewayRouter(g, target);
    if (next == router) {
      *state += 1;
      return t_.GatewayPort(g, target);
    }
    return t_.LocalPort(i, next % t_.a());
  }
  // UGAL's choice at the source router: true for Valiant.
  bool Decide(const At& at, int g, int gd) const {
    if (at.decision >= 0) return at.decision == 1;
    uint32_t scratch = 0;
    const int min_port = PortTowards(at.router, gd, at.dst_router, &scratch);
    const int non_port = PortTowards(at.router, Intermediate(at.choice, g, gd), -1, &scratch);
    const int q_min = UsedCredits(*at.request, min_port, vcs_);
    const int q_non = UsedCredits(*at.request, non_port, vcs_);
    return q_min > 2 * q_non + 30;
  }

  const Dragonfly& t_;
  bool ugal_;
};

enum class FlyKind { kMin, kValiant, kUgal };

// Flattened butterfly state: bit 0 on the way to the destination (class 1), bit 1 on the
// way to the intermediate (class 0; Valiant, UGAL).
class FlatFlyRouting final : public ClassRouting {
 public:
  FlatFlyRouting(const FlatFly& t, int vcs, FlyKind kind)
      : ClassRouting(t, vcs, kind == FlyKind::kMin ? 1 : 2,
                     kind == FlyKind::kMin ? "flattened butterfly dimension order (1 class)"
                                           : "flattened butterfly two-phase (2 classes: to the "
                                             "intermediate, to the destination)"),
        t_(t),
        kind_(kind) {}

 protected:
  int StateClass(uint32_t s) const override {
    if (kind_ == FlyKind::kMin) return s == 0 ? 0 : -1;
    if (s == 1) return 1;
    if (s == 2) return 0;
    return -1;
  }
  int Choices() const override { return kind_ == FlyKind::kMin ? 1 : t_.NumRouters(); }

  void RouteAt(const At& at, uint32_t* state, RouteResult* result) const override {
    result->Clear();
    if (kind_ == FlyKind::kMin) {
      AddHop(DorPort(at.router, at.dst_router), 0, result);
      return;
    }
    const int mid = Intermediate(at);
    if (at.fresh) *state = kind_ == FlyKind::kUgal && !Valiant(at, mid) ? 1u : 2u;
    if (*state == 2u && at.router == mid) *state = 1u;
    AddHop(DorPort(at.router, *state == 2u ? mid : at.dst_router), *state, result);
  }

 private:
  int DorPort(int from, int to) const {
    for (int d = 0; d < t_.n(); ++d) {
      const int a = t_.Coord(from, d), b = t_.Coord(to, d);
      if (a != b) return t_.Port(d, a, b);
    }
    return -1;  // from == to: never asked
  }
  // Valiant: the chosen router. UGAL: its coordinates where source and destination
  // routers differ, theirs where they agree (BookSim2's find_ran_intm).
  int Intermediate(const At& at) const {
    if (kind_ == FlyKind::kValiant || at.src_router < 0) return at.choice;
    int mid = 0;
    for (int d = 0; d < t_.n(); ++d) {
      const int s = t_.Coord(at.src_router, d);
      const int c = s == t_.Coord(at.dst_router, d) ? s : t_.Coord(at.choice, d);
      mid += c * t_.stride(d);
    }
    return mid;
  }
  bool Valiant(const At& at, int mid) const {
    if (at.decision >= 0) return at.decision == 1;
    if (mid == at.router) return false;
    const int h_min = t_.RouterDistance(at.router, at.dst_router);
    const int h_non = t_.RouterDistance(at.router, mid) + t_.RouterDistance(mid, at.dst_router);
    const int q_min = UsedCredits(*at.request, DorPort(at.router, at.dst_router), vcs_);
    const int q_non = UsedCredits(*at.request, DorPort(at.router, mid), vcs_);
    return h_min * q_min > h_non * q_non + 2;
  }

  const FlatFly& t_;
  FlyKind kind_;
};

class FatTreeRouting final : public ClassRouting {
 public:
  FatTreeRouting(const FatTree& t, int vcs, bool adaptive)
      : ClassRouting(t, vcs, 1,
                     adaptive ? "fat-tree adaptive up, down to the destination (1 class)"
                              : "fat-tree random up, down to the destination (1 class)"),
        t_(t),
        adaptive_(adaptive) {}

 protected:
  int StateClass(uint32_t s) const override { return s == 0 ? 0 : -1; }
  int Choices() const override { return adaptive_ ? 1 : t_.k(); }
  bool ChoicePerHop() const override { return true; }

  void RouteAt(const At& at, uint32_t* state, RouteResult* result) const override {
    result->Clear();
    if (t_.Covers(at.router, at.dst)) {
      AddHop(t_.DownPort(at.router, at.dst), *state, result);
    } else if (adaptive_) {
      for (int i = 0; i < t_.k(); ++i) AddHop(t_.UpPort(i), *state, result);
    } else {
      AddHop(t_.UpPort(at.choice), *state, result);
    }
  }

 private:
  const FatTree& t_;
  bool adaptive_;
};

class CMeshDorRouting final : public ClassRouting {
 public:
  CMeshDorRouting(const CMesh& t, int vcs)
      : ClassRouting(t, vcs, 1, "cmesh dimension order (1 class)"), t_(t) {}

 protected:
  int StateClass(uint32_t s) const override { return s == 0 ? 0 : -1; }
  void RouteAt(const At& at, uint32_t* state, RouteResult* result) const override {
    result->Clear();
    for (int d = 0; d < t_.n(); ++d) {
      const int a = t_.Coord(at.router, d), b = t_.Coord(at.dst_router, d);
      if (a != b) {
        AddHop(t_.Port(d, b > a), *state, result);
        return;
      }
    }
  }

 private:
  const CMesh& t_;
};

}  // namespace

int SwitchRoutingClasses(const Topology& topology, std::string_view algorithm) {
  if (dynamic_cast<const Dragonfly*>(&topology) != nullptr) {
    if (algorithm == "min") return 2;
    if (algorithm == "ugal") return 3;
  } else if (dynamic_cast<const FlatFly*>(&topology) != nullptr) {
    if (algorithm == "min") return 1;
    if (algorithm == "valiant" || algorithm == "ugal") return 2;
  } else if (dynamic_cast<const FatTree*>(&topology) != nullptr) {
    if (algorithm == "nca" || algorithm == "anca") return 1;
  } else if (dynamic_cast<const CMesh*>(&topology) != nullptr) {
    if (algorithm == "dor") return 1;
  }
  return 0;
}

Status SwitchRoutingSupports(const Topology& topology, const SimConfig& config,
                             std::string_view algorithm) {
  const std::string name(algorithm);
  const int classes = SwitchRoutingClasses(topology, algorithm);
  if (classes == 0) {
    return Status::InvalidArgument("routing.algorithm: '" + name + "' does not run on the " +
                                   topology.Describe() +
                                   " (dragonfly: min, ugal; flatfly: min, valiant, ugal; "
                                   "fattree: nca, anca; cmesh: dor)")
        .WithKey("routing.algorithm");
  }
  if (config.faults.any()) {
    return Status::InvalidArgument("routing.algorithm: '" + name + "' on the " +
                                   topology.Describe() +
                                   " is not fault tolerant; remove the faults.* settings")
        .WithKey("routing.algorithm");
  }
  if (config.router.vcs < classes) {
    return Status::InvalidArgument(
               "routing.algorithm = '" + name + "' on the " + topology.Describe() +
               " needs router.vcs >= " + std::to_string(classes) + " (" + std::to_string(classes) +
               " VC classes), got router.vcs = " + std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

std::unique_ptr<ClassRouting> MakeSwitchRouting(const Topology& topology, const SimConfig& config,
                                                std::string_view algorithm) {
  const int vcs = config.router.vcs;
  if (const auto* t = dynamic_cast<const Dragonfly*>(&topology)) {
    return std::make_unique<DragonflyRouting>(
        *t, vcs, algorithm == "ugal", config.routing.dragonfly_vcs == DragonflyVcs::kBooksim);
  }
  if (const auto* t = dynamic_cast<const FlatFly*>(&topology)) {
    const FlyKind kind = algorithm == "min"       ? FlyKind::kMin
                         : algorithm == "valiant" ? FlyKind::kValiant
                                                  : FlyKind::kUgal;
    return std::make_unique<FlatFlyRouting>(*t, vcs, kind);
  }
  if (const auto* t = dynamic_cast<const FatTree*>(&topology)) {
    return std::make_unique<FatTreeRouting>(*t, vcs, algorithm == "anca");
  }
  return std::make_unique<CMeshDorRouting>(dynamic_cast<const CMesh&>(topology), vcs);
}

}  // namespace ukai::sim
