// Crc32()'s fast paths (wire/crc32.h: carry-less multiply folding where the CPU has it,
// slicing-by-8 tables otherwise) against the bitwise definition of the 802.3 CRC-32, on
// random data of every length up to 1100 bytes and some longer ones, at every alignment
// of the first byte, from random starting values.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "wire/crc32.h"

namespace ukai::wire {
namespace {

// One bit at a time, straight from the definition (reflected polynomial 0xEDB88320).
uint32_t BitwiseCrc32(std::span<const uint8_t> data, uint32_t crc) {
  uint32_t c = ~crc;
  for (uint8_t byte : data) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
  }
  return ~c;
}

TEST(Crc32FastPathTest, EqualsTheBitwiseDefinition) {
  std::mt19937_64 rng(13);
  std::vector<uint8_t> buf(20000 + 16);
  for (uint8_t& b : buf) b = static_cast<uint8_t>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 1100; ++n) lengths.push_back(n);
  for (size_t n : {1514, 1518, 4096, 9018, 9022, 20000}) lengths.push_back(n);
  int checked = 0;
  for (size_t n : lengths) {
    const size_t offset = rng() % 16;  // unaligned starts too
    const uint32_t start = n % 3 == 0 ? 0u : static_cast<uint32_t>(rng());
    const std::span<const uint8_t> data(buf.data() + offset, n);
    const uint32_t want = BitwiseCrc32(data, start);
    ASSERT_EQ(Crc32(data, start), want) << "length " << n << " offset " << offset;
    ASSERT_EQ(Crc32Tables(data, start), want) << "length " << n << " offset " << offset;
    ++checked;
  }
  EXPECT_EQ(checked, 1107);
}

TEST(Crc32FastPathTest, AllOnesAndAllZerosBlocks) {
  // Patterns that random data rarely produces: long runs of equal bytes.
  for (uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x80}, uint8_t{0x01}}) {
    for (size_t n : {64, 80, 127, 128, 129, 1500}) {
      const std::vector<uint8_t> data(n, fill);
      for (uint32_t start : {0u, 0xFFFFFFFFu, 0x80000001u}) {
        EXPECT_EQ(Crc32(data, start), BitwiseCrc32(data, start))
            << "fill " << int{fill} << " length " << n << " start " << start;
      }
    }
  }
}

TEST(Crc32FastPathTest, TheFoldingPathIsTakenOnThisMachine) {
  // The x86-64 machines of this project have PCLMULQDQ; elsewhere only the tables run
  // (and the tests above then check them alone).
#if defined(__x86_64__)
  EXPECT_TRUE(Crc32UsesClmul());
#else
  GTEST_SKIP() << "not x86-64: the table path only";
#endif
}

}  // namespace
}  // namespace ukai::wire
