// Replays fuzz/gateway_packet_fuzz.cc under gcc (and ASan/UBSan in CI): every file of the
// committed corpus fuzz/corpus/gateway_packet/ (valid_* must decode, bad_* must not), every
// truncation of each, and a few thousand seeded mutations. The target aborts on a broken
// invariant (no crash, canonical re-encoding), so returning is the check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_mutate.h"
#include "wire/gateway_packet.h"

extern "C" int gateway_packet_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::wire {
namespace {

struct Seed {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::vector<Seed> Corpus() {
  std::vector<Seed> out;
  const std::filesystem::path dir =
      std::filesystem::path(UKAI_SOURCE_DIR) / "fuzz" / "corpus" / "gateway_packet";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    out.push_back({e.path().filename().string(),
                   {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}});
  }
  return out;
}

void Feed(const std::vector<uint8_t>& in) {
  gateway_packet_fuzz_TestOneInput(in.data(), in.size());
}

TEST(GatewayFuzzReplay, CorpusDecodesAsNamedAndEveryTruncation) {
  const std::vector<Seed> corpus = Corpus();
  ASSERT_GE(corpus.size(), 10u);
  for (const Seed& s : corpus) {
    const bool valid = s.name.rfind("valid_", 0) == 0;
    Result<GatewayPacket> p = DecodePacket(s.bytes);
    EXPECT_EQ(p.ok(), valid) << s.name << ": " << (p.ok() ? "decoded" : p.status().ToString());
    for (size_t n = 0; n <= s.bytes.size(); ++n) Feed({s.bytes.begin(), s.bytes.begin() + n});
  }
}

TEST(GatewayFuzzReplay, SeededMutations) {
  std::mt19937_64 rng(20261124);
  const std::vector<Seed> corpus = Corpus();
  ASSERT_FALSE(corpus.empty());
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> in = corpus[rng() % corpus.size()].bytes;
    testing::MutateBytes(rng, &in);
    Feed(in);
  }
}

}  // namespace
}  // namespace ukai::wire
