#include "sim/traffic/injection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace ukai::sim {
namespace {

class BernoulliInjection final : public InjectionProcess {
 public:
  BernoulliInjection(double rate, double flits)
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
  IntervalInjection(int64_t interval, double flits) : interval_(interval), flits_(flits) {}
  int64_t First(Rng& rng) const override {
    return static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(interval_)));
  }
  int64_t Next(int64_t last, Rng&) const override { return last + interval_; }
  double OfferedFlitsPerCycle() const override { return flits_ / static_cast<double>(interval_); }

 private:
  int64_t interval_;
  double flits_;
};

// BookSim2's on/off process (injection.h). A cycle's draws, as BookSim2 makes them: the
// state advances first, then an on node creates a message with probability r1.
class OnOffInjection final : public InjectionProcess {
 public:
  OnOffInjection(double rate, double alpha, double beta, double r1)
      : rate_(rate), alpha_(alpha), beta_(beta), r1_(r1), on_event_(beta + (1 - beta) * r1) {}
  int64_t First(Rng& rng) const override { return From(rng.Bernoulli(0.5), 0, rng); }
  int64_t Next(int64_t last, Rng& rng) const override { return From(true, last + 1, rng); }
  double OfferedFlitsPerCycle() const override { return rate_; }

 private:
  static constexpr int64_t kNever = int64_t{1} << 62;
  // The first creation cycle >= t of a node that is `on` before cycle t's draws.
  int64_t From(bool on, int64_t t, Rng& rng) const {
    while (t < kNever) {
      if (on) {  // every cycle: off with beta, else a message with r1
        if (on_event_ <= 0) return kNever;
        const int64_t c = t + rng.Geometric(on_event_) - 1;
        if (rng.NextDouble() * on_event_ >= beta_) return c;  // the event was a message
        on = false;
        t = c + 1;
      } else {  // every cycle: on with alpha, then a message with r1 in that cycle
        if (alpha_ <= 0) return kNever;
        const int64_t c = t + rng.Geometric(alpha_) - 1;
        if (rng.Bernoulli(r1_)) return c;
        on = true;
        t = c + 1;
      }
    }
    return kNever;
  }

  double rate_, alpha_, beta_, r1_;
  double on_event_;  // an on node's chance per cycle of turning off or creating a message
};

// BookSim2's rule for the on/off parameters: exactly one of alpha, beta, r1 is < 0 and
// follows from the others and the message rate p.
Result<std::unique_ptr<InjectionProcess>> MakeOnOff(const TrafficConfig& c, double p) {
  double a = c.burst_alpha, b = c.burst_beta, r1 = c.burst_r1;
  const int derived = (a < 0) + (b < 0) + (r1 < 0);
  if (derived != 1) {
    return Status::InvalidArgument(
               "traffic.burst_r1: on_off injection derives exactly one of traffic.burst_alpha, "
               "burst_beta, burst_r1 (the one < 0) from the others and the rate; " +
               std::to_string(derived) + " are < 0")
        .WithKey("traffic.burst_r1");
  }
  if (r1 < 0) {
    if (a <= 0) {
      return Status::InvalidArgument("traffic.burst_alpha: must be > 0 to derive burst_r1")
          .WithKey("traffic.burst_alpha");
    }
    r1 = p * (a + b) / a;
  } else if (a < 0) {
    if (!(r1 > p)) {
      return Status::InvalidArgument("traffic.burst_r1: must exceed the message rate " +
                                     fmt::format("{:g}", p) + " to derive burst_alpha")
          .WithKey("traffic.burst_r1");
    }
    a = b * p / (r1 - p);
  } else {
    b = a * (r1 - p) / p;
  }
  // Each draw of Next() walks the node's on and off periods until a message: about 2 beta /
  // r1 of them, so r1 is bounded below (a rate that needs less is bernoulli's to model).
  constexpr double kLeastR1 = 1e-6;
  if (r1 < kLeastR1) {
    return Status::InvalidArgument(
               "traffic.rate: on_off injection at " + fmt::format("{:g}", p) +
               " messages/node/cycle gives burst_r1 = " + fmt::format("{:g}", r1) +
               ", below 1e-6 (each message would take millions of on/off periods to draw): "
               "raise the rate or burst_r1, or use bernoulli injection")
        .WithKey("traffic.rate");
  }
  if (!(r1 <= 1.0) || !(a > 0 && a <= 1.0) || !(b >= 0 && b <= 1.0)) {
    return Status::InvalidArgument(
               "traffic.rate: on_off injection at " + fmt::format("{:g}", p) +
               " messages/node/cycle needs alpha in (0, 1], beta and r1 in [0, 1] (got alpha " +
               fmt::format("{:g}", a) + ", beta " + fmt::format("{:g}", b) + ", r1 " +
               fmt::format("{:g}", r1) + "): lower the rate or change traffic.burst_*")
        .WithKey("traffic.rate");
  }
  return std::unique_ptr<InjectionProcess>(std::make_unique<OnOffInjection>(c.rate, a, b, r1));
}

}  // namespace

Result<std::unique_ptr<InjectionProcess>> MakeInjection(const TrafficConfig& config,
                                                        double message_flits) {
  if (UsesRate(config.injection)) {
    if (!(config.rate > 0.0 && config.rate <= 1.0)) {
      return Status::InvalidArgument("traffic.rate: must be in (0, 1] flits/node/cycle (got " +
                                     std::to_string(config.rate) + ")")
          .WithKey("traffic.rate");
    }
    if (config.injection == InjectionKind::kOnOff) {
      return MakeOnOff(config, config.rate / message_flits);
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

SizeMix::SizeMix(const TrafficConfig& config) : flits_(config.size_mix_flits) {
  if (flits_.empty()) return;
  double total = 0, weighted = 0;
  for (size_t i = 0; i < flits_.size(); ++i) {
    const double w = config.size_mix_weights.empty() ? 1.0 : config.size_mix_weights[i];
    total += w;
    weighted += w * flits_[i];
    cumulative_.push_back(total);
    largest_ = std::max(largest_, flits_[i]);
  }
  for (double& c : cumulative_) c /= total;
  cumulative_.back() = 1.0;
  mean_ = weighted / total;
}

int SizeMix::Draw(Rng& rng) const {
  const double u = rng.NextDouble();
  size_t i = 0;
  while (i + 1 < cumulative_.size() && u >= cumulative_[i]) ++i;
  return flits_[i];
}

Status CheckSizeMix(const TrafficConfig& config) {
  for (int f : config.size_mix_flits) {
    if (f < 1 || f > 32767) {
      return Status::InvalidArgument("traffic.size_mix_flits: sizes are in [1, 32767] flits (got " +
                                     std::to_string(f) + ")")
          .WithKey("traffic.size_mix_flits");
    }
  }
  const auto& w = config.size_mix_weights;
  if (!w.empty() && w.size() != config.size_mix_flits.size()) {
    return Status::InvalidArgument(
               "traffic.size_mix_weights: one weight per size of "
               "traffic.size_mix_flits (" +
               std::to_string(w.size()) + " weights, " +
               std::to_string(config.size_mix_flits.size()) + " sizes)")
        .WithKey("traffic.size_mix_weights");
  }
  for (double x : w) {
    if (!(x > 0) || !std::isfinite(x)) {
      return Status::InvalidArgument("traffic.size_mix_weights: weights are > 0 (got " +
                                     std::to_string(x) + ")")
          .WithKey("traffic.size_mix_weights");
    }
  }
  return Status::Ok();
}

double MeanMessageFlits(const TrafficConfig& config, int flit_bytes) {
  if (!config.size_mix_flits.empty()) return SizeMix(config).mean();
  return static_cast<double>((int64_t{config.message_bytes} + flit_bytes - 1) / flit_bytes);
}

}  // namespace ukai::sim
