// Replays the BookSim2 config fuzz target (fuzz/sim/booksim_config_fuzz.cc) under gcc (and
// ASan/UBSan in CI): its corpus (fuzz/corpus/booksim_config/) and bench/booksim/configs, each
// cut at every statement, and seeded mutations (bytes flipped, lines dropped, duplicated or
// swapped, "//set" overrides added). The target aborts on a broken invariant.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int booksim_config_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

std::vector<std::string> Corpus() {
  std::vector<std::string> out;
  for (const char* dir : {"/fuzz/corpus/booksim_config", "/bench/booksim/configs"}) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::string(UKAI_SOURCE_DIR) + dir)) {
      if (e.path().extension() == ".cfg") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::ostringstream s;
      s << in.rdbuf();
      out.push_back(s.str());
    }
  }
  return out;
}

void Feed(const std::string& in) {
  booksim_config_fuzz_TestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(BooksimConfigFuzzReplay, CorpusAndPrefixes) {
  const std::vector<std::string> corpus = Corpus();
  ASSERT_GE(corpus.size(), 5u);
  for (const std::string& text : corpus) {
    std::string prefix;
    for (const std::string& line : Lines(text)) {
      prefix += line + "\n";
      Feed(prefix);
    }
  }
}

TEST(BooksimConfigFuzzReplay, SeededMutations) {
  const std::vector<std::string> corpus = Corpus();
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
    std::vector<std::string> lines = Lines(pick(corpus));
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !lines.empty(); ++e) {
      const size_t at = rng() % lines.size();
      switch (rng() % 5) {
        case 0:
          if (!lines[at].empty())
            lines[at][rng() % lines[at].size()] ^= static_cast<char>(1 << (rng() % 7));
          break;
        case 1:
          lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
          break;
        case 2:
          lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
          break;
        case 3:
          std::swap(lines[at], lines[rng() % lines.size()]);
          break;
        default:
          lines.push_back("//set " + pick(keys) + "=" + pick(values));
          break;
      }
    }
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    Feed(text);
  }
}

}  // namespace
}  // namespace ukai::sim
