#include "core/rng.h"

#include <cmath>
#include <limits>

namespace ukai {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  uint64_t sm = seed;
  for (uint64_t& word : s_) word = SplitMix64(sm);
}

Rng Rng::Stream(uint64_t seed, uint64_t stream_id) {
  // Mix the stream id through splitmix64 first so that neighbouring ids give unrelated
  // seeds, then combine with the run seed.
  uint64_t sm = stream_id * 0xd1b54a32d192ed03ULL + 0x2545f4914f6cdd1dULL;
  const uint64_t mixed = SplitMix64(sm);
  return Rng(seed ^ mixed);
}

uint64_t Rng::Uniform(uint64_t n) {
  if (n <= 1) return 0;
  unsigned __int128 m = static_cast<unsigned __int128>(NextU64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(NextU64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Rng::Geometric(double p) { return Geometric(p, p >= 1.0 ? 0.0 : std::log1p(-p)); }

int64_t Rng::Geometric(double p, double log1m_p) {
  if (p >= 1.0) return 1;
  // Inversion: G = ceil(log(U) / log(1 - p)) with U in (0, 1].
  const double u = 1.0 - NextDouble();  // (0, 1]
  const double g = std::ceil(std::log(u) / log1m_p);
  if (!(g >= 1.0)) return 1;  // u == 1 gives 0; also guards NaN
  if (g > static_cast<double>(std::numeric_limits<int64_t>::max() / 4)) {
    return std::numeric_limits<int64_t>::max() / 4;
  }
  return static_cast<int64_t>(g);
}

}  // namespace ukai
