// Dimension-order building blocks shared by the `dor` and `duato` routing functions on a
// k-ary n-cube: the next dimension-order hop, the rule for torus ties and the dateline VC
// classes on a torus.
//
// Ties: on a torus with k even, a destination exactly k/2 away along a dimension is as
// near "+" as "-". A tie can only be met at the first hop of that dimension (a hop along
// it leaves k/2 - 1 to go), so one choice per dimension and message decides the route.
// NextDorHop() takes the choice as a bit mask (bit d set: go "-" on a tie in dimension d);
// DorTieMinusBits() computes it for the rule `routing.dor_tie` names (DorTieRule).
//
// Dateline classes: on a torus the wrap-around channel of each dimension (between
// coordinates k-1 and 0) is the dateline. A message moving in "+" direction from
// coordinate c to d uses class 0 while c > d (it still has to wrap) and class 1 otherwise;
// in "-" direction class 0 while c < d. So class 1 never uses the wrap channel and class 0
// never uses the channel leaving coordinate 0 in "+" (k-1 in "-"): neither class's channel
// dependencies close a ring, and dimension order makes the whole network deadlock-free.
// The class is a function of (current, destination) only: no per-message state. This is
// the `split` dateline; SharedDatelineMask() is the `shared` one (see there).
#ifndef UKAI_SIM_ROUTING_DIMENSION_ORDER_H_
#define UKAI_SIM_ROUTING_DIMENSION_ORDER_H_

#include <algorithm>
#include <cstdint>

#include "sim/experiment/sim_config.h"
#include "sim/routing/route_state.h"
#include "sim/topology/kary_ncube.h"

namespace ukai::sim {

struct DorHop {
  int port = -1;  // output port, -1 when node == dst
  int dim = -1;
  int dateline_class = 1;  // 0 or 1 (always 1 on a mesh)
};

inline int DatelineClass(bool plus, int cur, int dst) {
  return plus ? (cur > dst ? 0 : 1) : (cur < dst ? 0 : 1);
}

// `minus_ties`: bit d set sends a tie in dimension d "-" (default: every tie "+").
// splitmix64's finaliser: a fixed mixing function (runs repeat).
inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline DorHop NextDorHop(const KaryNCube& topo, int node, int dst, uint32_t minus_ties = 0) {
  DorHop hop;
  for (int d = 0; d < topo.n(); ++d) {
    const int c = topo.Coord(node, d);
    const int t = topo.Coord(dst, d);
    if (c == t) continue;
    const int off = topo.Offset(d, c, t);
    const bool plus =
        off > 0 && (minus_ties == 0 || ((minus_ties >> d) & 1u) == 0 || 2 * off != topo.k(d));
    hop.port = 2 * d + (plus ? 0 : 1);
    hop.dim = d;
    hop.dateline_class = topo.torus() ? DatelineClass(plus, c, t) : 1;
    return hop;
  }
  return hop;
}

// VC masks of the two dateline classes over VCs [first, first + count): class 0 gets the
// lower floor(count/2) VCs, class 1 the rest.
inline uint32_t ClassMask(int first, int count, int cls) {
  const int n0 = count / 2;
  const int lo = cls == 0 ? first : first + n0;
  const int n = cls == 0 ? n0 : count - n0;
  return n <= 0 ? 0u : (((n >= 32) ? ~0u : ((1u << n) - 1)) << lo);
}

// The `booksim` dateline (BookSim2's dim_order_torus with dor_next_torus): a message takes
// its class where it enters a dimension and keeps it along that ring: class 1 when it must
// cross the wrap channel there ("+" from c to d with c > d, "-" with c < d), class 0
// otherwise. With dimension order a message enters dimension `dim` at its source's
// coordinate, so the class is a function of (source, destination, direction). The classes'
// VCs are BookSim2's: class 0 VCs [0, V - 1 - floor(V/2)], class 1 [floor(V/2), V - 1]
// (equal halves for even V; for odd V they share the middle VC). Class 1 carries every
// message that wraps along its whole ring; minimal routes wrap within k/2 hops, so each
// class-1 route crosses the wrap channel and none closes the ring: deadlock-free too for
// even V (`ukai sim check`; for odd V the shared middle VC carries both classes round the
// ring: cyclic, as BookSim2's model is). Kept for matching BookSim2's numbers: it loads the
// classes unlike `split` and `shared` (tornado traffic saturates earlier).
inline int BooksimDatelineClass(bool plus, int entry, int dst) {
  return plus ? (entry > dst ? 1 : 0) : (entry < dst ? 1 : 0);
}
inline uint32_t BooksimClassMask(int vcs, int cls) {
  const int lo = cls == 0 ? 0 : vcs / 2;
  const int hi = cls == 0 ? vcs - 1 - vcs / 2 : vcs - 1;
  if (hi < lo) return 0u;
  const int n = hi - lo + 1;
  return ((n >= 32) ? ~0u : ((1u << n) - 1)) << lo;
}

// The tie choices (bit d: "-" on a tie in dimension d) of a message src -> dst under
// `rule`. kRandom draws 3 random bits once per message from a hash of (src, dst, now) and
// keeps them in the routing state word's algorithm bits (route_state.h: bits 4-6, bit 7
// marks them drawn; the statistics bits stay untouched), so every router sees the same
// choice: dimension d < 3 takes bit d; a higher dimension bit d mod 3 XOR a hash bit of
// (src, dst, d) (still "-" for half the messages of every pair). kParity: "-" when the
// coordinates of src and dst outside dimension d add up to an odd number (with uniform
// traffic, half of the ties of every ring go each way). kPlus: every tie "+".
inline uint32_t DorTieMinusBits(const KaryNCube& topo, DorTieRule rule, int src, int dst,
                                int64_t now, uint32_t* state) {
  if (!topo.torus()) return 0;
  switch (rule) {
    case DorTieRule::kPlus:
      return 0;
    case DorTieRule::kParity: {
      int sum = 0;
      for (int d = 0; d < topo.n(); ++d) sum += topo.Coord(src, d) + topo.Coord(dst, d);
      uint32_t bits = 0;
      for (int d = 0; d < topo.n(); ++d) {
        const int own = topo.Coord(src, d) + topo.Coord(dst, d);
        if (((sum - own) & 1) != 0) bits |= 1u << d;
      }
      return bits;
    }
    case DorTieRule::kRandom:
      break;
  }
  static_assert(kRoutingBits == 0xF0u, "DOR keeps its tie bits in bits 4-7");
  constexpr uint32_t kDrawn = 1u << 7;
  const uint64_t pair =
      static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
  if ((*state & kDrawn) == 0) {
    *state |= kDrawn | static_cast<uint32_t>(
                           Mix64(pair ^ (static_cast<uint64_t>(now) * 0x9e3779b97f4a7c15ULL)) & 7u)
                           << 4;
  }
  const uint32_t r = (*state >> 4) & 7u;
  uint32_t bits = r & ((1u << std::min(topo.n(), 3)) - 1);
  for (int d = 3; d < topo.n(); ++d) {
    const uint32_t h = static_cast<uint32_t>(Mix64(pair + static_cast<uint64_t>(d)) & 1u);
    bits |= (((r >> (d % 3)) & 1u) ^ h) << d;
  }
  return bits;
}

// The `shared` dateline (routing.dor_dateline = "shared"): the VCs of the hop that a
// message may use, out of the two classes A (class 0, the lower half) and B (class 1).
// Per ring direction, with the wrap channel W (leaving coordinate k-1 in "+", 0 in "-"):
//   A is allowed unless the message has already crossed W (it arrives straight along this
//     ring on the channel behind W, or on a B VC: a message never goes from B back to A);
//   B is allowed unless the message must still cross W after this hop.
// Every channel dependency then goes up the order A_0 < A_1 < ... < A_W < B_W < B_0 <
// ... (channels numbered from the one after W): no ring closes, and with dimension order
// the network is deadlock-free, while a message that does not cross W may use every VC of
// its channels (the `split` dateline gives it only class 1), and B on W itself is usable
// by messages that start on W or arrive on A. `in_port` / `in_vc`: where the head is (a
// head arriving straight along the ring comes in on port hop.port ^ 1).
inline uint32_t SharedDatelineMask(const KaryNCube& topo, const DorHop& hop, int node, int dst,
                                   int in_port, int in_vc, int vcs) {
  const int k = topo.k(hop.dim);
  const int c = topo.Coord(node, hop.dim);
  const int t = topo.Coord(dst, hop.dim);
  const bool plus = (hop.port & 1) == 0;
  const int last = plus ? k - 1 : 0;   // the node W leaves from
  const int first = plus ? 0 : k - 1;  // the node W leads to
  const bool cross_later = (plus ? c > t : c < t) && c != last;
  const bool straight = in_port == (hop.port ^ 1);
  const bool on_b = straight && in_vc >= vcs / 2;
  const bool crossed = straight && c == first;
  uint32_t mask = 0;
  if (!crossed && !on_b) mask |= ClassMask(0, vcs, 0);
  if (!cross_later) mask |= ClassMask(0, vcs, 1);
  return mask;
}

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DIMENSION_ORDER_H_
