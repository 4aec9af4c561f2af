// Replays the config fuzz target (fuzz/sim/sim_config_fuzz.cc) under gcc (and ASan/UBSan in
// CI): every file of its corpus (fuzz/corpus/sim_config/) and of experiments/, each cut at
// every line, and a few hundred seeded mutations of them (bytes flipped, lines dropped,
// duplicated or swapped, "#set" overrides of random keys added). The target aborts on a
// broken invariant, so returning is the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_mutate.h"

extern "C" int sim_config_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

std::vector<std::string> Corpus() {
  return ukai::testing::ReadCorpus(UKAI_SOURCE_DIR, {"fuzz/corpus/sim_config", "experiments"},
                                   ".toml");
}

void Feed(const std::string& in) {
  sim_config_fuzz_TestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
}

TEST(SimConfigFuzzReplay, CorpusAndEveryLinePrefix) {
  const std::vector<std::string> corpus = Corpus();
  ASSERT_GE(corpus.size(), 5u);  // 4 corpus files + experiments/quickstart.toml at least
  for (const std::string& text : corpus) {
    std::string prefix;
    for (const std::string& line : ukai::testing::SplitLines(text)) {
      prefix += line + "\n";
      Feed(prefix);
    }
  }
}

TEST(SimConfigFuzzReplay, SeededMutations) {
  const std::vector<std::string> corpus = Corpus();
  // Keys and values the mutations write as "#set" overrides or table lines.
  const std::vector<std::string> keys = {"network.k",
                                         "network.n",
                                         "network.topology",
                                         "router.vcs",
                                         "router.hop_cycles",
                                         "router.link_cycles",
                                         "router.switching",
                                         "routing.algorithm",
                                         "traffic.pattern",
                                         "traffic.rate",
                                         "traffic.interval",
                                         "traffic.injection",
                                         "traffic.message_bytes",
                                         "measure.mode",
                                         "measure.watchdog_cycles",
                                         "run.memory_limit",
                                         "run.threads",
                                         "run.partition_min_nodes"};
  const std::vector<std::string> values = {
      "0",      "1",       "2",        "3",     "4",
      "-1",     "1000000", "0.5",      "1.0",   "[4]",
      "[2, 3]", "[0.1",    "\"x\"",    "duato", "vct",
      "cycles", "mesh",    "interval", "[]",    "1e308",
      "nan",    "true",    "65536",    "8192",  "[\"dor\", \"duato\"]"};
  std::mt19937_64 rng(20261124);
  auto pick = [&rng](const auto& v) { return v[rng() % v.size()]; };
  for (int i = 0; i < 300; ++i) {
    Feed(ukai::testing::MutateLines(rng, pick(corpus), "#set ", keys, values));
  }
}

}  // namespace
}  // namespace ukai::sim
