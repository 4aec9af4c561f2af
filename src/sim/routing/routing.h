// The routing interface of the simulator: a RoutingFunction proposes candidate outputs
// (output port, set of output VCs, preference tier) for the head flit of a message at a
// router; a SelectionFunction (router/selection.h) then picks one free output VC among them.
//
// Contract:
// - Route() is called when a head flit reaches the front of its input VC (after it has
//   arrived), with the message's destination and a per-message state word it may read and
//   write (e.g. "in deadlock recovery", a dateline class, a detour phase). It must be
//   const with respect to the RoutingFunction (no mutable shared state): the engine may
//   route different routers from different threads.
// - Candidates with a lower `tier` are preferred: the selection takes the lowest tier that
//   has a free output VC (e.g. Duato: tier 0 adaptive VCs, tier 1 the escape VC).
// - A candidate may name any network port, including the one the head came in on (a
//   180-degree turn) or a non-minimal one; the engine does not second-guess it.
// - result->UseTableLookup() adds the router's table_lookup_cycles to this hop's header
//   delay (a routing table read).
// - When ReRouteWhileBlocked() is true, Route() is called again on every cycle the head
//   fails to get an output VC, with RouteRequest::blocked_cycles telling how long it has
//   been waiting (for blocking-time timeouts); otherwise the first answer stands.
// - AtomicVcMask() narrows this to some VCs (bit v: VC v of every network port is
//   allocated atomically); by default all VCs when AtomicVcAllocation() is true, else none.
// - When AtomicVcAllocation() is true, a wormhole router hands an output VC to a new
//   message only once the downstream buffer of that VC is empty (all its credits are back),
//   so a buffer never holds flits of two messages. Duato's theory assumes this: with
//   non-atomic allocation a head can be stuck on an adaptive VC behind another message and
//   can no longer take its escape VC (a deadlock, seen with tornado traffic on a torus).
//   Virtual cut-through needs no such rule (a blocked message sits whole in one buffer).
// - Ejection (destination == current node) is decided by the router, not by Route().
// - Faults: the router drops candidates on dead channels; when none is left (or the
//   destination node is dead) the message is drained as undeliverable. TopologyChanged()
//   is called between cycles after a timed fault or repair changed the topology's liveness
//   (a table-driven routing recomputes its tables there).
#ifndef UKAI_SIM_ROUTING_ROUTING_H_
#define UKAI_SIM_ROUTING_ROUTING_H_

#include <cstdint>

namespace ukai::sim {

struct OutputVcState;  // router/selection.h

struct RouteCandidate {
  int16_t port = 0;      // output port
  int16_t tier = 0;      // preference tier, 0 best
  uint32_t vc_mask = 0;  // allowed output VCs (bit v = VC v)
};

struct RouteRequest {
  int32_t node = 0;              // the router doing the routing
  int32_t in_port = 0;           // input port of the head (PE port for fresh messages)
  int32_t in_vc = 0;             // input VC of the head
  int32_t src = 0;               // message source node
  int32_t dst = 0;               // message destination node (!= node)
  int32_t length_flits = 0;      // message length
  int64_t now = 0;               // current cycle
  int64_t blocked_cycles = 0;    // cycles the head has waited for an output VC so far
  uint32_t* message_state = 0;   // per-message routing state word (starts at 0)
  const int32_t* via = nullptr;  // the message's via nodes (detour), in order
  int32_t via_count = 0;         // number of via nodes (0: no detour)
  int64_t created = 0;           // the message's creation cycle (with src, dst: a
                                 // per-message seed for random choices, e.g. Valiant's)
  // The router's output VCs (index port * out_vc_stride + vc; credits = free downstream
  // slots of vc_depth) for routings that weigh congestion (UGAL); nullptr in the deadlock
  // checker.
  const OutputVcState* out_vcs = nullptr;
  int32_t out_vc_stride = 0;
  int32_t vc_depth = 0;
  int32_t route = -1;  // the message's route (Message::route; source routing)
};

class RouteResult {
 public:
  static constexpr int kCapacity = 64;
  // A candidate port meaning this router's ejection (PE) port: a message without one
  // destination (a multicast) is ejected where its routing says so.
  static constexpr int kEjectPort = -2;

  void Clear() {
    size_ = 0;
    table_lookup_ = false;
    fork_ = false;
  }
  // Appends a candidate; silently ignores an empty VC mask. Capacity is checked by the
  // engine (more than kCapacity candidates is a bug of the routing function).
  void Add(int port, uint32_t vc_mask, int tier = 0) {
    if (vc_mask == 0 || size_ >= kCapacity) return;
    c_[size_++] = {static_cast<int16_t>(port), static_cast<int16_t>(tier), vc_mask};
  }
  void UseTableLookup() { table_lookup_ = true; }
  // Every candidate (one per port) is a branch the message is copied to (hierarchical
  // multicast: the switch copies a packet to several outputs). The router acquires the
  // branches' ports in candidate order, each whole (every VC of the port, with room for
  // the message on one), and sends each flit to all of them at once; it needs virtual
  // cut-through (router.switching vct, vct-saf or saf).
  void Fork() { fork_ = true; }
  bool fork() const { return fork_; }

  int size() const { return size_; }
  const RouteCandidate& operator[](int i) const { return c_[i]; }
  const RouteCandidate* data() const { return c_; }
  bool table_lookup() const { return table_lookup_; }

 private:
  int size_ = 0;
  bool table_lookup_ = false;
  bool fork_ = false;
  RouteCandidate c_[kCapacity];
};

class RoutingFunction {
 public:
  virtual ~RoutingFunction() = default;
  virtual void Route(const RouteRequest& request, RouteResult* result) const = 0;
  virtual bool ReRouteWhileBlocked() const { return false; }
  virtual bool AtomicVcAllocation() const { return false; }
  virtual uint32_t AtomicVcMask() const { return AtomicVcAllocation() ? ~0u : 0u; }
  // Whether Route() may answer with RouteResult::Fork() (the router then keeps per-VC fork
  // state).
  virtual bool MayFork() const { return false; }
  // Whether Route() is asked at the message's destination too (it answers with kEjectPort
  // to deliver there); otherwise the router ejects every message at its destination.
  virtual bool RoutesAtDestination() const { return false; }
  // Whether Route()'s answer is a function of (request.node, request.dst) and the network's
  // liveness alone: it reads no other field of the request (in port and VC, source, time,
  // message state, via nodes, route, output VCs), and never asks for a table lookup or a
  // fork. The router may then keep the answer per (node, destination) and reuse it; it
  // drops what it kept whenever liveness or routing tables change (Fabric::ForgetRoutes(),
  // Fabric::SetPortAlive()).
  virtual bool PureRoute() const { return false; }
  // A lean form of Route() for routings whose answer is always at most one candidate, with
  // no table lookup and no fork (HasRouteOne() true): the candidate Route() gives for a
  // request of these fields (the others as Route() would not read them), packed as bits
  // 0-15 output port + 1 and bits 32-63 the VC mask (0: no candidate), with the same
  // effect on *message_state. The router calls it instead of building a RouteRequest.
  virtual bool HasRouteOne() const { return false; }
  virtual uint64_t RouteOne(int32_t /*node*/, int32_t /*in_port*/, int32_t /*in_vc*/,
                            int32_t /*src*/, int32_t /*dst*/, int64_t /*now*/,
                            uint32_t* /*message_state*/) const {
    return 0;
  }
  virtual void TopologyChanged() {}
  // Reconfiguration (engine/reconfiguration.h) updates tables node by node:
  // PrepareTables(root) computes the tables of the topology as it is now into a new pending
  // set and returns its id (up*/down* from `root`; -1: the routing's own choice),
  // CommitNodeTables(node, set) makes `node` route with that set, FinishTables(set) makes
  // it current everywhere (dropping the others). The default keeps one set and rebuilds it
  // in FinishTables(). Root(): the up*/down* root
  // of the current tables, -1 when the routing has none.
  virtual int Root() const { return -1; }
  // Whether a message with this routing state travels on the deadlock-free recovery
  // sub-network (Detour-UD's UD-VC; every up*/down* message): reconfig.discard =
  // "recovering" discards exactly these.
  virtual bool OnRecoveryNetwork(uint32_t /*message_state*/) const { return false; }
  virtual int PrepareTables(int /*root*/) { return 0; }
  virtual void CommitNodeTables(int /*node*/, int /*set*/) {}
  virtual void FinishTables(int /*set*/) { TopologyChanged(); }
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_ROUTING_H_
