// The 8b/10b codec against code groups this test builds from the published 5b/6b and 3b/4b
// sub-block tables (written out here as strings, independently of the codec's own tables).
#include "wire/code_8b10b.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace ukai::wire {
namespace {

// 5b/6b: abcdei for RD- and RD+ (equal when balanced), x = 0..31, then K.28.
const char* const k6b[32][2] = {
    {"100111", "011000"}, {"011101", "100010"}, {"101101", "010010"}, {"110001", "110001"},
    {"110101", "001010"}, {"101001", "101001"}, {"011001", "011001"}, {"111000", "000111"},
    {"111001", "000110"}, {"100101", "100101"}, {"010101", "010101"}, {"110100", "110100"},
    {"001101", "001101"}, {"101100", "101100"}, {"011100", "011100"}, {"010111", "101000"},
    {"011011", "100100"}, {"100011", "100011"}, {"010011", "010011"}, {"110010", "110010"},
    {"001011", "001011"}, {"101010", "101010"}, {"011010", "011010"}, {"111010", "000101"},
    {"110011", "001100"}, {"100110", "100110"}, {"010110", "010110"}, {"110110", "001001"},
    {"001110", "001110"}, {"101110", "010001"}, {"011110", "100001"}, {"101011", "010100"}};
const char* const k6bK28[2] = {"001111", "110000"};
// 3b/4b: fghj for RD- and RD+; data y = 0..7 (P7), A7; control y = 0..7.
const char* const k4bD[8][2] = {{"1011", "0100"}, {"1001", "1001"}, {"0101", "0101"},
                                {"1100", "0011"}, {"1101", "0010"}, {"1010", "1010"},
                                {"0110", "0110"}, {"1110", "0001"}};
const char* const k4bA7[2] = {"0111", "1000"};
const char* const k4bK[8][2] = {{"1011", "0100"}, {"0110", "1001"}, {"1010", "0101"},
                                {"1100", "0011"}, {"1101", "0010"}, {"0101", "1010"},
                                {"1001", "0110"}, {"0111", "1000"}};

int Disp(const std::string& s) {
  int d = 0;
  for (char c : s) d += c == '1' ? 1 : -1;
  return d;
}

// The disparity after a sub-block: its sign if unbalanced, else unchanged.
bool PlusAfter(const std::string& block, bool plus) {
  const int d = Disp(block);
  return d > 0 ? true : d < 0 ? false : plus;
}

// The reference encoder: sub-block strings + the standard selection rules.
std::string Reference(int value, bool control, bool* plus) {
  const int x = value & 31, y = value >> 5;
  const std::string six = (control && x == 28) ? k6bK28[*plus] : k6b[x][*plus];
  const bool mid = PlusAfter(six, *plus);
  std::string four;
  if (control) {
    four = k4bK[y][mid];
  } else if (y == 7 && ((!mid && (x == 17 || x == 18 || x == 20)) ||
                        (mid && (x == 11 || x == 13 || x == 14)))) {
    four = k4bA7[mid];
  } else {
    four = k4bD[y][mid];
  }
  *plus = PlusAfter(four, mid);
  return six + four;
}

struct Group {
  int value;
  bool control;
};

std::vector<Group> AllGroups() {
  std::vector<Group> all;
  for (int v = 0; v < 256; ++v) all.push_back({v, false});
  for (uint8_t k : kControlValues) all.push_back({k, true});
  return all;
}

Disparity D(bool plus) { return plus ? Disparity::kPlus : Disparity::kMinus; }

int LongestRun(const std::string& s) {
  int best = 0, run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    run = (i > 0 && s[i] == s[i - 1]) ? run + 1 : 1;
    best = std::max(best, run);
  }
  return best;
}

TEST(Code8b10b, EveryGroupMatchesTheSubBlockTables) {
  ASSERT_EQ(AllGroups().size(), 268u);
  for (const Group& g : AllGroups()) {
    for (bool plus : {false, true}) {
      bool ref_plus = plus;
      const std::string want = Reference(g.value, g.control, &ref_plus);
      Result<CodeGroup> got = Encode8b10b(static_cast<uint8_t>(g.value), g.control, D(plus));
      ASSERT_TRUE(got.ok());
      const std::string name = CodeGroupName(static_cast<uint8_t>(g.value), g.control);
      EXPECT_EQ(CodeGroupBitString(got->bits), want) << name << " rd " << plus;
      EXPECT_EQ(got->rd_after, D(ref_plus)) << name;
      // Disparity of the group is 0 or +-2, and the sign is the one the RD asks for.
      const int d = Disp(want);
      EXPECT_TRUE(d == 0 || d == (plus ? -2 : 2)) << name << " " << want;
      EXPECT_EQ(BitDisparity(got->bits, 10), d);
      EXPECT_LE(LongestRun(want), g.control ? 5 : 4) << name << " " << want;
    }
  }
}

TEST(Code8b10b, WellKnownGroups) {
  EXPECT_EQ(CodeGroupBitString(Encode8b10b(kK28_5, true, Disparity::kMinus)->bits), "0011111010");
  EXPECT_EQ(CodeGroupBitString(Encode8b10b(kK28_5, true, Disparity::kPlus)->bits), "1100000101");
  EXPECT_EQ(CodeGroupBitString(Encode8b10b(0xB5, false, Disparity::kMinus)->bits), "1010101010");
  EXPECT_EQ(CodeGroupBitString(Encode8b10b(0x00, false, Disparity::kMinus)->bits), "1001110100");
  EXPECT_EQ(CodeGroupBitString(Encode8b10b(0xF1, false, Disparity::kMinus)->bits), "1000110111");
  EXPECT_EQ(CodeGroupName(kK28_5, true), "K.28.5");
  EXPECT_EQ(CodeGroupName(0xF1, false), "D.17.7");
  EXPECT_FALSE(Encode8b10b(0x00, true, Disparity::kMinus).ok());  // K.0.0 does not exist
}

TEST(Code8b10b, RunLengthAtMostFiveAcrossEveryPairOfGroups) {
  const std::vector<Group> all = AllGroups();
  for (bool plus : {false, true}) {
    for (const Group& a : all) {
      bool rd = plus;
      const std::string first = Reference(a.value, a.control, &rd);
      for (const Group& b : all) {
        bool rd2 = rd;
        const std::string pair = first + Reference(b.value, b.control, &rd2);
        ASSERT_LE(LongestRun(pair), 5) << pair;
      }
    }
  }
}

TEST(Code8b10b, DecodeRoundTripsAndGroupsAreUnique) {
  std::map<std::pair<int, uint16_t>, int> seen;
  for (const Group& g : AllGroups()) {
    for (bool plus : {false, true}) {
      const CodeGroup c = *Encode8b10b(static_cast<uint8_t>(g.value), g.control, D(plus));
      const Decoded d = Decode8b10b(c.bits, D(plus));
      EXPECT_EQ(d.error, CodeError::kNone);
      EXPECT_EQ(d.value, g.value);
      EXPECT_EQ(d.control, g.control);
      EXPECT_EQ(d.rd_after, c.rd_after);
      const int key = g.value + (g.control ? 256 : 0);
      auto [it, fresh] = seen.emplace(std::make_pair(int{plus}, c.bits), key);
      EXPECT_TRUE(fresh || it->second == key) << "group used twice: " << c.bits;
    }
  }
}

TEST(Code8b10b, InvalidGroupsAndDisparityErrorsAreDetected) {
  int valid[2] = {0, 0}, disparity[2] = {0, 0}, invalid[2] = {0, 0};
  for (int bits = 0; bits < 1024; ++bits) {
    for (bool plus : {false, true}) {
      const Decoded d = Decode8b10b(static_cast<uint16_t>(bits), D(plus));
      (d.error == CodeError::kNone        ? valid
       : d.error == CodeError::kDisparity ? disparity
                                          : invalid)[plus]++;
    }
  }
  // Both columns: 268 groups each; the unbalanced ones of the other column are disparity errors.
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(valid[c] + disparity[c] + invalid[c], 1024);
    EXPECT_GE(valid[c], 268);
    EXPECT_GT(disparity[c], 100);
  }
  // K.28.5 RD+ form received at RD-: disparity error, decoded value still reported.
  const Decoded e = Decode8b10b(0b1100000101, Disparity::kMinus);
  EXPECT_EQ(e.error, CodeError::kDisparity);
  EXPECT_EQ(e.value, kK28_5);
  EXPECT_TRUE(e.control);
  EXPECT_EQ(Decode8b10b(0b0000000000, Disparity::kMinus).error, CodeError::kInvalidCode);
  EXPECT_EQ(Decode8b10b(0b1111100000, Disparity::kPlus).error, CodeError::kInvalidCode);
  EXPECT_EQ(Decode8b10b(1024, Disparity::kPlus).error, CodeError::kInvalidCode);
  // A flipped bit in a stream is caught (as an invalid group or a disparity error) within the
  // flipped group or the next ones.
  std::mt19937 rng(11);
  int caught = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint16_t> groups;
    Disparity rd = Disparity::kMinus;
    for (int i = 0; i < 16; ++i) {
      const CodeGroup c = *Encode8b10b(static_cast<uint8_t>(rng()), false, rd);
      groups.push_back(c.bits);
      rd = c.rd_after;
    }
    groups[3] ^= static_cast<uint16_t>(1u << (rng() % 10));
    rd = Disparity::kMinus;
    bool error = false;
    for (uint16_t g : groups) {
      const Decoded d = Decode8b10b(g, rd);
      error = error || d.error != CodeError::kNone;
      rd = d.rd_after;
    }
    caught += error;
  }
  EXPECT_GT(caught, 150);  // single-bit errors leave the disparity off by 2 or the group invalid
}

std::vector<uint8_t> Bits(const std::vector<uint16_t>& groups) {
  std::vector<uint8_t> s;
  for (uint16_t g : groups) {
    for (char c : CodeGroupBitString(g)) s.push_back(c == '1');
  }
  return s;
}

TEST(Code8b10b, CommaOnlyInK28_1_5_7AndFoundInAStream) {
  for (const Group& g : AllGroups()) {
    for (bool plus : {false, true}) {
      const CodeGroup c = *Encode8b10b(static_cast<uint8_t>(g.value), g.control, D(plus));
      const bool want = g.control && (g.value == 0x3C || g.value == 0xBC || g.value == 0xFC);
      EXPECT_EQ(HasComma(c.bits), want) << CodeGroupName(static_cast<uint8_t>(g.value), g.control);
    }
  }
  // No comma anywhere in any pair of data groups, so the comma marks group boundaries.
  for (bool plus : {false, true}) {
    for (int a = 0; a < 256; ++a) {
      const CodeGroup ca = *Encode8b10b(static_cast<uint8_t>(a), false, D(plus));
      for (int b = 0; b < 256; ++b) {
        const CodeGroup cb = *Encode8b10b(static_cast<uint8_t>(b), false, ca.rd_after);
        ASSERT_EQ(FindComma(Bits({ca.bits, cb.bits})), -1) << a << " " << b;
      }
    }
  }
  Disparity rd = Disparity::kMinus;
  std::vector<uint8_t> bytes = {0x12, 0x34, 0xBC, 0x56};
  std::vector<uint16_t> groups;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const CodeGroup c = *Encode8b10b(bytes[i], i == 2, rd);
    groups.push_back(c.bits);
    rd = c.rd_after;
  }
  std::vector<uint8_t> stream = {1, 0, 1};  // misaligned by three bits
  for (uint8_t b : Bits(groups)) stream.push_back(b);
  EXPECT_EQ(FindComma(stream), 3 + 20);
}

TEST(Code8b10b, ParallelWordEncodersEqualByteByByte) {
  // Every 16-bit word from both disparities, and random 32-bit words.
  auto sequential = [](const std::vector<uint8_t>& bytes, Disparity* rd) {
    std::vector<uint16_t> out;
    for (uint8_t b : bytes) {
      const CodeGroup c = *Encode8b10b(b, false, *rd);
      out.push_back(c.bits);
      *rd = c.rd_after;
    }
    return out;
  };
  for (bool plus : {false, true}) {
    for (int w = 0; w < 65536; ++w) {
      const std::vector<uint8_t> bytes = {static_cast<uint8_t>(w), static_cast<uint8_t>(w >> 8)};
      Disparity a = D(plus), b = D(plus);
      ASSERT_EQ(EncodeDataWordParallel(bytes, &a), sequential(bytes, &b)) << w;
      ASSERT_EQ(a, b);
    }
  }
  std::mt19937 rng(3);
  Disparity a = Disparity::kMinus, b = Disparity::kMinus;
  for (int i = 0; i < 10000; ++i) {
    const uint32_t w = static_cast<uint32_t>(rng());
    const std::vector<uint8_t> bytes = {static_cast<uint8_t>(w), static_cast<uint8_t>(w >> 8),
                                        static_cast<uint8_t>(w >> 16),
                                        static_cast<uint8_t>(w >> 24)};
    ASSERT_EQ(EncodeDataWordParallel(bytes, &a), sequential(bytes, &b));
    ASSERT_EQ(a, b);
  }
}

}  // namespace
}  // namespace ukai::wire
