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
// - router.header_units = per_port (the paper's shared address decoder and output arbiter):
//   a head of an input port starts its pipeline only once the port's previous head has
//   finished its own (reached its ready cycle), and a port makes at most one VC-allocation
//   request per cycle, round-robin over its VCs (HandleHeadsShared()). With
//   router.table_read_ports = R > 0, a head whose routing reads a table needs the read
//   port of its VC group (VC number mod R) in the cycle it is routed; if another head of
//   its router took it, it is routed again the next cycle.
// - A head reaching the front of its VC is routed (RoutingFunction), then waits
//   hop_cycles - 1 cycles (+ table_lookup_cycles if the routing read a table); in that last
//   cycle of its hop pipeline it takes part in VC allocation and, if it wins, switch
//   allocation in the same cycle. A flit that wins the switch in cycle t arrives at the next
//   router at t + 1 + link_cycles, at the PE (ejection) at t + 1. Body flits need no
//   routing: they compete for the switch as soon as they are visible.
// - VC allocation: each routed head asks the SelectionFunction for one free output VC among
//   its candidates (wormhole: not owned, and empty on the routing's AtomicVcMask() VCs;
//   VCT: not owned and room for the whole message);
//   conflicting requests for one output VC are resolved round-robin per output VC
//   (separable input-first allocator). router.vc_allocator = islip / separable_input_first
//   replaces the selection by BookSim2's allocators (fabric_booksim.cc).
// - Switch allocation: separable input-first round-robin: each input port nominates one VC
//   that has a flit, an output VC and a credit; each output port grants one nominee. One
//   flit per input port and per output port per cycle, except router.eject_flits at the
//   ejection port; with router.switch_bubble_cycles an output port idles that long before
//   it sends a flit of another message than its last one (GrantWithOptions()).
// - Credits: a flit leaving an input VC at cycle t returns a credit that the upstream
//   router sees from cycle t + 1.
// - router.model = booksim (BookSim2's iq router, docs/booksim.md): the header pipeline is
//   routing + VC + switch allocation, and the switch traversal stages
//   (BooksimTraversalCycles()) are added to the channel the flit leaves by (ejection too:
//   Network adds them at delivery), as BookSim2 frees the input buffer slot at switch
//   allocation; a credit comes back over a credit channel as long as the data channel
//   (router.link_cycles or the port's own) plus router.credit_delay, so the upstream router
//   sees it from cycle t + 1 + that (fabric_booksim.cc keeps the credits on their way).
//
// Two-phase contract: Evaluate(r, now) reads committed state and writes only router r's
// own state plus its staged outgoing flits and credits; Commit(now) moves every staged flit
// and credit into place. Results therefore do not depend on the order in which routers
// are evaluated.
//
// Layout (for speed): input VC index = (router << pshift | port) << vshift | vc, with
// power-of-two port and VC strides, so Commit() finds router, port and VC by shifts; each
// input VC's scalars are one 32-byte record; per router, bitmasks over all its input VCs
// (bit = the VC's index within the router, p << vshift | v, in 64-bit words) of non-empty
// VCs, VCs whose front flit has arrived, VCs owning an output VC and VCs whose output VC
// has a credit replace per-VC scans: one loop over a router's bits visits the VCs of every
// port (the spec's router, 5 or 7 ports x 4 VCs, is one word). A head whose output-VC selection
// failed is not offered to the selection again until an output VC of its router may have become
// free (the router's epoch changes). The staged transfers carry the credit they return.
//
// Buffer slots: the free slots of a downstream input VC that an output VC's credits stand
// for belong to that output VC (its router). Evaluate() writes a departing flit straight
// into the next such slot (OutputVcState::tail) and stages only (slot owner, credit);
// Commit() then counts the flit into the downstream VC. The downstream router reads only
// its counted slots, so this stays within the two-phase contract below. A flit into
// another partition is not written by Evaluate(): its outbox entry names the slot, and the
// commit of the partition holding it writes it there (no thread writes a cache line of
// another partition's buffers).
//
// Partitions (engine/partition.h): a Fabric evaluates the routers of one or more
// partitions, one LANE per partition (each evaluated by one thread), and indexes state by
// global router numbers. Its arrays are LazyArrays: only the state of its own routers is
// ever touched, so a Fabric of one MPI rank holds its share of the network in memory. A flit or
// credit that crosses into another partition is staged in the lane's outbox for that partition
// (Outbox()) instead of its own list; Commit(lane) applies the lane's own list, the
// outboxes of the other local lanes addressed to it, and the entries another rank sent
// (RemoteInbox()). Crossings are known at VC allocation (InVc::remote), so the hot path
// pays one byte test per flit.
//
// Thread safety: Evaluate(lane) of distinct lanes may run at the same time, and so may
// Commit(lane) of distinct lanes once every Evaluate() of the cycle has finished (a
// lane's commit touches only its own routers). Everything else: one thread, between
// cycles.
#ifndef UKAI_SIM_ROUTER_FABRIC_H_
#define UKAI_SIM_ROUTER_FABRIC_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/lazy_array.h"
#include "sim/engine/message.h"
#include "sim/engine/partition.h"
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

// A flit handed to the PE of router `node` by the ejection port in the cycle evaluated
// (visible to the PE the next cycle), with the upstream output VC that gets its credit back
// (negative: none, or returned across a partition boundary).
struct EjectedFlit {
  Flit flit;
  int32_t node;
  int32_t credit;
};

// What crosses a partition boundary in one cycle: a flit written into input VC `dst` at
// ring slot `slot` (dst < 0: none), and/or a credit for output VC `credit` (< 0: none).
struct BoundaryEntry {
  int32_t dst;
  int32_t credit;
  int32_t slot;
  Flit flit;
};

class Fabric {
 public:
  // With `plan`, the Fabric holds the partitions [first_part, first_part + lanes) of it
  // (its lanes 0..lanes-1); without, the whole network in one lane.
  Fabric(const Topology& topology, const RouterConfig& config, const RoutingFunction* routing,
         const SelectionFunction* selection, MessagePool* messages,
         const PartitionPlan* plan = nullptr, int first_part = 0, int lanes = 1);

  int ports() const { return ports_; }
  int pe_port() const { return ports_ - 1; }
  int depth() const { return depth_; }

  int lanes() const { return static_cast<int>(lanes_.size()); }
  // Two-phase clock. Evaluates the routers listed in `routers` (each once, all of lane
  // `lane`) for cycle `now`.
  void Evaluate(int lane, const int32_t* routers, size_t count, int64_t now);
  // The flits lane `lane` handed to PEs in the cycle just evaluated, in evaluation order.
  std::span<const EjectedFlit> Ejections(int lane) const {
    const Lane& l = lanes_[static_cast<size_t>(lane)];
    return {l.ej.data(), static_cast<size_t>(l.nej)};
  }
  // Applies the transfers staged for lane `lane` during cycle `now` (flits_ejected() counts
  // every flit handed to a PE). `active`: the caller's active-node flags; routers that
  // received flits get active[r] = 1.
  void Commit(int lane, int64_t now, uint8_t* active);

  // Partition boundaries (engine/rank_exchange.h moves them between MPI ranks). The
  // partition (global number) a router belongs to, and the lane of a local partition
  // (-1: another rank's).
  int32_t PartOf(int32_t router) const { return owner_[router]; }
  int LaneOf(int32_t part) const {
    return part >= first_part_ && part < first_part_ + lanes() ? part - first_part_ : -1;
  }
  int32_t RouterOfVc(int32_t ivc) const { return ivc >> rshift_; }
  // What lane `lane` staged this cycle for partition `part` (of another lane or rank).
  const std::vector<BoundaryEntry>& Outbox(int lane, int32_t part) const {
    return lanes_[static_cast<size_t>(lane)].out[static_cast<size_t>(part)];
  }
  // Entries another rank sent to lane `lane` this cycle (applied, their flits written into
  // their slots, and cleared by Commit()).
  std::vector<BoundaryEntry>* RemoteInbox(int lane) {
    return &lanes_[static_cast<size_t>(lane)].remote_in;
  }

  // Flits keep only the low 32 bits of their arrival cycle (Flit::ArrivedBy()). Called at
  // least every 2^30 cycles (before Evaluate()), this sets the arrival of every buffered
  // flit that has arrived by `now` to `now` (the same for visibility), so every arrival
  // stays within 2^31 cycles of the clock.
  void RebaseArrivals(int64_t now);
  static constexpr int64_t kRebaseInterval = int64_t{1} << 30;

  // PE side of the injection port (same node as the router: no staging needed).
  int InjectionFree(int32_t router, int vc) const {
    return depth_ - in_[Ivc(router, pe_port(), vc)].count;
  }
  int InjectionCount(int32_t router, int vc) const { return in_[Ivc(router, pe_port(), vc)].count; }
  // Flits buffered in input VC `vc` of any port (measurements: bench/sim/ud_load_main.cc).
  int InputCount(int32_t router, int port, int vc) const {
    return in_[Ivc(router, port, vc)].count;
  }
  // Pushes `flit` into injection VC `vc` of `router`, which must have room.
  void Inject(int32_t router, int vc, const Flit& flit) {
    const int32_t ivc = Ivc(router, pe_port(), vc);
    InVc& q = in_[ivc];
    const int slot = (q.head + q.count) & slot_mask_;
    buf_[(static_cast<size_t>(ivc) << dshift_) + slot] = flit;
    ++q.count;
    masks_[ivc >> mshift_].nonempty |= Bit(ivc);
  }

  // A bounded ejection (the SSS NIC's receive ring, nic/sss_nic.h): ejection VC 0 of
  // `router` gets `credits` flits of room, its other ejection VCs none; an ejected flit
  // takes one, ReturnEjectCredits() gives them back (between cycles). Virtual cut-through
  // then ejects a message only when the room holds all of it.
  void SetEjectCredits(int32_t router, int32_t credits);
  void ReturnEjectCredits(int32_t router, int32_t credits);
  int32_t EjectCredits(int32_t router) const { return out_[Ivc(router, pe_port(), 0)].credits; }

  // Faults (topology/faults.h): a dead port is offered to no new head (messages already
  // holding one of its output VCs finish crossing it); a head whose routing leaves no live
  // candidate, or whose destination node is dead, is drained into this router's ejection
  // port and its message marked Message::undeliverable (never a hang).
  void SetPortAlive(int32_t router, int port, bool alive);
  void SetNodeAlive(int32_t router, bool alive) { dead_[router] = alive ? 0 : 1; }
  // Makes every routed head that holds no output VC yet route again (after liveness or
  // routing tables changed); it pays its hop pipeline again.
  void ForgetRoutes();

  // Reconfiguration discards (fabric_purge.cc; between cycles, after Commit()): every
  // message with flits in a router or an output VC held for it (sorted, unique)...
  void InFlight(std::vector<int32_t>* out) const;
  // ...and the removal of every flit of the messages `discard` selects: their slots'
  // credits go back upstream, output VCs they hold are released and the VCs they were
  // served by route their next head afresh. Returns the flits removed. Credits of an
  // upstream output VC on another rank go to `remote` instead (apply there with
  // ApplyPurgedCredits()).
  struct PurgedCredits {
    int32_t ovc;      // the upstream output VC
    int32_t credits;  // slots freed
    int32_t tail;     // its new write slot
  };
  int64_t Purge(const std::function<bool(int32_t msg)>& discard,
                std::vector<PurgedCredits>* remote = nullptr);
  void ApplyPurgedCredits(const PurgedCredits& c);
  int64_t flits_discarded() const { return flits_discarded_; }
  // Candidates left empty by dead ports: drain the message as undeliverable (default) or,
  // while `hold` (a reconfiguration is under way), let the head wait for new tables.
  void SetHoldUnroutable(bool hold) { hold_unroutable_ = hold; }

  // True while router `router` holds flits.
  bool HasFlits(int32_t router) const {
    for (int w = 0; w < words_; ++w) {
      if (masks_[(router << (rshift_ - mshift_)) + w].nonempty != 0) return true;
    }
    return false;
  }
  // Flits buffered in router `router` (sums its VCs: for checks, not the hot path).
  int32_t buffered(int32_t router) const;
  // Counters of lane `lane`.
  int64_t flits_moved(int lane) const { return lanes_[static_cast<size_t>(lane)].flits_moved; }
  int64_t flits_ejected(int lane) const { return lanes_[static_cast<size_t>(lane)].flits_ejected; }
  int64_t flit_hops(int lane) const { return lanes_[static_cast<size_t>(lane)].flit_hops; }
  int64_t last_move_cycle(int lane) const {
    return lanes_[static_cast<size_t>(lane)].last_move_cycle;
  }
  // Whether lane `lane` sent a flit into a router this cycle (that router holds flits
  // after Commit()).
  bool Received(int lane) const {
    const Lane& l = lanes_[static_cast<size_t>(lane)];
    return l.ntx > 0 || l.boundary_flits > 0 || l.arrivals_pending > 0;
  }
  // Flits copied into the extra branches of forks (hierarchical multicast): flits in the
  // network = injected + copied - ejected - discarded.
  int64_t flits_copied() const;
  // router.switching = vct-saf: heads that found no free output when their hop pipeline
  // ended and were stored whole before going on; saf: every head stored (network input
  // ports, not the ejection). This Fabric's routers.
  int64_t packets_stored() const;
  // The longest channel latency of the network (cycles).
  int max_link_cycles() const { return max_link_cycles_; }

  void SetHopObserver(std::function<void(const HopEvent&)> observer) {
    observer_ = std::move(observer);
  }
  // For tests: false makes Evaluate() and Commit() take the generic path whatever the
  // layout, and BookSim2's VC requests the general matching (the constant-layout paths and
  // the lean matching must give the same results).
  void SetConstantLayouts(bool on) { constant_layouts_ = on; }
  // For tests (before the first cycle): false routes every head afresh through
  // RoutingFunction::Route(), also with a PureRoute() routing (whose answers are otherwise
  // kept per router and destination) or one with RouteOne() (otherwise called instead).
  void SetRouteCache(bool on);
  // Before the first cycle: with `on`, a flit sent over a channel of router.model = booksim
  // counts in its downstream VC only from the cycle it arrives (Lane::arrival_ring), not
  // from the cycle it was sent, so the routers do not look each cycle whether the flits on
  // their way have arrived yet, and a head that arrives at an empty VC is routed by the
  // Commit() that counts it (CountArrivals()). The same results. Takes effect only on a Fabric of
  // one partition without the extras (Hot::extras) or in-band flow control, and must stay off where
  // Purge() may run (timed faults): flits on their way are not in their VCs yet.
  void SetDeferredArrivals(bool on);

  // Debug checks: credit conservation on every channel VC, buffer/mask agreement,
  // ownership consistency. Returns "" when all hold, else a description.
  std::string CheckInvariants() const;
  // Cut-through without midway stops (the SSS-CORE switch, docs/sss.md): every input VC
  // that holds an output VC of a network port and has already sent its message's head has
  // the next flit in place at `now` (so it sends it this cycle). Returns "" when that holds,
  // else the first VC that breaks it. Meaningful with one VC per port (router.vcs = 1,
  // router.pe_vcs = 1): VCs of one port otherwise share it flit by flit.
  std::string CheckNoMidwayStop(int64_t now) const;
  // One line per non-empty input VC of this Fabric's routers, in node order: "node N port
  // P vc V: M flits, head of message S->D ..."; past `limit` lines a last "...". With
  // `nodes`, also the node of every line but the "..." (an MPI rank's lines are merged
  // with the others' in node order).
  std::vector<std::string> DescribeBlocked(const Topology& topology, size_t limit,
                                           std::vector<int32_t>* nodes = nullptr) const;
  // The routers this Fabric evaluates (all lanes).
  const std::vector<NodeRun>& local_routers() const { return local_; }

  // Bytes of router state this Fabric reserved (its arrays at full size, whether or not
  // their pages were touched yet): what StateBytes() estimates.
  double ReservedBytes() const;
  // Largest router count the index layout supports for this topology and config (input
  // VC indices are int32 with a power-of-two port and VC stride).
  static int64_t MaxRouters(int ports, const RouterConfig& config);
  // Bytes the constructor allocates for `routers` routers of `ports` ports (the memory
  // estimate checked against run.memory_limit before a point runs); allocates nothing.
  static double StateBytes(int64_t routers, int ports, const RouterConfig& config);

 private:
  // Input VC states: kIdle (no routed head at the front), kRouted (head routed, in its hop
  // pipeline or waiting for an output VC), kBlocked (a kRouted head whose last selection
  // failed at VC-allocation epoch `aux`); owning an output VC is the Masks::active bit.
  enum : uint8_t { kIdle = 0, kRouted = 1, kBlocked = 2 };
  struct InVc {
    uint16_t head, count;  // ring buffer front and fill
    uint8_t state;
    uint8_t cand_count;  // routing candidates of the head: one inline, more in cand_
    // cand_count == 1: the candidate itself (output port and VC mask; with one candidate
    // its tier does not matter), kept here so selection reads no other cache line.
    uint8_t cand_port;
    // Active: 1 when a departing flit or its credit crosses into another partition (set
    // at VC allocation from remote_); Traverse() then takes the boundary path.
    uint8_t remote : 1;
    // router.switching = vct-saf / saf: 1 once the head has fallen back to (or always does)
    // store-and-forward: it selects an output only when its whole message is here.
    uint8_t stored : 1;
    uint32_t cand_mask;
    int32_t out;  // owned output VC (global index), when active
    // Active: where the flits go (the downstream input VC, or this router for the
    // ejection port); kBlocked: epoch_ of the router when the selection failed.
    int32_t aux;
    int32_t up;     // the upstream output VC a departing flit returns its credit to; < 0: none
    int64_t ready;  // kRouted: the head may allocate from this cycle on
  };
  static_assert(sizeof(InVc) == 32);
  // One 64-bit word of a router's input-VC bitmasks: word ivc >> mshift_, bit
  // ivc & (2^mshift_ - 1) (mshift_ = min(6, pshift_ + vshift_): a port's VCs never straddle
  // two words).
  struct Masks {
    uint64_t nonempty;  // VCs holding flits
    uint64_t visible;   // VCs whose front flit has arrived (a subset of nonempty)
    uint64_t active;    // VCs owning an output VC
    uint64_t credit;    // active VCs whose output VC has a credit (a subset of active)
    // The same bits for the router's output VCs (an output VC's index is laid out as an
    // input VC's): held by an input VC (OutputVcState::owner >= 0)...
    uint64_t owned;
    // ...and, with BookSim2's VC allocators, released by a router that is not a terminal
    // in cycle freed_at (only the last such cycle's): a head may request them from
    // freed_at + 2 on (BookSim2 allocates a VC one cycle before the switch).
    uint64_t freed;
    int64_t freed_at;
    // Input VCs whose routed head is still in its hop pipeline (ready in a later cycle):
    // the head loop skips them until Lane::pipe_ring clears the bit in their ready cycle.
    uint64_t pipe;
  };
  static_assert(sizeof(Masks) == 64);
  // Switch allocation round-robin pointers of a router port (index Pi).
  struct RoundRobin {
    uint8_t in;   // next VC this input port prefers
    uint8_t out;  // next input port this output port prefers
  };
  // A flit staged by Evaluate() for Commit(): written into input VC `dst` (its slot at the
  // output VC's tail; Commit() makes it count), with `credit`: the upstream output VC that
  // gets a credit back for the slot the flit left, negative when it came from the injection
  // port.
  struct Transfer {
    int32_t dst;
    int32_t credit;
  };
  using Ejected = EjectedFlit;
  // A request of BookSim2's VC allocators: input VC ivc (port ip, VC v) for the output VCs
  // `mask` of output port `port`, of routing tier `tier` (one routing candidate).
  struct BsReq {
    int32_t ivc;
    int16_t ip, v, tier, port;
    uint32_t mask;
  };
  // Raw pointers and scalars of the hot loops, set once by the constructor (the vectors
  // never resize afterwards) and copied to a local by Evaluate(): the compiler cannot keep
  // member pointers in registers across the byte-sized stores of the loop bodies (they may
  // alias), so without the copy every access reloads them.
  struct Hot {
    Flit* __restrict buf;
    InVc* __restrict in;
    OutputVcState* __restrict out;
    Masks* __restrict masks;
    RoundRobin* __restrict rr;
    uint32_t* __restrict epoch;
    const int32_t* __restrict down_ivc;
    const uint8_t* __restrict remote;  // remote_ (all zero unless `partitioned`)
    Transfer* __restrict tx;           // the evaluating lane's lists
    Ejected* __restrict ej;
    RouteResult* route;               // the lane's RouteHead() scratch
    std::vector<BsReq>* bs_req;       // the lane's BookSim2 VC-allocation requests
    std::vector<int32_t>* pipe_ring;  // the lane's Lane::pipe_ring
    int lane;
    // Per router port (index Pi): the latency of the channel it feeds, when the topology
    // gives channels their own latencies (topology/graph.h); nullptr: `link` everywhere.
    const int32_t* __restrict link_port;
    int ports, pe, pshift, vshift, dshift, mshift, link;
    uint32_t slot_mask;
    bool grant_options;   // grant_options_
    bool shared_headers;  // router.header_units = per_port
    int table_ports;      // router.table_read_ports
    // Forks, store-and-forward, per-port link latencies or a bounded ejection are in use:
    // the hot paths test this one flag first (false on the constant-layout paths, which
    // then compile those features out).
    bool extras;
    bool booksim_va;  // booksim_va_ != kMaxCredit (a constant on the constant-layout paths)
    // booksim_va_ == kIslip: the matched requests name distinct output VCs, so
    // AllocateVcs() grants each without arbitration.
    bool va_unique;
    bool partitioned;  // the network has more than one partition
    // Every router with several BookSim2 VC requests goes through MatchBooksimVcs()
    // (SetConstantLayouts(false): tests compare MatchBooksim()'s lean cases with it).
    bool generic_match;
    // SetDeferredArrivals() in effect: every flit counted in a VC has arrived.
    bool counted_arrived;
  };
  // Per-router scratch of one Evaluate.
  struct VaReq {
    int32_t ivc, ovc;
    int ip, v;
  };
  struct Scratch {
    int ntx, nej;  // staged transfers and ejections so far
    // Switch allocation of the current router: per input port the nominated VC and its
    // output port; per output port the requesting input ports (zero for every port not in
    // out_mask: GrantOutput() and the withdrawal in AllocateVcs() clear what they consume).
    uint32_t nominated;   // input ports with a nomination
    uint32_t table_used;  // table read ports (VC groups) taken this cycle
    uint32_t out_mask;    // output ports with requests
    uint8_t nom_v[32], nom_op[32];
    uint32_t out_req[32];
    int nva;  // VC-allocation requests in va
    VaReq va[32 * 32];
    // BookSim2's VC allocators, the current router's requests so far (RequestBooksim()):
    // the output VCs (bit: router-local index, up to 64) some request names, those two or
    // more name, and whether one came through RequestBooksimVcs() (MatchBooksim() resets
    // them).
    uint64_t bs_any, bs_multi;
    bool bs_generic;
  };

  // One lane per local partition: what its Evaluate() staged during a cycle for Commit()
  // (the order of entries does not matter; fixed capacity: at most one flit per output
  // port and cycle), its boundary outboxes (per global partition) and inbox from other
  // ranks, its counters.
  struct alignas(64) Lane {
    int32_t part = 0;
    std::vector<Transfer> tx;
    std::vector<Ejected> ej;
    int ntx = 0, nej = 0;
    int boundary_flits = 0;  // flits this cycle into other partitions' routers
    std::vector<std::vector<BoundaryEntry>> out;
    std::vector<int32_t> out_used;  // partitions with outbox entries this cycle
    std::vector<BoundaryEntry> remote_in;
    // RouteHead()'s scratch (here, not in Scratch: Scratch's address then never escapes
    // Evaluate(), so its counters and masks can stay in registers).
    RouteResult route;
    // BookSim2's VC allocators (fabric_booksim.cc): the requests of the router being
    // evaluated.
    std::vector<BsReq> bs_req;
    // router.model = booksim: credits on their way back, by the cycle they count from
    // (slot cycle % size; the size is a power of two), and the last cycle whose credits
    // were applied.
    std::vector<std::vector<int32_t>> credit_ring;
    int64_t credits_applied = -1;
    // Input VCs whose Masks::pipe bit is cleared in cycle t, at slot t % kPipeSlots, and
    // the last cycle whose slot was cleared (ClearPipes()).
    std::vector<std::vector<int32_t>> pipe_ring;
    int64_t pipes_cleared = -1;
    // SetDeferredArrivals(): the input VCs of the flits on their way, at slot t % size by
    // the cycle t whose Commit() counts them (the cycle before they arrive), the last cycle
    // whose slot was applied, and how many flits are on the ring.
    std::vector<std::vector<int32_t>> arrival_ring;
    int64_t arrivals_applied = -1;
    int64_t arrivals_pending = 0;
    int64_t flits_moved = 0, flits_ejected = 0, flit_hops = 0, last_move_cycle = 0;
  };
  void InitHot();
  void InitBooksimTiming(const Topology& topology, const RouterConfig& config);
  void CheckRouter(int32_t r, const std::function<void(const std::string&)>& fail) const;
  int PurgeVc(int32_t ivc, const std::function<bool(int32_t msg)>& discard,
              std::vector<PurgedCredits>* remote);
  void InitRouter(const Topology& topology, const RouterConfig& config, int32_t r);
  int32_t Pi(int32_t r, int p) const { return (r << pshift_) | p; }
  int32_t Ivc(int32_t r, int p, int v) const { return (Pi(r, p) << vshift_) | v; }
  uint64_t Bit(int32_t ivc) const { return uint64_t{1} << (ivc & ((1 << mshift_) - 1)); }
  // Output VC `ovc` held by input VC `ivc` / free again (its owner and Masks::owned; off
  // the hot paths, which update both inline).
  void SetOwner(int32_t ovc, int32_t ivc) {
    out_[ovc].owner = ivc;
    masks_[ovc >> mshift_].owned |= Bit(ovc);
  }
  void ClearOwner(int32_t ovc) {
    out_[ovc].owner = -1;
    masks_[ovc >> mshift_].owned &= ~Bit(ovc);
  }
  // One mask (`field` of Masks) of port p of router r, bit v = VC v (debug views).
  uint32_t PortBits(uint64_t Masks::*field, int32_t r, int p) const {
    const int32_t ivc0 = Ivc(r, p, 0);
    const uint64_t vfull = (uint64_t{1} << (1 << vshift_)) - 1;
    return static_cast<uint32_t>((masks_[ivc0 >> mshift_].*field >> (ivc0 & ((1 << mshift_) - 1))) &
                                 vfull);
  }
  // Evaluate() for 8-port-stride routers of 2^kVshift VCs of 2^kDshift-flit buffers,
  // 1-cycle links (kBooksim: BookSim2's VC allocators, any link latency).
  template <int kVshift, int kDshift, bool kBooksim>
  void EvaluateFixed(const Hot& base, const int32_t* routers, size_t count, int64_t now,
                     Scratch& s);
  void EvaluateRouter(const Hot& h, int32_t r, int64_t now, Scratch& s);
  void ScanRouter(const Hot& h, int32_t r, int32_t rpi, int64_t now, Scratch& s);
  void Nominate(const Hot& h, int32_t rpi, int ip, uint32_t cand, Scratch& s);
  void GrantOutput(const Hot& h, int32_t r, int32_t rpi, int op, int64_t now, Scratch& s);
  // GrantOutput() with router.eject_flits > 1, router.switch_bubble_cycles > 0 or
  // router.flow_control = in-band.
  void GrantWithOptions(const Hot& h, int32_t r, int32_t rpi, int op, uint32_t req, int64_t now,
                        Scratch& s);
  void HandleHead(const Hot& h, int32_t r, int32_t ivc, int64_t now, Scratch& s);
  // Store-and-forward (router.switching = vct-saf / saf): false while the head of `ivc`
  // must wait for the rest of its message; `failed` after a failed selection.
  // These take no Hot or Scratch (they use hot_): the address of Evaluate()'s locals must
  // not escape into calls, or their fields can no longer be kept in registers.
  bool MaySelect(int32_t r, int32_t ivc, int64_t now);
  void StoreAfterFailure(int32_t r, int32_t ivc);
  // Forks (RouteResult::Fork(); fabric_fork.cc): acquire the routed head's branches in
  // order (each port whole), copy a departing flit to the branches after the first,
  // release every branch after the tail; ForkHolds(): whether `ovc` is one of the
  // branches `ivc` holds (its other VCs too; for the invariant check).
  // CopyToBranches() appends the copies to lane `lane`'s tx / ej lists after `ntx` / `nej`
  // entries and returns the new counts as (ntx << 32 | nej).
  void ForkAcquire(int32_t r, int32_t ivc);
  uint64_t CopyToBranches(int32_t r, int32_t ivc, Flit f, int64_t now, int ntx, int nej, int lane);
  void ReleaseFork(int32_t r, int32_t ivc);
  bool ForkHolds(int32_t ivc, int32_t ovc) const;
  // ScanRouter()'s head loop with router.header_units = per_port.
  void HandleHeadsShared(const Hot& h, int32_t r, int32_t rpi, int64_t now, Scratch& s);
  void AllocateVcs(const Hot& h, int32_t r, int32_t rpi, Scratch& s);
  bool GrantVc(const Hot& h, int32_t r, int32_t rpi, const VaReq& q);
  bool AllocateLone(const Hot& h, int32_t r, int32_t rpi, Scratch& s);
  // router.vc_allocator = islip / separable_input_first (fabric_booksim.cc): a head's
  // requests (every free candidate VC) into lane `lane`'s list, and their matching into
  // s.va after the router's scan.
  void RequestBooksimVcs(int lane, int32_t r, int32_t ivc, int64_t now);
  void MatchBooksimVcs(int lane, int32_t r, Scratch& s);
  uint64_t IslipContested(const BsReq* req, int n, int32_t rbase, int32_t* winner,
                          bool* grouped) const;
  // islip's matching of requests of distinct input VCs (in ascending order) on a router of
  // up to 64 VCs, `multi` the output VCs (router-local bits) more than one of them names.
  void MatchIslipContested(int lane, int32_t r, uint64_t multi, Scratch& s);
  // Inline front ends of those for the common case (fabric_evaluate.cc): a head of one
  // candidate on a wormhole router without atomic VCs or re-routing (booksim_simple_), and
  // a router whose requests are all such heads' (one per input VC): each takes its nearest
  // VC, except islip's output VCs named more than once (MatchIslipContested()).
  void RequestBooksim(const Hot& h, int32_t r, int32_t ivc, int64_t now, Scratch& s);
  void MatchBooksim(const Hot& h, int32_t r, Scratch& s);
  // The VC of `mask` (!= 0) whose router-local output VC index port_base + vc comes first in
  // round-robin order from pointer `ptr`: the first at or after ptr's VC when ptr points
  // into this port, else the lowest.
  static int NearestVc(uint32_t mask, int32_t port_base, int32_t ptr, int vshift) {
    const int32_t rel = ptr - port_base;
    const int start = rel > 0 && rel < (1 << vshift) ? rel : 0;
    const auto hi = static_cast<uint32_t>((uint64_t{mask} >> start) << start);
    return __builtin_ctz(hi != 0 ? hi : mask);
  }
  // A PureRoute() answer kept for the head `f` of input VC `ivc`: then it is routed (true);
  // false: RouteHead() must route it.
  bool RouteFromCache(const Hot& h, int32_t r, int32_t ivc, const Flit& f, int64_t now);
  // RouteHead() through RoutingFunction::RouteOne() (route_one_); false: RouteHead() must
  // route it.
  bool RouteFast(const Hot& h, int32_t r, int ip, int v, int32_t ivc, const Flit& f, int64_t now);
  // RouteHead() for a head at its destination router when sink_fast_ (no terminals): the
  // ejection port's VCs; false: RouteHead() must route it.
  bool RouteToSink(const Hot& h, int32_t r, int32_t ivc, int64_t now);
  // router.model = booksim's credit channels (fabric_booksim.cc): Commit() of lane `lane`
  // for cycle `now` with every credit put on its way, and the credits that count from
  // `now` on applied (Evaluate() calls it first).
  void CommitDelayed(Lane& lane, int64_t now, uint8_t* active);
  void DeferCredit(Lane& lane, int32_t ovc, int64_t now);
  // Clears the Masks::pipe bits due in the cycles since the last call, up to `now`.
  void ClearPipes(Lane& lane, int64_t now);
  // SetDeferredArrivals(): the flits staged in cycle `now` go on the arrival ring; those
  // due to arrive in cycle now + 1 count in their VCs (CommitDelayed() calls it).
  void DeferArrivals(Lane& lane, int64_t now, uint8_t* active);
  // DeferArrivals()'s count of the flits `due` (fabric_evaluate.cc): each counts in its VC,
  // which is visible, and its router is active. A head that becomes the front of a VC with
  // no routed head is routed at once as the head loop of cycle now + 1 would route it,
  // where that needs no router state (the route cache, RouteOne(), the ejection port: the
  // same answer), and goes into its hop pipeline (Masks::pipe): the routers then do not
  // visit it before its ready cycle.
  void CountArrivals(Lane& lane, const std::vector<int32_t>& due, int64_t now, uint8_t* active);
  // Flits on their way into input VC `ivc` (the invariant check counts them).
  int32_t ArrivalsPending(int32_t ivc) const;
  static constexpr int kPipeSlots = 8;  // a power of two
  void ApplyDueCredits(Lane& lane, int64_t now);
  void ApplyCredit(int32_t ovc);
  // Credits on their way back to output VC `ovc` (the invariant check counts them).
  int32_t CreditsOnTheirWay(int32_t ovc) const;
  void Traverse(const Hot& h, int32_t r, int32_t pi, int ip, int v, int op, int64_t now,
                Scratch& s);
  // kVshift, kPshift: the index layout's shifts when known at compile time, else -1.
  template <bool kRoom, int kVshift, int kPshift>
  void CommitStaged(const Lane& lane, uint8_t* active);
  // Applies boundary entries addressed to this lane's routers.
  void CommitInbox(const std::vector<BoundaryEntry>& entries, uint8_t* active,
                   Lane* delayed = nullptr, int64_t now = 0);
  // Traverse()'s staging of a flit (to input VC `dst`, slot `slot`; ejection when dst < 0)
  // and its credit when one of them crosses into another partition.
  void StageBoundary(const Hot& h, Scratch& s, int32_t router, int32_t dst, int32_t slot,
                     const Flit& flit, int32_t credit);
  // Returns true when the routing read a table for this hop.
  bool RouteHead(int32_t r, int ip, int v, int32_t ivc, const Flit& f, int64_t now,
                 RouteResult* result);
  int32_t SelectOutput(const Hot& h, int32_t r, int32_t ivc, const Flit& f, int64_t now);
  bool ReRouteBlocked(const Hot& h, int32_t r, int ip, int v, int32_t ivc, const Flit& f,
                      int64_t now);

  const RoutingFunction* routing_;
  const SelectionFunction* selection_;
  bool max_credit_;  // selection_ is a MaxCreditSelection: call SelectMaxCredit() directly
  MessagePool* messages_;
  int nodes_, ports_, vstride_, depth_;
  // Ring buffers of 1 << dshift_ slots (depth_ rounded up to a power of two: the slot of
  // ring position i is i & slot_mask_); only depth_ of them are ever in use.
  int dshift_;
  uint32_t slot_mask_;
  int pshift_, vshift_;  // index layout: Pi = r << pshift | p, Ivc = Pi << vshift | v
  int rshift_;           // pshift_ + vshift_: router = ivc >> rshift_
  int mshift_, words_;   // Masks word of ivc = ivc >> mshift_; words_ per router
  int hop_cycles_, link_cycles_, table_lookup_cycles_;
  bool vct_;
  int saf_;  // 0: no store-and-forward; kSafFallback (vct-saf); kSafAlways (saf)
  static constexpr int kSafFallback = 1, kSafAlways = 2;
  bool reroute_;  // routing_->ReRouteWhileBlocked()
  // Wormhole: routing_->AtomicVcMask(), the VCs that are free only when empty; VCT: 0.
  uint32_t atomic_vcs_;
  // The selection needs credits (VCT: room for the message; atomic: an empty VC), so a
  // returning credit may unblock a head: Commit() then advances the router's epoch.
  bool needs_room_;
  int cand_stride_;
  int eject_flits_, bubble_cycles_;
  bool grant_options_;   // eject_flits_ > 1 || bubble_cycles_ > 0 || in_band_
  bool shared_headers_;  // router.header_units = per_port
  int table_ports_;      // router.table_read_ports

  // Input VCs (index Ivc). Every array is indexed by global router numbers; only the
  // entries of local_ routers are initialised or touched (LazyArray: the rest is never
  // backed by memory), except the buffer slots boundary output VCs write.
  LazyArray<Flit> buf_;
  LazyArray<InVc> in_;
  LazyArray<RouteCandidate> cand_;
  // Output VCs (same indexing as input VCs).
  LazyArray<OutputVcState> out_;
  LazyArray<int32_t> va_rr_;
  // BookSim2's VC allocators: the allocator they stand for (kMaxCredit: none, the
  // SelectionFunction) and per input VC its round-robin pointer over its router's output
  // VCs (router-local index; empty with kMaxCredit).
  VcAllocator booksim_va_ = VcAllocator::kMaxCredit;
  // With them: no re-routing, wormhole, no atomic VCs (RequestBooksim()'s inline case).
  bool booksim_simple_ = false;
  LazyArray<int32_t> va_accept_;
  // router.model = booksim: switch traversal cycles moved onto the channels, and the
  // credit channels (credit_delay_ < 0: credits count the next cycle, ukai's model).
  int traversal_cycles_ = 0;
  int credit_delay_ = -1;
  // SetDeferredArrivals(): asked for, and in effect (InitHot()).
  bool defer_arrivals_wanted_ = false;
  bool defer_arrivals_ = false;
  int32_t defer_credit_cycles_ = 0;  // then the latency of every credit channel
  // Per router port (index Pi): the latency of the credit channel into it; per node: 1 for
  // a terminal node (InitBooksimTiming()). Empty unless router.model = booksim.
  std::vector<int32_t> credit_port_;
  std::vector<uint8_t> terminal_;
  // Per router port (index Pi).
  LazyArray<RoundRobin> rr_;
  LazyArray<uint32_t> valid_vcs_;
  LazyArray<int32_t> down_ivc_;  // input VC 0 of the port this output port feeds, or -1
  // 1 when the channel of this port joins two partitions (flits out and credits back
  // cross it).
  LazyArray<uint8_t> remote_;
  // With bubble_cycles_ > 0: the message (Message::uid(): pool indices are reused and
  // differ between partitions) of the last flit an output port sent, and when.
  struct LastSent {
    uint64_t uid;
    int64_t cycle;
  };
  LazyArray<LastSent> last_sent_;
  // With router.header_units = per_port (index Pi): the cycle from which the port's header
  // unit takes a new head, and the VC it offers the next VC-allocation request first.
  LazyArray<int64_t> header_free_;
  LazyArray<uint8_t> header_rr_;
  LazyArray<uint8_t> dead_;  // per node (every one: heads check their destination's): faulty
  // Routings with PureRoute() on networks of up to kRouteCacheNodes nodes: per (router,
  // destination), index router * nodes_ + destination, the one live candidate RouteHead()
  // got for it (bits 0-15: port + 1, bits 32-63: VC mask; 0: not known yet). A router's
  // entries are written by its own lane only; SetPortAlive() drops them all when a port's
  // liveness changes.
  static constexpr int kRouteCacheNodes = 256;
  bool cache_routes_ = false;
  LazyArray<uint64_t> route_cache_;
  // The routing answers through RoutingFunction::RouteOne() (no fork, no kept routes):
  // RouteFast() routes heads without a RouteRequest.
  bool route_one_ = false;
  // With the route cache or RouteOne() on a routing that does not route at the destination:
  // a head at its destination goes to the ejection port without RouteHead().
  bool sink_fast_ = false;
  // Forks: per input VC the branches of its routed head (0: none) and those acquired, and
  // kMaxBranches slots of (output VC, downstream input VC or this router for the PE).
  // Forks, bounded ejection and per-channel latencies need a Fabric of one partition
  // (Network::CheckPartitionable()); those vectors then span the whole network.
  struct ForkBranch {
    int32_t ovc, aux;
  };
  static constexpr int kMaxBranches = 32;
  bool forking_ = false;  // routing_->MayFork(): the vectors below exist
  std::vector<uint8_t> fork_n_, fork_got_;
  std::vector<ForkBranch> fork_;
  std::vector<int64_t> copied_count_;   // per router: flits copied (flits_copied())
  std::vector<int32_t> link_port_;      // per router port: channel latency (see Hot)
  std::vector<uint8_t> eject_bounded_;  // per router: SetEjectCredits() was called
  // With store-and-forward, per router (written by its lane only): heads stored.
  LazyArray<int64_t> stored_count_;
  int max_link_cycles_ = 0;
  uint32_t net_vc_mask_;  // the VCs of a live network port
  // Per router.
  LazyArray<Masks> masks_;     // words_ per router (index ivc >> mshift_)
  LazyArray<uint32_t> epoch_;  // changes whenever an output VC may have become free
  // Partitions: the partition of every router (global numbers), the local ones
  // [first_part_, first_part_ + lanes()), and their routers.
  std::vector<int32_t> owner_;
  int first_part_ = 0;
  std::vector<NodeRun> local_;
  std::vector<Lane> lanes_;
  Hot hot_;
  bool constant_layouts_ = true;  // SetConstantLayouts()

  // router.flow_control = in-band (fabric_flow.cc; one partition): per router port (index
  // Pi) the output port of the channel that runs the other way on the same link (-1: none),
  // and per port two slots (cycle & 1) of the last cycles it sent a flit and it had a flit
  // refused by the rule. Evaluate() of cycle t writes only slot t & 1 of its own ports and
  // reads only slot (t - 1) & 1, so the evaluation order does not matter.
  bool in_band_ = false;
  std::vector<int32_t> fc_reverse_;
  std::vector<int64_t> fc_sent_, fc_refused_;
  void InitInBand(const Topology& topology);
  // Whether in-band flow control keeps output port `op` of router `rpi >> pshift_` from
  // sending in cycle `now` (fork: any of its branches); if so, marks them refused.
  bool InBandRefuses(int32_t rpi, int op, int32_t ivc, int64_t now);
  // Marks output port `op` (fork: every branch) as sending in cycle `now`.
  void InBandSends(int32_t rpi, int op, int32_t ivc, int64_t now);
  bool InBandBlocked(int32_t pi, int64_t now) const;

  int64_t flits_discarded_ = 0;
  bool hold_unroutable_ = false;
  int32_t ServedMessage(int32_t ivc) const;
  std::function<void(const HopEvent&)> observer_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTER_FABRIC_H_
