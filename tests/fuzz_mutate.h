// Seeded byte mutations for replaying fuzz targets under gcc (tests/rt/fuzz_replay_test.cc,
// tests/wire/gateway_packet_fuzz_replay_test.cc): 1-4 edits, each a bit flip, an
// overwrite, an insertion or a deletion at a random place.
#ifndef UKAI_TESTS_FUZZ_MUTATE_H_
#define UKAI_TESTS_FUZZ_MUTATE_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace ukai::testing {

inline void MutateBytes(std::mt19937_64& rng, std::vector<uint8_t>* bytes) {
  std::vector<uint8_t>& in = *bytes;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !in.empty(); ++e) {
    const size_t at = rng() % in.size();
    switch (rng() % 4) {
      case 0:
        in[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        in[at] = static_cast<uint8_t>(rng());
        break;
      case 2:
        in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng()));
        break;
      default:
        in.erase(in.begin() + static_cast<std::ptrdiff_t>(at));
        break;
    }
  }
}

}  // namespace ukai::testing

#endif  // UKAI_TESTS_FUZZ_MUTATE_H_
