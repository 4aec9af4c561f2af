// Replays the netrace fuzz target (fuzz/sim/netrace_fuzz.cc) under gcc (and ASan/UBSan in
// CI): every file of its corpus (fuzz/corpus/netrace/), every truncation of the small ones,
// and a few hundred seeded mutations. The target aborts on a broken invariant, so returning
// is the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutate.h"

extern "C" int netrace_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

std::vector<std::vector<uint8_t>> Corpus() {
  return ukai::testing::ReadCorpusBytes(UKAI_SOURCE_DIR, "fuzz/corpus/netrace");
}

void Feed(const std::vector<uint8_t>& in) { netrace_fuzz_TestOneInput(in.data(), in.size()); }

TEST(NetraceFuzzReplay, CorpusAndTruncations) {
  const auto corpus = Corpus();
  ASSERT_GE(corpus.size(), 6u);
  for (const auto& bytes : corpus) {
    Feed(bytes);
    if (bytes.size() > 600) continue;  // the small ones at every length
    for (size_t n = 0; n < bytes.size(); ++n) Feed({bytes.begin(), bytes.begin() + n});
  }
}

TEST(NetraceFuzzReplay, SeededMutations) {
  const auto corpus = Corpus();
  std::mt19937_64 rng(20261127);
  for (int i = 0; i < 400; ++i) {
    std::vector<uint8_t> in = corpus[rng() % corpus.size()];
    ukai::testing::MutateBytes(rng, &in);
    if (!in.empty()) in[0] &= 0xfe;  // mostly the raw form: mutations reach the parser
    if (i % 4 == 0 && !in.empty()) in[0] |= 1;
    Feed(in);
  }
}

}  // namespace
}  // namespace ukai::sim
