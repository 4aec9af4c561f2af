// Fabric: the state of every input-queued VC router of a network, in flat arrays, and the
// per-router evaluate / network-wide commit of the two-phase clock.
//
// Router model (docs/simulator.md has the full description):
// - Ports 0..P-2 are network ports (Topology numbering), port P-1 is the PE port
//   (injection on the input side, ejection on the output side).
// - Input VCs are ring buffers of `vc_buffer_flits` flits; network ports have router.vcs
//   VCs, the PE port router.pe_vcs. Output VCs carry the owning input VC and the credits
//   (free slots of the downstream input VC). The ejection side never blocks (the PE
//   consumes a flit per cycle).
// - A head reaching the front of its VC is routed (RoutingFunction), then waits
//   hop_cycles - 1 cycles (+ table_lookup_cycles if the routing read a table); in that last
//   cycle of its hop pipeline it takes part in VC allocation and, if it wins, switch
//   allocation in the same cycle. A flit that wins the switch in cycle t arrives at the next
//   router at t + 1 + link_cycles, at the PE (ejection) at t + 1. Body flits need no
//   routing: they compete for the switch as soon as they are visible.
// - VC allocation: each routed head asks the SelectionFunction for one free output VC among
//   its candidates (wormhole: not owned; VCT: not owned and room for the whole message);
//   conflicting requests for one output VC are resolved round-robin per output VC
//   (separable input-first allocator).
// - Switch allocation: separable input-first round-robin: each input port nominates one VC
//   that has a flit, an output VC and a credit; each output port grants one nominee. One
//   flit per input port and per output port per cycle.
// - Credits: a flit leaving an input VC at cycle t returns a credit that the upstream
//   router sees from cycle t + 1.
//
// Two-phase contract: Evaluate(r, now) reads committed state and writes only router r's
// own state plus its staged outgoing flits and credits; Commit(now) moves every staged flit
// and credit into place. Results therefore do not depend on the order in which routers
// are evaluated.
//
// Thread safety: Evaluate() of distinct routers only touches distinct state except the
// staging lists (to be made per-thread for parallel evaluation); Commit() is serial.
#ifndef UKAI_SIM_ROUTER_FABRIC_H_
#define UKAI_SIM_ROUTER_FABRIC_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/engine/message.h"
#include "sim/experiment/sim_config.h"
#include "sim/router/selection.h"
#include "sim/routing/routing.h"
#include "sim/topology/topology.h"

namespace ukai::sim {

// A head flit leaving a router on a network or ejection port (for tests and tracing).
struct HopEvent {
  int64_t cycle;
  int32_t msg;
  int32_t node;
  int32_t in_port, in_vc;
  int32_t out_port, out_vc;
};

// A flit handed to a PE by the ejection port, visible to the PE at `cycle`.
struct Ejection {
  int32_t node;
  int64_t cycle;
  Flit flit;
};

class Fabric {
 public:
  Fabric(const Topology& topology, const RouterConfig& config, const RoutingFunction* routing,
         const SelectionFunction* selection, MessagePool* messages);

  int ports() const { return ports_; }
  int pe_port() const { return ports_ - 1; }
  int vc_stride() const { return vstride_; }
  int depth() const { return depth_; }

  // Two-phase clock.
  void Evaluate(int32_t router, int64_t now);
  // Applies the transfers staged during cycle `now`; flits handed to PEs go to `ejected`.
  // `in_active`/`active`: the caller's active-node set; routers that received flits are
  // added to it (in_active[r] set, r appended) unless already there.
  void Commit(int64_t now, uint8_t* in_active, std::vector<int32_t>* active,
              std::vector<Ejection>* ejected);

  // PE side of the injection port (same node as the router: no staging needed).
  int InjectionFree(int32_t router, int vc) const {
    return depth_ - count_[Ivc(router, pe_port(), vc)];
  }
  int InjectionCount(int32_t router, int vc) const { return count_[Ivc(router, pe_port(), vc)]; }
  void Inject(int32_t router, int vc, const Flit& flit);

  int32_t buffered(int32_t router) const { return buffered_[router]; }
  int64_t flits_moved() const { return flits_moved_; }
  int64_t flit_hops() const { return flit_hops_; }
  int64_t last_move_cycle() const { return last_move_cycle_; }

  void SetHopObserver(std::function<void(const HopEvent&)> observer) {
    observer_ = std::move(observer);
  }

  // Debug checks: credit conservation on every channel VC, buffer/mask/count agreement,
  // ownership consistency. Returns "" when all hold, else a description.
  std::string CheckInvariants() const;
  // One line per non-empty input VC: "node N port P vc V: M flits, head of message S->D ...".
  std::vector<std::string> DescribeBlocked(const Topology& topology, size_t limit) const;

 private:
  enum : uint8_t { kIdle = 0, kRouted = 1, kActive = 2 };
  // A flit staged by Evaluate() for Commit(): into input VC dst_ivc (buffer-port index
  // dst_pi of router dst_router), or to the PE of dst_router when dst_ivc == -2.
  struct Transfer {
    Flit flit;
    int32_t dst_ivc;
    int32_t dst_pi;
    int32_t dst_router;
    int16_t dst_port;
    int16_t vc;
  };
  // Raw pointers and scalars of the hot loops, set once by the constructor (the vectors
  // never resize afterwards). Evaluate() copies it to a local: the compiler cannot keep
  // vector data pointers or int members in registers across the byte-sized stores of the
  // loop bodies (they may alias), so without the copy every access reloads them.
  struct Hot {
    Flit* __restrict buf;
    uint16_t* __restrict head;
    uint16_t* __restrict count;
    uint8_t* __restrict state;
    int32_t* __restrict out;
    uint8_t* __restrict out_port;
    uint8_t* __restrict out_vc;
    int32_t* __restrict owner;
    int32_t* __restrict credits;
    uint32_t* __restrict nonempty;
    uint32_t* __restrict port_mask;
    int32_t* __restrict buffered;
    const int32_t* __restrict down_ivc;
    const int32_t* __restrict down_pi;
    const int32_t* __restrict down_router;
    const int32_t* __restrict down_port;
    const int32_t* __restrict up_ovc;
    int ports, pe, vstride, depth, link;
  };

  void InitHot();
  int32_t Pi(int32_t r, int p) const { return r * ports_ + p; }
  int32_t Ivc(int32_t r, int p, int v) const { return (r * ports_ + p) * vstride_ + v; }
  void RouteHead(int32_t r, int ip, int v, int32_t ivc, const Flit& f, int64_t now);
  int32_t SelectOutput(int32_t r, int32_t ivc, const Flit& f, int64_t now);
  void Traverse(const Hot& h, int32_t r, int ip, int v, int op, int64_t now);
  void PushFlit(int32_t ivc, int32_t pi, int32_t router, int port, int v, const Flit& f);

  const RoutingFunction* routing_;
  const SelectionFunction* selection_;
  MessagePool* messages_;
  int nodes_, ports_, vstride_, depth_;
  int hop_cycles_, link_cycles_, table_lookup_cycles_;
  bool vct_;
  bool reroute_;  // routing_->ReRouteWhileBlocked()
  int cand_stride_;

  // Input VCs (index Ivc).
  std::vector<Flit> buf_;
  std::vector<uint16_t> head_, count_;
  std::vector<uint8_t> state_;
  std::vector<int64_t> ready_;
  std::vector<int32_t> out_;  // owned output VC (global index), when active
  std::vector<uint8_t> out_port_, out_vc_;
  std::vector<uint8_t> cand_count_;
  std::vector<RouteCandidate> cand_;
  // Output VCs (same indexing as input VCs).
  std::vector<int32_t> owner_, credits_, va_rr_;
  // Per router port (index Pi).
  std::vector<uint32_t> nonempty_, valid_vcs_;
  std::vector<uint8_t> sa_in_rr_, sa_out_rr_;
  std::vector<int32_t> down_ivc_, down_pi_, down_router_, down_port_, up_ovc_;
  // Per router.
  std::vector<uint32_t> port_mask_;
  std::vector<int32_t> buffered_;
  // Staged by Evaluate() during a cycle, applied by Commit() (per evaluating thread once
  // evaluation runs in parallel; the order of entries does not matter).
  std::vector<Transfer> transfers_;
  Hot hot_;
  struct CreditReturn {
    int32_t ovc;     // upstream output VC that gets one credit back
    int32_t router;  // its router
  };
  std::vector<CreditReturn> credit_returns_;
  std::vector<int32_t> up_router_;  // per router port: the router feeding it
  std::vector<int64_t> wake_;       // per router: skip Evaluate() before this cycle

  int64_t flits_moved_ = 0, flit_hops_ = 0, last_move_cycle_ = 0;
  std::function<void(const HopEvent&)> observer_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTER_FABRIC_H_
