// Replays the anynet fuzz target (fuzz/sim/anynet_fuzz.cc) under gcc (and ASan/UBSan in
// CI): every file of its corpus (fuzz/corpus/anynet/), each cut at every byte, and seeded
// mutations of them (bytes changed, inserted, deleted; words swapped for others of the
// format). The target aborts on a broken invariant, so returning is the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int anynet_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::sim {
namespace {

void Feed(const std::string& in) {
  anynet_fuzz_TestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
}

std::vector<std::string> Corpus() {
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(UKAI_SOURCE_DIR) + "/fuzz/corpus/anynet")) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::ostringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

TEST(AnynetFuzzReplay, CorpusPrefixesAndMutations) {
  const std::vector<std::string> corpus = Corpus();
  ASSERT_GE(corpus.size(), 3u);
  for (const std::string& text : corpus) {
    for (size_t n = 0; n <= text.size(); ++n) Feed(text.substr(0, n));
  }
  std::mt19937 rng(21);
  const std::vector<std::string> words = {"router ", "node ",        "0 ", "1 ", "7 ",
                                          "-1 ",     "99999999999 ", "\n", "//", "\t"};
  for (int i = 0; i < 2000; ++i) {
    std::string s = corpus[rng() % corpus.size()];
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
      const size_t at = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 4) {
        case 0:
          if (!s.empty()) s[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          s.insert(at, words[rng() % words.size()]);
          break;
        case 2:
          if (!s.empty()) s.erase(at, 1 + rng() % 8);
          break;
        default:
          s += words[rng() % words.size()];
          break;
      }
    }
    Feed(s);
  }
}

}  // namespace
}  // namespace ukai::sim
