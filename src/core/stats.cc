#include "core/stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ukai {

void Summary::Add(double x) {
  if (count_ == 0) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  ++count_;
  sum_ += x;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
}

void Summary::Merge(const Summary& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  const double n1 = static_cast<double>(count_);
  const double n2 = static_cast<double>(other.count_);
  const double delta = other.mean_ - mean_;
  const double n = n1 + n2;
  mean_ += delta * n2 / n;
  m2_ += other.m2_ + delta * delta * n1 * n2 / n;
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double Summary::variance() const {
  return count_ > 1 ? m2_ / static_cast<double>(count_ - 1) : 0.0;
}

namespace {
constexpr int kSubBits = 6;  // 64 sub-bins per power of two above the exact range
constexpr int kExactBits = 16;
}  // namespace

int IntHistogram::BinOf(int64_t value) {
  if (value < kExactLimit) return static_cast<int>(value);
  const int msb = 63 - std::countl_zero(static_cast<uint64_t>(value));  // >= 16
  const int sub = static_cast<int>((value >> (msb - kSubBits)) & ((1 << kSubBits) - 1));
  return static_cast<int>(kExactLimit) + (msb - kExactBits) * (1 << kSubBits) + sub;
}

int64_t IntHistogram::LowerEdge(int bin) {
  if (bin < kExactLimit) return bin;
  const int rel = bin - static_cast<int>(kExactLimit);
  const int msb = kExactBits + rel / (1 << kSubBits);
  const int sub = rel % (1 << kSubBits);
  return (int64_t{1} << msb) + (static_cast<int64_t>(sub) << (msb - kSubBits));
}

void IntHistogram::Add(int64_t value, int64_t count) {
  if (count <= 0) return;
  value = std::max<int64_t>(value, 0);
  const int bin = BinOf(value);
  if (bin >= static_cast<int>(bins_.size())) {
    bins_.resize(std::max<size_t>(bin + 1, bins_.size() * 2), 0);
  }
  bins_[bin] += count;
  count_ += count;
  max_ = std::max(max_, value);
  sum_ += static_cast<long double>(value) * count;
}

void IntHistogram::Merge(const IntHistogram& other) {
  if (other.bins_.size() > bins_.size()) bins_.resize(other.bins_.size(), 0);
  for (size_t i = 0; i < other.bins_.size(); ++i) bins_[i] += other.bins_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void IntHistogram::Clear() { *this = IntHistogram(); }

int64_t IntHistogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  int64_t rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<int64_t>(rank, 1, count_);
  int64_t seen = 0;
  for (size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen >= rank) return std::min(LowerEdge(static_cast<int>(i)), max_);
  }
  return max_;
}

std::vector<std::pair<int64_t, int64_t>> IntHistogram::Bins() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < bins_.size(); ++i) {
    if (bins_[i] != 0) out.emplace_back(LowerEdge(static_cast<int>(i)), bins_[i]);
  }
  return out;
}

}  // namespace ukai
