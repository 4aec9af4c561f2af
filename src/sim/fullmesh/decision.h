// When the 1-hop links pay off (spec X1/X2; docs/fullmesh.md derives every formula).
//
// The document prints its rules as size < factor * B * (T1 - T0) with factor (K-1)/(K-2)
// (p2p; embodiment 6 also multicast) or K/(K-2) (embodiment 3 multicast, reduce and
// allreduce), while defining the right side as the data the extra 1-hop latency delays: the
// relays can only pay off when the size exceeds it. PrintedThresholdBytes is that right side
// with the denominators guarded: for K <= 2 the factor is 1/0, 0 or negative, and the
// document's own simplified rule (factor 1, [0073]) is used instead.
//
// P2pCrossoverBytes is the first-principles crossover this model has for a p2p over K
// relays plus the direct link: relay time T1 + c/B + S/((K+1)B) (pipelined) or
// T1 + 2S/((K+1)B) (store-and-forward) against T0 + S/B.
// Thread safety: pure functions.
#ifndef UKAI_SIM_FULLMESH_DECISION_H_
#define UKAI_SIM_FULLMESH_DECISION_H_

#include <cstdint>

#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

// The printed right side (bytes) for an operation of `type` over `k` relays; `fixed_k`
// selects embodiment 3's multicast form K/(K-2) over embodiment 6's (K-1)/(K-2).
double PrintedThresholdBytes(OpType type, int k, bool fixed_k, double bytes_per_us, double t0_us,
                             double t1_us);

// Sizes above this use the relays in a p2p with `k` relays + direct (infinite when they
// never pay off: K = 1 store-and-forward, or T1 + c/B never recovered).
double P2pCrossoverBytes(int k, RelayMode mode, double bytes_per_us, double t0_us, double t1_us,
                         int64_t chunk_bytes);

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_DECISION_H_
