// Replays the BookSim2 config fuzz target (fuzz/sim/booksim_config_fuzz.cc) under gcc (and
// ASan/UBSan in CI): its corpus (fuzz/corpus/booksim_config/), bench/booksim/configs and
// bench/booksim/indirect, each cut at every statement, and seeded mutations (bytes flipped,
// lines dropped, duplicated or swapped, "//set" overrides added). The target aborts on a broken
// invariant.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_mutate.h"

extern "C" int booksim_config_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

std::vector<std::string> BooksimCorpus() {
  return ukai::testing::ReadCorpus(
      UKAI_SOURCE_DIR,
      {"fuzz/corpus/booksim_config", "bench/booksim/configs", "bench/booksim/indirect"}, ".cfg");
}

void FeedBooksim(const std::string& in) {
  booksim_config_fuzz_TestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
}

TEST(BooksimConfigFuzzReplay, CorpusAndPrefixes) {
  const std::vector<std::string> corpus = BooksimCorpus();
  ASSERT_GE(corpus.size(), 5u);
  for (const std::string& text : corpus) {
    std::string prefix;
    for (const std::string& line : ukai::testing::SplitLines(text)) {
      prefix += line + "\n";
      FeedBooksim(prefix);
    }
  }
}

TEST(BooksimConfigFuzzReplay, SeededMutations) {
  const std::vector<std::string> corpus = BooksimCorpus();
  const std::vector<std::string> keys = {"k",
                                         "n",
                                         "topology",
                                         "routing_function",
                                         "num_vcs",
                                         "vc_buf_size",
                                         "packet_size",
                                         "injection_rate",
                                         "traffic",
                                         "sim_type",
                                         "sample_period",
                                         "max_samples",
                                         "latency_thres",
                                         "use_noc_latency",
                                         "speculative",
                                         "routing_delay",
                                         "input_speedup",
                                         "seed"};
  const std::vector<std::string> values = {"0",
                                           "1",
                                           "2",
                                           "-1",
                                           "1e308",
                                           "nan",
                                           "{}",
                                           "{1,2}",
                                           "{",
                                           "mesh",
                                           "torus",
                                           "time",
                                           "hotspot({0},{1})",
                                           "hotspot(",
                                           "0.5",
                                           "\"x\"",
                                           "dim_order",
                                           "throughput"};
  std::mt19937_64 rng(20261127);
  auto pick = [&rng](const auto& v) { return v[rng() % v.size()]; };
  for (int i = 0; i < 150; ++i) {
    FeedBooksim(ukai::testing::MutateLines(rng, pick(corpus), "//set ", keys, values));
  }
}

}  // namespace
}  // namespace ukai::sim
