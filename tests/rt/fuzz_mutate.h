// Seeded mutation of fuzz inputs for the replay tests (fuzz_replay_test.cc,
// fuzz_stream_replay_test.cc): 1-4 edits, each flipping a bit, overwriting, inserting or
// deleting a byte. Deterministic for a given generator state.
#ifndef UKAI_TESTS_RT_FUZZ_MUTATE_H_
#define UKAI_TESTS_RT_FUZZ_MUTATE_H_

#include <cstdint>
#include <random>
#include <vector>

namespace ukai::rt::testing {

inline void Mutate(std::mt19937_64& rng, std::vector<uint8_t>* in) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !in->empty(); ++e) {
    const size_t at = rng() % in->size();
    switch (rng() % 4) {
      case 0:
        (*in)[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        (*in)[at] = static_cast<uint8_t>(rng());
        break;
      case 2:
        in->insert(in->begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng()));
        break;
      default:
        in->erase(in->begin() + static_cast<std::ptrdiff_t>(at));
        break;
    }
  }
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_FUZZ_MUTATE_H_
