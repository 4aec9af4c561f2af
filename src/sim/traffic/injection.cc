#include "sim/traffic/injection.h"

#include <cmath>
#include <string>

namespace ukai::sim {
namespace {

class BernoulliInjection final : public InjectionProcess {
 public:
  BernoulliInjection(double rate, int flits)
      : rate_(rate), p_(rate / flits), log1m_p_(p_ >= 1.0 ? 0.0 : std::log1p(-p_)) {}
  int64_t First(Rng& rng) const override { return rng.Geometric(p_, log1m_p_) - 1; }
  int64_t Next(int64_t last, Rng& rng) const override { return last + rng.Geometric(p_, log1m_p_); }
  double OfferedFlitsPerCycle() const override { return rate_; }

 private:
  double rate_;
  double p_;
  double log1m_p_;  // std::log1p(-p_), for Rng::Geometric()
};

class IntervalInjection final : public InjectionProcess {
 public:
  IntervalInjection(int64_t interval, int flits) : interval_(interval), flits_(flits) {}
  int64_t First(Rng& rng) const override {
    return static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(interval_)));
  }
  int64_t Next(int64_t last, Rng&) const override { return last + interval_; }
  double OfferedFlitsPerCycle() const override {
    return static_cast<double>(flits_) / static_cast<double>(interval_);
  }

 private:
  int64_t interval_;
  int flits_;
};

}  // namespace

Result<std::unique_ptr<InjectionProcess>> MakeInjection(const TrafficConfig& config,
                                                        int message_flits) {
  if (config.injection == InjectionKind::kBernoulli) {
    if (!(config.rate > 0.0 && config.rate <= 1.0)) {
      return Status::InvalidArgument("traffic.rate: must be in (0, 1] flits/node/cycle (got " +
                                     std::to_string(config.rate) + ")")
          .WithKey("traffic.rate");
    }
    return std::unique_ptr<InjectionProcess>(
        std::make_unique<BernoulliInjection>(config.rate, message_flits));
  }
  if (config.interval < 1) {
    return Status::InvalidArgument("traffic.interval: must be >= 1 cycle (got " +
                                   std::to_string(config.interval) + ")")
        .WithKey("traffic.interval");
  }
  return std::unique_ptr<InjectionProcess>(
      std::make_unique<IntervalInjection>(config.interval, message_flits));
}

}  // namespace ukai::sim
