// The routing functions of the indirect topologies (ClassRouting subclasses; registry.cc
// rows "min", "valiant", "ugal", "nca", "anca" and "dor" on a cmesh). VC classes as listed;
// every algorithm needs router.vcs >= its classes.
//
//   dragonfly  min     minimal: local hop to the router holding the global channel to the
//                      destination group, the global channel, local hop to the destination
//                      router. 2 classes: 0 in the source group, 1 from the global
//                      channel on (BookSim2's min_dragonflynew: VC 0 / VC 1).
//                      routing.dragonfly_vcs = booksim (min and ugal): class c on VC c
//                      alone whatever router.vcs says, injection on any VC, ejection on
//                      the class's VC, as BookSim2's min_dragonflynew / ugal_dragonflynew
//                      (the BookSim reader sets it); split (default): router.vcs divided.
//              ugal    UGAL-L at the source router: minimal, or Valiant through a random
//                      intermediate group (neither the source's nor the destination's),
//                      minimal when its output's used credits q_min <= 2 q_nonmin + 30
//                      (BookSim2's ugal_dragonflynew rule). 3 classes, as BookSim2's
//                      phases: 0 Valiant before its first global channel, 1 on the way to
//                      the destination group's global channel (a minimal message from its
//                      source), 2 in the destination group. BookSim2 routes to a random
//                      intermediate router; here to a random intermediate group (at most
//                      one local hop there), so the class tells the way on.
//   flatfly    min     dimension order (lowest differing dimension first), one hop per
//                      dimension; 1 class (BookSim2's ran_min_flatfly routes the same way).
//              valiant to a random intermediate router in dimension order (class 0, the
//                      lower half of the VCs), then to the destination (class 1, the upper
//                      half), as BookSim2's valiant_flatfly.
//              ugal    at the source router: the intermediate keeps the coordinates where
//                      source and destination agree and is random elsewhere; minimal when
//                      h_min q_min <= h_nonmin q_nonmin + 2 (hops h, used credits q of the
//                      first output), as BookSim2's ugal_flatfly; 2 classes: the way to the
//                      intermediate in class 0, the way to the destination in class 1.
//   fattree    nca     up through a random up port until a router covers the destination
//                      (the nearest common ancestor), then down; 1 class (BookSim2's
//                      nca_fattree).
//              anca    the same, every up port offered: the router takes the one with most
//                      credits (BookSim2's anca_fattree).
//   cmesh      dor     dimension order on the router grid (lowest dimension first); 1 class
//                      (BookSim2's dor_no_express_cmesh).
//
// Thread safety: Route() is const.
#ifndef UKAI_SIM_ROUTING_SWITCH_ROUTINGS_H_
#define UKAI_SIM_ROUTING_SWITCH_ROUTINGS_H_

#include <memory>
#include <string_view>

#include "core/status.h"
#include "sim/experiment/sim_config.h"
#include "sim/routing/class_routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// The VC classes `algorithm` needs on `topology`, or 0 when it does not run there.
int SwitchRoutingClasses(const Topology& topology, std::string_view algorithm);

// OK when `algorithm` runs on `topology` with config's VCs and no faults; errors name
// routing.algorithm (or router.vcs).
Status SwitchRoutingSupports(const Topology& topology, const SimConfig& config,
                             std::string_view algorithm);

// Builds it (call SwitchRoutingSupports first).
std::unique_ptr<ClassRouting> MakeSwitchRouting(const Topology& topology, const SimConfig& config,
                                                std::string_view algorithm);

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_SWITCH_ROUTINGS_H_
