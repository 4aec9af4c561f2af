// Rng: a small, fast, seedable pseudo-random generator (xoshiro256**, seeded through
// splitmix64) for simulations. There is no global generator: every component that needs
// randomness owns an Rng, usually one stream per node derived from the run's seed with
// Rng::Stream(seed, stream_id), so results do not depend on the order in which components
// draw numbers.
//
// Thread safety: a plain value; one object must not be used from two threads at once.
#ifndef UKAI_CORE_RNG_H_
#define UKAI_CORE_RNG_H_

#include <cstdint>

namespace ukai {

// splitmix64 step: advances `state` and returns the next output. Used for seeding.
uint64_t SplitMix64(uint64_t& state);

class Rng {
 public:
  // A generator seeded from `seed` (any value, 0 included).
  explicit Rng(uint64_t seed = 0);

  // Independent stream `stream_id` of the run seeded with `seed`: streams of one seed are
  // decorrelated, and the same (seed, stream_id) always gives the same sequence.
  static Rng Stream(uint64_t seed, uint64_t stream_id);

  // Next 64 uniformly distributed bits.
  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  double NextDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n) for n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  uint64_t Uniform(uint64_t n);

  // True with probability p (p <= 0: never, p >= 1: always).
  bool Bernoulli(double p) { return NextDouble() < p; }

  // Number of Bernoulli(p) trials up to and including the first success (>= 1), for
  // 0 < p <= 1: the gap between events of a per-cycle Bernoulli process.
  int64_t Geometric(double p);
  // The same draw with `log1m_p` = std::log1p(-p) computed once by the caller (a process
  // of one rate draws many gaps).
  int64_t Geometric(double p, double log1m_p);

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace ukai

#endif  // UKAI_CORE_RNG_H_
