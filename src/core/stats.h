// Statistics for simulation outputs: a running summary (count, mean, variance, min, max)
// and a histogram of non-negative integer samples (latencies in cycles) that gives
// percentiles.
//
// IntHistogram keeps one exact bin per value below kExactLimit (65,536) and, above it,
// logarithmic bins with 64 sub-bins per power of two (relative error of a reported
// percentile < 1/64 there). Memory grows with the largest value seen, at most a few
// hundred KiB.
//
// Thread safety: plain values; use one object per thread and Merge() them.
#ifndef UKAI_CORE_STATS_H_
#define UKAI_CORE_STATS_H_

#include <cstdint>
#include <vector>

namespace ukai {

class Summary {
 public:
  void Add(double x);
  void Merge(const Summary& other);
  void Clear() { *this = Summary(); }

  int64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  // Sample variance (n - 1 in the denominator); 0 with fewer than two samples.
  double variance() const;
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }

 private:
  int64_t count_ = 0;
  double sum_ = 0;
  double mean_ = 0;  // Welford running mean and M2, for a stable variance
  double m2_ = 0;
  double min_ = 0;
  double max_ = 0;
};

class IntHistogram {
 public:
  static constexpr int64_t kExactLimit = 65536;

  // Adds `count` samples of `value` (negative values are clamped to 0).
  void Add(int64_t value, int64_t count = 1);
  void Merge(const IntHistogram& other);
  void Clear();

  int64_t count() const { return count_; }
  // The smallest sample value v such that at least q*count samples are <= v, for q in
  // [0, 1] (q = 0.5: median, 0.99: p99, 1: max). Exact below kExactLimit; above, the lower
  // edge of the logarithmic bin. 0 when empty.
  int64_t Percentile(double q) const;
  double Mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
  int64_t Max() const { return max_; }

  // Bins as (lower edge, count) pairs in increasing order, empty bins left out.
  std::vector<std::pair<int64_t, int64_t>> Bins() const;

 private:
  static int BinOf(int64_t value);
  static int64_t LowerEdge(int bin);

  std::vector<int64_t> bins_;
  int64_t count_ = 0;
  int64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace ukai

#endif  // UKAI_CORE_STATS_H_
