// ClassRouting: the base of the routing functions of the indirect topologies
// (topology/switch_topology.h: cmesh, flatfly, fattree, dragonfly). Every hop of a message
// uses one VC class; the router.vcs VCs of a port are split into Classes() equal classes
// (class c: VCs c*V/C .. (c+1)*V/C - 1; a terminal injects on class 0, ejection channels
// take every VC). With one VC per class (BookSim2's dragonfly routings, routing.dragonfly_vcs
// = booksim) class c is VC c alone, a terminal injects on any VC and a router ejects on the
// VC of EjectClass().
//
// A subclass routes at routers only (RouteAt): a terminal node sends everything on its one
// port in class 0, and the router of a destination terminal ejects to it. Its state is 4
// bits of the message's state word (bits 4-7, route_state.h's kRoutingBits), reset when the
// message enters its first router; the class of the hop it chooses is StateClass(new
// state), so the class of a channel tells which states a message on it may carry. Random
// choices (Valiant's intermediate, an up port) are a function of the message (src, dst,
// creation cycle) and, where it says so, the router: At::choice in 0..Choices()-1.
//
// The deadlock checker (Escape(), cdg_check.h) takes every VC as an escape VC and unions
// the hops over every state of the arriving channel's class, every choice and both
// decisions of an adaptive rule (UGAL): a superset of the real dependencies, so an acyclic
// result is a proof.
//
// Thread safety: Route() is const and keeps no state.
#ifndef UKAI_SIM_ROUTING_CLASS_ROUTING_H_
#define UKAI_SIM_ROUTING_CLASS_ROUTING_H_

#include <cstdint>
#include <memory>
#include <string>

#include "sim/routing/cdg_check.h"
#include "sim/routing/routing.h"
#include "sim/topology/switch_topology.h"

namespace ukai::sim {

class ClassRouting : public RoutingFunction {
 public:
  // `one_vc_per_class`: class c on VC c alone (see above).
  ClassRouting(const SwitchTopology& topology, int vcs, int classes, std::string describe,
               bool one_vc_per_class = false);
  void Route(const RouteRequest& request, RouteResult* result) const final;
  std::unique_ptr<EscapeFunction> Escape() const;

  int classes() const { return classes_; }
  uint32_t ClassMask(int cls) const;
  int ClassOfVc(int vc) const;

 protected:
  struct At {
    int router;      // router index (not node)
    int dst;         // destination node (a terminal)
    int dst_router;  // its router (!= router)
    int src_router;  // the source terminal's router; -1 in the checker (any)
    bool fresh;      // arrived from a terminal: the message's first router
    int choice;      // the random choice, 0..Choices()-1
    int decision;    // adaptive rule: -1 by congestion (request), 0 minimal, 1 not
    const RouteRequest* request;
  };
  // Adds the candidate ports of a message at `at` with state `*state` (updated) to
  // `result` through AddHop().
  virtual void RouteAt(const At& at, uint32_t* state, RouteResult* result) const = 0;
  // The class of the hop chosen with state `state`; -1 for a state that never occurs.
  virtual int StateClass(uint32_t state) const = 0;
  // With one VC per class: the class of the VC a router ejects a message on, from the state
  // of its last hop (`fresh`: it came from a terminal of this router). Default: the state's.
  virtual int EjectClass(uint32_t state, bool fresh) const { return fresh ? 0 : StateClass(state); }
  // The number of random choices (At::choice).
  virtual int Choices() const { return 1; }
  // Whether the choice also depends on the router (drawn per hop), not only on the message.
  virtual bool ChoicePerHop() const { return false; }

  void AddHop(int port, uint32_t state, RouteResult* result) const {
    result->Add(port, ClassMask(StateClass(state)));
  }
  // Flits of the output VCs of `port` in use downstream (BookSim2's GetUsedCredit), from
  // the request's view; 0 without one.
  static int UsedCredits(const RouteRequest& request, int port, int vcs);

  const SwitchTopology& topo_;
  int vcs_;

 private:
  friend class ClassEscape;
  // The VCs of a terminal's one port, and of an ejection from a message's state.
  uint32_t InjectionMask() const;
  uint32_t EjectionMask(uint32_t state, bool fresh) const;

  int classes_;
  std::string describe_;
  bool one_vc_per_class_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_CLASS_ROUTING_H_
