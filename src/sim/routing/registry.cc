#include "sim/routing/registry.h"

#include <string>

#include "sim/routing/detour.h"
#include "sim/routing/detour_nf.h"
#include "sim/routing/detour_ud.h"
#include "sim/routing/dor.h"
#include "sim/routing/duato.h"
#include "sim/routing/planar_adapt.h"
#include "sim/routing/source_routing.h"
#include "sim/routing/switch_routings.h"
#include "sim/routing/updown.h"
#include "sim/routing/valiant.h"
#include "sim/topology/kary_ncube.h"
#include "sim/topology/switch_topology.h"

namespace ukai::sim {
namespace {

const KaryNCube* AsCube(const Topology& topology) {
  return dynamic_cast<const KaryNCube*>(&topology);
}

Status NeedCube(const Topology& topology, std::string_view name) {
  if (AsCube(topology) != nullptr) return Status::Ok();
  return Status::InvalidArgument("routing.algorithm: '" + std::string(name) +
                                 "' needs a k-ary n-cube (network.topology mesh or torus)")
      .WithKey("routing.algorithm");
}

// `name` is not fault tolerant: any faults.* setting is an error.
Status NoFaults(const SimConfig& config, std::string_view name) {
  if (!config.faults.any()) return Status::Ok();
  std::string tolerant;
  for (const RoutingEntry& e : RoutingAlgorithms()) {
    if (e.fault_tolerant) tolerant += (tolerant.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status::InvalidArgument("routing.algorithm: '" + std::string(name) +
                                 "' is not fault tolerant; remove the faults.* settings or use "
                                 "a fault-tolerant algorithm (" +
                                 tolerant + ")")
      .WithKey("routing.algorithm");
}

// The routings of the indirect topologies (switch_routings.h), one pair per name.
template <const char* kName>
Status SwitchSupports(const Topology& topology, const SimConfig& config) {
  return SwitchRoutingSupports(topology, config, kName);
}
template <const char* kName>
std::unique_ptr<RoutingFunction> SwitchCreate(const Topology& topology, const SimConfig& config) {
  return MakeSwitchRouting(topology, config, kName);
}
constexpr char kMin[] = "min";
constexpr char kValiant[] = "valiant";
constexpr char kUgal[] = "ugal";
constexpr char kNca[] = "nca";
constexpr char kAnca[] = "anca";
constexpr char kDor[] = "dor";

bool IsSwitchTopology(const Topology& topology) {
  return dynamic_cast<const SwitchTopology*>(&topology) != nullptr;
}

// valiant, romm on a k-ary n-cube (routing/valiant.h); valiant also on a flatfly.
Status TwoPhaseSupports(const Topology& topology, const SimConfig& config, const char* name) {
  if (AsCube(topology) == nullptr) {
    if (std::string_view(name) == "valiant") return SwitchSupports<kValiant>(topology, config);
    return NeedCube(topology, name);
  }
  UKAI_RETURN_IF_ERROR(NoFaults(config, name));
  const int need = AsCube(topology)->torus() ? 4 : 2;
  if (config.router.vcs < need) {
    return Status::InvalidArgument(std::string("routing.algorithm = '") + name + "' on a " +
                                   (need == 4 ? "torus" : "mesh") +
                                   " needs router.vcs >= " + std::to_string(need) + " (2 phases" +
                                   (need == 4 ? " x 2 dateline classes" : "") +
                                   "), got router.vcs = " + std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}
Status ValiantSupports(const Topology& topology, const SimConfig& config) {
  return TwoPhaseSupports(topology, config, "valiant");
}
Status RommSupports(const Topology& topology, const SimConfig& config) {
  return TwoPhaseSupports(topology, config, "romm");
}
std::unique_ptr<RoutingFunction> ValiantCreate(const Topology& topology, const SimConfig& config) {
  if (AsCube(topology) == nullptr) return SwitchCreate<kValiant>(topology, config);
  return std::make_unique<TwoPhaseRouting>(*AsCube(topology), config.router.vcs, false,
                                           config.routing.valiant_via_destination);
}
std::unique_ptr<RoutingFunction> RommCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<TwoPhaseRouting>(*AsCube(topology), config.router.vcs, true);
}

Status DorSupports(const Topology& topology, const SimConfig& config) {
  if (IsSwitchTopology(topology)) return SwitchSupports<kDor>(topology, config);
  if (AsCube(topology) == nullptr) {  // the group topology: dimension order via its planner
    std::unique_ptr<DorPlanner> planner = DorPlanner::For(topology);
    if (planner == nullptr) return NeedCube(topology, "dor");
    UKAI_RETURN_IF_ERROR(NoFaults(config, "dor"));
    if (planner->classes() == 2 && config.router.vcs < 2) {
      return Status::InvalidArgument(
                 "routing.algorithm = 'dor' on the group topology's ring needs router.vcs >= 2 "
                 "(two "
                 "dateline classes), got router.vcs = " +
                 std::to_string(config.router.vcs))
          .WithKey("routing.algorithm");
    }
    return Status::Ok();
  }
  UKAI_RETURN_IF_ERROR(NoFaults(config, "dor"));
  if (AsCube(topology)->torus() && config.router.vcs < 2) {
    return Status::InvalidArgument(
               "routing.algorithm = 'dor' on a torus needs router.vcs >= 2 (two dateline classes), "
               "got router.vcs = " +
               std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

std::unique_ptr<RoutingFunction> DorCreate(const Topology& topology, const SimConfig& config) {
  if (IsSwitchTopology(topology)) return SwitchCreate<kDor>(topology, config);
  if (AsCube(topology) == nullptr) {
    return std::make_unique<PlannedDorRouting>(DorPlanner::For(topology), config.router.vcs);
  }
  return std::make_unique<DorRouting>(*AsCube(topology), config.router.vcs, config.routing.dor_tie,
                                      config.routing.dor_dateline);
}

// dor-detour (routing/detour.h): any topology with a dimension order, >= 2 VC layers.
Status DetourSupports(const Topology& topology, const SimConfig& config) {
  std::unique_ptr<DorPlanner> planner = DorPlanner::For(topology);
  if (planner == nullptr) {
    return Status::InvalidArgument(
               "routing.algorithm: 'dor-detour' needs a topology with a dimension order (mesh, "
               "torus, "
               "group)")
        .WithKey("routing.algorithm");
  }
  const int need = 2 * planner->classes();
  if (config.router.vcs < need) {
    return Status::InvalidArgument(
               "routing.algorithm = 'dor-detour' on the " + topology.Describe() +
               " needs router.vcs >= " + std::to_string(need) + " (2 VC layers of " +
               std::to_string(planner->classes()) +
               " class(es)), got router.vcs = " + std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

std::unique_ptr<RoutingFunction> DetourCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<DetourRouting>(topology, DorPlanner::For(topology), config.router.vcs,
                                         config.routing.detour_switch == DetourSwitchKind::kAware
                                             ? DetourSwitch::kAware
                                             : DetourSwitch::kDetector);
}

Status DuatoSupports(const Topology& topology, const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(NeedCube(topology, config.routing.algorithm));
  UKAI_RETURN_IF_ERROR(NoFaults(config, config.routing.algorithm));
  const bool torus = AsCube(topology)->torus();
  // min_adapt with BookSim2's candidates on a torus: its adaptive VC is VC 3.
  const bool vc3 = torus && config.routing.algorithm == "min_adapt" &&
                   config.routing.min_adapt_candidates == MinAdaptCandidates::kBooksim;
  const int need = vc3 ? 4 : torus ? 3 : 2;
  if (config.router.vcs < need) {
    return Status::InvalidArgument("routing.algorithm = '" + config.routing.algorithm + "' on a " +
                                   (torus ? "torus" : "mesh") +
                                   " needs router.vcs >= " + std::to_string(need) + " (" +
                                   (vc3     ? "2 escape + VC 3, BookSim2's adaptive VC, with "
                                              "routing.min_adapt_candidates = booksim"
                                    : torus ? "2 escape + at least 1 adaptive VC"
                                            : "1 escape + at least 1 adaptive VC") +
                                   "), got router.vcs = " + std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

Status PlanarAdaptSupports(const Topology& topology, const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(NeedCube(topology, "planar_adapt"));
  UKAI_RETURN_IF_ERROR(NoFaults(config, "planar_adapt"));
  if (AsCube(topology)->torus()) {
    return Status::InvalidArgument(
               "routing.algorithm = 'planar_adapt' runs on a mesh (BookSim2's "
               "planar_adapt_mesh), not on a torus")
        .WithKey("routing.algorithm");
  }
  if (config.router.vcs < 3) {
    return Status::InvalidArgument(
               "routing.algorithm = 'planar_adapt' needs router.vcs >= 3 (three VC classes), "
               "got router.vcs = " +
               std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

std::unique_ptr<RoutingFunction> PlanarAdaptCreate(const Topology& topology,
                                                   const SimConfig& config) {
  return std::make_unique<PlanarAdaptRouting>(*AsCube(topology), config.router.vcs);
}

std::unique_ptr<RoutingFunction> MinAdaptCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<DuatoRouting>(
      *AsCube(topology), config.router.vcs, config.routing.duato_atomic, /*sticky_escape=*/true,
      config.routing.min_adapt_candidates == MinAdaptCandidates::kBooksim);
}

std::unique_ptr<RoutingFunction> DuatoCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<DuatoRouting>(*AsCube(topology), config.router.vcs,
                                        config.routing.duato_atomic);
}

Status UpDownEntrySupports(const Topology& topology, const SimConfig& config) {
  return UpDownSupports(topology, config.routing.root);
}

std::unique_ptr<RoutingFunction> UpDownCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<UpDownRouting>(topology, config.router.vcs, config.routing.root);
}

Status DetourUdSupports(const Topology& topology, const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(NeedCube(topology, "detour-ud"));
  UKAI_RETURN_IF_ERROR(UpDownSupports(topology, config.routing.root));
  if (config.router.vcs < 2) {
    return Status::InvalidArgument(
               "routing.algorithm = 'detour-ud' needs router.vcs >= 2 (1 UD-VC + at least 1 "
               "FA-VC), "
               "got router.vcs = " +
               std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  return Status::Ok();
}

std::unique_ptr<RoutingFunction> DetourUdCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<DetourUdRouting>(*AsCube(topology), config);
}

Status DetourNfSupports(const Topology& topology, const SimConfig& config) {
  UKAI_RETURN_IF_ERROR(NeedCube(topology, "detour-nf"));
  UKAI_RETURN_IF_ERROR(UpDownSupports(topology, -1));  // the same table size limit
  const bool torus = AsCube(topology)->torus();
  const int need = torus ? 4 : 3;
  if (config.router.vcs < need) {
    return Status::InvalidArgument(
               std::string("routing.algorithm = 'detour-nf' on a ") + (torus ? "torus" : "mesh") +
               " needs router.vcs >= " + std::to_string(need) + " (" + (torus ? "2" : "1") +
               " escape + 1 Negative-First + at least 1 adaptive VC), got router.vcs = " +
               std::to_string(config.router.vcs))
        .WithKey("routing.algorithm");
  }
  if (topology.AnyFault()) {
    const std::string bad = DetourNfRouting(*AsCube(topology), config.router.vcs).Unroutable();
    if (!bad.empty()) {
      return Status::InvalidArgument(
                 "routing.algorithm: 'detour-nf' cannot handle this fault "
                 "placement (faults.*): " +
                 bad)
          .WithKey("routing.algorithm");
    }
  }
  return Status::Ok();
}

std::unique_ptr<RoutingFunction> DetourNfCreate(const Topology& topology, const SimConfig& config) {
  return std::make_unique<DetourNfRouting>(*AsCube(topology), config.router.vcs);
}

constexpr RoutingEntry kAlgorithms[] = {
    {"dor",
     "dimension-order routing (lowest dimension first); dateline VC classes on a torus "
     "(needs router.vcs >= 2 there; routing.dor_tie, routing.dor_dateline); also on the "
     "group topology and a cmesh (BookSim2's dor_no_express_cmesh)",
     {},
     79.0,
     &DorSupports,
     &DorCreate},
    {"duato",
     "Duato's protocol: fully adaptive minimal routing on adaptive VCs + dimension-order "
     "escape VCs (2 on a torus, 1 on a mesh; needs router.vcs >= 3 on a torus, >= 2 on a "
     "mesh)",
     {},
     55.0,
     &DuatoSupports,
     &DuatoCreate},
    {"min_adapt",
     "minimal adaptive routing as BookSim2's min_adapt_mesh / min_adapt_torus: Duato's VCs "
     "(escape: dimension order, 1 VC on a mesh, 2 dateline VCs on a torus; the rest "
     "adaptive), but a message that took an escape VC stays on the escape VCs; "
     "routing.duato_atomic applies; routing.min_adapt_candidates = booksim offers the "
     "adaptive VCs as BookSim2's code does (lowest unfinished dimension only; torus: VC 3, "
     "router.vcs >= 4); router.vcs >= 3 on a torus, >= 2 on a mesh",
     {},
     55.0,
     &DuatoSupports,
     &MinAdaptCreate,
     false},
    {"planar_adapt",
     "planar-adaptive routing on a mesh (BookSim2's planar_adapt_mesh): in plane i (the "
     "lowest unfinished dimension) productive hops along dimension i on VC class 2 and along "
     "dimension i+1 on class 0 (moving + along i) or 1 (moving -); classes of floor(V/3) "
     "VCs, class 2 takes the rest; router.vcs >= 3; no faults; clock: duato's",
     {},
     55.0,
     &PlanarAdaptSupports,
     &PlanarAdaptCreate,
     false},
    {"updown",
     "up*/down* over a BFS spanning tree of the healthy network (any topology, faults "
     "allowed; root routing.root); per-node tables of shortest legal paths, read on every "
     "hop (router.table_lookup_cycles); every VC usable",
     {},
     48.0,
     &UpDownEntrySupports,
     &UpDownCreate,
     true},
    {"detour-ud",
     "Detour-UD: fully adaptive minimal routing on the FA-VCs (table-free outside the fault "
     "region, the torus table inside it), deadlock recovery after routing.timeout_cycles "
     "blocked on the UD-VC (the highest VC) with the up*/down* table; router.vcs >= 2",
     {},
     48.0,
     &DetourUdSupports,
     &DetourUdCreate,
     true},
    {"detour-nf",
     "Detour-NF: Duato's fully adaptive routing (escape: dimension order with dateline VCs "
     "where its path is fault-free) plus a Negative-First VC for detours round faults; "
     "router.vcs >= 4 on a torus (2 escape + 1 NF + adaptive), >= 3 on a mesh",
     {},
     52.0,
     &DetourNfSupports,
     &DetourNfCreate,
     true},
    {"source",
     "source routing (the SSS-CORE network): the sender writes a route from its table into "
     "the header, switches only read it; routes are shortest paths or up*/down* "
     "(routing.source_routes, routing.source_paths, routing.in_order); any topology; "
     "multicast trees copied in the switches (docs/sss.md)",
     {},
     53.125,
     &SourceSupports,
     &SourceCreate},
    {"dor-detour",
     "dimension-order routing (mesh, torus, group) with via-node detours round faulty nodes "
     "(gateway patent); routing.detour_switch says where a message switches; needs 2 VC "
     "layers (router.vcs >= 4 with rings, >= 2 on a mesh)",
     {},
     79.0,
     &DetourSupports,
     &DetourCreate,
     true},
    {"min",
     "minimal routing of the indirect topologies: dragonfly (local, global, local hop; 2 VC "
     "classes: BookSim2's min_dragonflynew; routing.dragonfly_vcs), flatfly (dimension order, 1 "
     "class: "
     "ran_min_flatfly); clock: dor's",
     {},
     79.0,
     &SwitchSupports<kMin>,
     &SwitchCreate<kMin>,
     false},
    {"ugal",
     "UGAL-L: at the source router minimal or Valiant by the used credits of the two "
     "outputs; dragonfly (random intermediate group, 3 VC classes: ugal_dragonflynew's rule "
     "q_min <= 2 q_nonmin + 30), flatfly (2 classes: ugal_flatfly's rule h_min q_min <= "
     "h_nonmin q_nonmin + 2); clock: dor's",
     {},
     79.0,
     &SwitchSupports<kUgal>,
     &SwitchCreate<kUgal>,
     false},
    {"valiant",
     "Valiant: dimension order to a random intermediate node (router), then to the "
     "destination; each phase on half of the VCs: mesh (router.vcs >= 2), torus (dateline "
     "classes in each half: >= 4), flatfly (BookSim2's valiant_mesh, valiant_torus, "
     "valiant_flatfly); clock: dor's",
     {},
     79.0,
     &ValiantSupports,
     &ValiantCreate,
     false},
    {"romm",
     "ROMM: dimension order to a random node of the minimal box between source and "
     "destination, then to the destination (minimal); phases on VC halves as valiant; mesh "
     "(router.vcs >= 2), torus (>= 4) (BookSim2's romm_mesh); clock: dor's",
     {},
     79.0,
     &RommSupports,
     &RommCreate,
     false},
    {"nca",
     "fattree: up through a random up port to the nearest common ancestor, then down (1 VC "
     "class: BookSim2's nca_fattree); clock: dor's",
     {},
     79.0,
     &SwitchSupports<kNca>,
     &SwitchCreate<kNca>,
     false},
    {"anca",
     "fattree: up through the up port with most credits to the nearest common ancestor, then "
     "down (1 VC class: BookSim2's anca_fattree); clock: dor's",
     {},
     79.0,
     &SwitchSupports<kAnca>,
     &SwitchCreate<kAnca>,
     false},
};

}  // namespace

std::span<const RoutingEntry> RoutingAlgorithms() { return kAlgorithms; }

Result<const RoutingEntry*> FindRoutingAlgorithm(std::string_view name) {
  std::string known;
  for (const RoutingEntry& e : kAlgorithms) {
    if (e.name == name) return &e;
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return Status::NotFound("routing.algorithm: unknown algorithm '" + std::string(name) +
                          "' (known: " + known + ")")
      .WithKey("routing.algorithm");
}

Result<std::unique_ptr<RoutingFunction>> MakeRouting(const Topology& topology,
                                                     const SimConfig& config) {
  Result<const RoutingEntry*> entry = FindRoutingAlgorithm(config.routing.algorithm);
  if (!entry.ok()) return entry.status();
  UKAI_RETURN_IF_ERROR((*entry)->supports(topology, config));
  return (*entry)->create(topology, config);
}

}  // namespace ukai::sim
