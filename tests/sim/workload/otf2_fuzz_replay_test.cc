// Replays the OTF2 fuzz target (fuzz/sim/otf2_fuzz.cc) under gcc (and ASan/UBSan in CI): every
// file of its corpus (fuzz/corpus/otf2/), truncations of the raw event file, and a few hundred
// seeded mutations -- programs of random events and corrupted event files. The target aborts
// on a broken invariant, so returning is the check. libotf2's own error messages are
// silenced here (the target checks the Status the reader returns instead).
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <cstdarg>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutate.h"

extern "C" int otf2_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

OTF2_ErrorCode Silent(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*,
                      va_list) {
  return code;
}

class Otf2FuzzReplay : public ::testing::Test {
 protected:
  void SetUp() override { previous_ = OTF2_Error_RegisterCallback(&Silent, nullptr); }
  void TearDown() override { OTF2_Error_RegisterCallback(previous_, nullptr); }
  OTF2_ErrorCallback previous_ = nullptr;
};

std::vector<std::vector<uint8_t>> Corpus() {
  return ukai::testing::ReadCorpusBytes(UKAI_SOURCE_DIR, "fuzz/corpus/otf2");
}

void Feed(const std::vector<uint8_t>& in) { otf2_fuzz_TestOneInput(in.data(), in.size()); }

TEST_F(Otf2FuzzReplay, CorpusAndTruncations) {
  const auto corpus = Corpus();
  ASSERT_GE(corpus.size(), 5u);
  for (const auto& bytes : corpus) {
    Feed(bytes);
    if ((bytes[0] & 1) == 0) continue;  // a raw event file: cut at every 37th length
    for (size_t n = 1; n < bytes.size(); n += 37) Feed({bytes.begin(), bytes.begin() + n});
  }
}

TEST_F(Otf2FuzzReplay, SeededMutations) {
  const auto corpus = Corpus();
  std::mt19937_64 rng(20261127);
  for (int i = 0; i < 120; ++i) {
    std::vector<uint8_t> in = corpus[rng() % corpus.size()];
    ukai::testing::MutateBytes(rng, &in);
    if (in.size() > 7 && i % 3 == 0) {  // programs: append random events
      for (int k = 0; k < 6 * static_cast<int>(rng() % 8); ++k)
        in.push_back(static_cast<uint8_t>(rng()));
    }
    Feed(in);
  }
}

}  // namespace
}  // namespace ukai::sim
