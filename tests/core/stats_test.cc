#include "core/stats.h"

#include <gtest/gtest.h>

namespace ukai {
namespace {

TEST(StatsTest, SummaryMeanVarianceMinMaxMerge) {
  Summary a, b;
  for (double x : {1.0, 2.0, 3.0}) a.Add(x);
  for (double x : {4.0, 5.0}) b.Add(x);
  EXPECT_DOUBLE_EQ(a.mean(), 2.0);
  EXPECT_DOUBLE_EQ(a.variance(), 1.0);
  a.Merge(b);
  EXPECT_EQ(a.count(), 5);
  EXPECT_DOUBLE_EQ(a.mean(), 3.0);
  EXPECT_DOUBLE_EQ(a.variance(), 2.5);
  EXPECT_DOUBLE_EQ(a.min(), 1.0);
  EXPECT_DOUBLE_EQ(a.max(), 5.0);
}

TEST(StatsTest, HistogramPercentilesExactInRange) {
  IntHistogram h;
  for (int v = 1; v <= 100; ++v) h.Add(v);
  EXPECT_EQ(h.count(), 100);
  EXPECT_EQ(h.Percentile(0.5), 50);
  EXPECT_EQ(h.Percentile(0.99), 99);
  EXPECT_EQ(h.Percentile(1.0), 100);
  EXPECT_EQ(h.Percentile(0.0), 1);
  EXPECT_DOUBLE_EQ(h.Mean(), 50.5);
  EXPECT_EQ(h.Max(), 100);
  IntHistogram g;
  g.Add(7, 3);
  h.Merge(g);
  EXPECT_EQ(h.count(), 103);
  EXPECT_EQ(h.Bins().front(), (std::pair<int64_t, int64_t>(1, 1)));
}

TEST(StatsTest, HistogramLargeValuesWithinRelativeError) {
  IntHistogram h;
  h.Add(1000000);
  h.Add(5);
  const int64_t p = h.Percentile(1.0);
  EXPECT_LE(p, 1000000);
  EXPECT_GE(p, 1000000 - 1000000 / 64);
  EXPECT_EQ(h.Max(), 1000000);
  EXPECT_DOUBLE_EQ(h.Mean(), 500002.5);
}

}  // namespace
}  // namespace ukai
