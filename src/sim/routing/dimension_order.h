// Dimension-order building blocks shared by the `dor` and `duato` routing functions on a
// k-ary n-cube: the next dimension-order hop and the dateline VC class on a torus.
//
// Dateline classes: on a torus the wrap-around channel of each dimension (between
// coordinates k-1 and 0) is the dateline. A message moving in "+" direction from
// coordinate c to d uses class 0 while c > d (it still has to wrap) and class 1 otherwise;
// in "-" direction class 0 while c < d. So class 1 never uses the wrap channel and class 0
// never uses the channel leaving coordinate 0 in "+" (k-1 in "-"): neither class's channel
// dependencies close a ring, and dimension order makes the whole network deadlock-free.
// The class is a function of (current, destination) only: no per-message state.
#ifndef UKAI_SIM_ROUTING_DIMENSION_ORDER_H_
#define UKAI_SIM_ROUTING_DIMENSION_ORDER_H_

#include <cstdint>

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

inline DorHop NextDorHop(const KaryNCube& topo, int node, int dst) {
  DorHop hop;
  for (int d = 0; d < topo.n(); ++d) {
    const int c = topo.Coord(node, d);
    const int t = topo.Coord(dst, d);
    if (c == t) continue;
    const int off = topo.Offset(d, c, t);
    const bool plus = off > 0;
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

}  // namespace ukai::sim

#endif  // UKAI_SIM_ROUTING_DIMENSION_ORDER_H_
