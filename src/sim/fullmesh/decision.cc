#include "sim/fullmesh/decision.h"

#include <algorithm>
#include <limits>

namespace ukai::sim::fullmesh {

double PrintedThresholdBytes(OpType type, int k, bool fixed_k, double bytes_per_us, double t0_us,
                             double t1_us) {
  const bool k_form = IsReduction(type) || (type == OpType::kMulticast && fixed_k);
  const double num = k_form ? k : k - 1;
  const double den = k - 2;
  // Guard: K <= 2 gives 1/0, 0 or a negative factor; use the simplified rule ([0073]).
  const double factor = den <= 0 || num <= 0 ? 1.0 : num / den;
  return factor * bytes_per_us * (t1_us - t0_us);
}

double P2pCrossoverBytes(int k, RelayMode mode, double bytes_per_us, double t0_us, double t1_us,
                         int64_t chunk_bytes) {
  const double inf = std::numeric_limits<double>::infinity();
  if (k < 1) return inf;
  const double dt = (t1_us - t0_us) * bytes_per_us;  // B * (T1 - T0), bytes
  if (mode == RelayMode::kStoreAndForward) {
    // T1 + 2S/((K+1)B) < T0 + S/B  <=>  S (K-1)/(K+1) > B (T1 - T0)
    if (k == 1) return dt < 0 ? 0 : inf;
    return std::max(0.0, dt * (k + 1) / (k - 1));
  }
  // Pipelined, part S/(K+1) >= chunk c: T1 + c/B + S/((K+1)B) < T0 + S/B
  //   <=>  S K/(K+1) > B (T1 - T0) + c.
  // A part smaller than one chunk is forwarded whole: the store-and-forward formula.
  const double c = static_cast<double>(chunk_bytes);
  const double whole_chunks = c * (k + 1);  // smallest S whose parts are >= one chunk
  const double pipe = std::max(0.0, (dt + c) * (k + 1) / k);
  if (pipe >= whole_chunks) return pipe;
  const double saf = k == 1 ? (dt < 0 ? 0 : inf) : std::max(0.0, dt * (k + 1) / (k - 1));
  return std::min(saf, whole_chunks);
}

}  // namespace ukai::sim::fullmesh
