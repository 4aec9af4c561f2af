#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ukai {
namespace {

TEST(RngTest, SameSeedSameSequenceDifferentStreamsDiffer) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextU64();
    EXPECT_EQ(x, b.NextU64());
    EXPECT_NE(x, c.NextU64());
  }
  Rng s0 = Rng::Stream(1, 0), s0b = Rng::Stream(1, 0), s1 = Rng::Stream(1, 1);
  EXPECT_EQ(s0.NextU64(), s0b.NextU64());
  EXPECT_NE(Rng::Stream(1, 0).NextU64(), s1.NextU64());
}

TEST(RngTest, UniformIsInRangeAndUnbiased) {
  Rng r(7);
  int counts[7] = {};
  for (int i = 0; i < 70000; ++i) {
    const uint64_t v = r.Uniform(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
  EXPECT_EQ(r.Uniform(1), 0u);
}

TEST(RngTest, DoubleAndGeometric) {
  Rng r(9);
  double sum = 0, gsum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double d = r.NextDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    sum += d;
    const int64_t g = r.Geometric(0.25);
    ASSERT_GE(g, 1);
    gsum += static_cast<double>(g);
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
  EXPECT_NEAR(gsum / 100000, 4.0, 0.05);  // mean 1/p
  EXPECT_EQ(r.Geometric(1.0), 1);
}

}  // namespace
}  // namespace ukai
