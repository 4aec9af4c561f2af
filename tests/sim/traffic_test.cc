// Traffic patterns and injection processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "sim/topology/kary_ncube.h"
#include "sim/traffic/injection.h"
#include "sim/traffic/pattern.h"

namespace ukai::sim {
namespace {

std::unique_ptr<KaryNCube> Cube(TopologyKind kind, std::vector<int> k) {
  NetworkConfig c;
  c.topology = kind;
  c.n = static_cast<int>(k.size());
  c.k = std::move(k);
  auto made = KaryNCube::Create(c);
  return std::move(made).value();
}

std::unique_ptr<TrafficPattern> Pattern(const Topology& t, const char* name) {
  TrafficConfig c;
  c.pattern = name;
  auto p = MakePattern(t, c);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : nullptr;
}

TEST(TrafficTest, UniformNeverSelfAndAverageDistance) {
  auto t = Cube(TopologyKind::kTorus, {10, 10});
  auto p = Pattern(*t, "uniform");
  Rng rng(1);
  double hops = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const int s = static_cast<int>(rng.Uniform(100));
    const int d = p->Destination(s, rng);
    ASSERT_NE(d, s);
    ASSERT_GE(d, 0);
    hops += t->Distance(s, d);
  }
  // Exact mean over all ordered pairs without self: 500 / 99 = 5.0505.
  EXPECT_NEAR(hops / n, 500.0 / 99.0, 0.02);
}

TEST(TrafficTest, TransposeReversesCoordinatesDiagonalIdle) {
  auto t = Cube(TopologyKind::kTorus, {4, 4});
  auto p = Pattern(*t, "transpose");
  Rng rng(1);
  EXPECT_EQ(p->Destination(t->NodeAt({1, 2}), rng), t->NodeAt({2, 1}));
  EXPECT_TRUE(p->Idle(t->NodeAt({3, 3})));
  EXPECT_EQ(p->Destination(t->NodeAt({3, 3}), rng), -1);
  auto t3 = Cube(TopologyKind::kMesh, {3, 3, 3});
  auto p3 = Pattern(*t3, "transpose");
  EXPECT_EQ(p3->Destination(t3->NodeAt({0, 1, 2}), rng), t3->NodeAt({2, 1, 0}));
}

TEST(TrafficTest, BitPatterns) {
  auto t = Cube(TopologyKind::kTorus, {4, 4});  // 16 nodes, 4 bits
  Rng rng(1);
  EXPECT_EQ(Pattern(*t, "bitcomp")->Destination(0b0011, rng), 0b1100);
  EXPECT_EQ(Pattern(*t, "bitrev")->Destination(0b0001, rng), 0b1000);
  EXPECT_TRUE(Pattern(*t, "bitrev")->Idle(0b1001));
  EXPECT_EQ(Pattern(*t, "shuffle")->Destination(0b1010, rng), 0b0101);
  EXPECT_TRUE(Pattern(*t, "shuffle")->Idle(0));
}

TEST(TrafficTest, ShiftPatterns) {
  auto t = Cube(TopologyKind::kTorus, {8, 5});
  Rng rng(1);
  EXPECT_EQ(Pattern(*t, "tornado")->Destination(t->NodeAt({1, 1}), rng), t->NodeAt({4, 3}));
  EXPECT_EQ(Pattern(*t, "neighbor")->Destination(t->NodeAt({7, 4}), rng), t->NodeAt({0, 0}));
}

TEST(TrafficTest, HotspotSendsTheConfiguredShare) {
  auto t = Cube(TopologyKind::kMesh, {4, 4});
  TrafficConfig c;
  c.pattern = "hotspot";
  c.hotspot_nodes = {5};
  c.hotspot_fraction = 0.5;
  auto p = MakePattern(*t, c);
  ASSERT_TRUE(p.ok());
  Rng rng(3);
  int hot = 0;
  for (int i = 0; i < 100000; ++i) hot += (*p)->Destination(0, rng) == 5;
  EXPECT_NEAR(hot / 100000.0, 0.5 + 0.5 / 15, 0.01);
}

TEST(TrafficTest, ConfigErrorsNameTheKey) {
  struct Bad {
    std::vector<int> k;
    const char* pattern;
    const char* expect;
  };
  for (const Bad& b :
       {Bad{{10, 10}, "bitcomp", "power-of-two"}, Bad{{10, 10}, "shuffle", "power-of-two"},
        Bad{{4, 8}, "transpose", "same network.k"}, Bad{{8}, "transpose", "network.n >= 2"},
        Bad{{2, 2}, "tornado", "gives no node a destination"},
        Bad{{4, 4}, "zigzag", "known: uniform, uniform_self, transpose"}}) {
    auto t = Cube(TopologyKind::kTorus, b.k);
    TrafficConfig c;
    c.pattern = b.pattern;
    auto p = MakePattern(*t, c);
    ASSERT_FALSE(p.ok()) << b.pattern;
    EXPECT_NE(p.status().message().find("traffic.pattern"), std::string::npos);
    EXPECT_NE(p.status().message().find(b.expect), std::string::npos) << p.status().message();
  }
  TrafficConfig c;
  c.pattern = "hotspot";
  c.hotspot_nodes = {99};
  auto t = Cube(TopologyKind::kTorus, {4, 4});
  auto p = MakePattern(*t, c);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("traffic.hotspot_nodes"), std::string::npos);
}

TEST(TrafficTest, BernoulliRateAndIntervalPhase) {
  TrafficConfig c;
  c.rate = 0.3;
  auto b = MakeInjection(c, 16);
  ASSERT_TRUE(b.ok());
  Rng rng(9);
  int64_t t = (*b)->First(rng);
  int64_t count = 1;
  while (t < 2000000) {
    t = (*b)->Next(t, rng);
    ++count;
  }
  EXPECT_NEAR(count * 16.0 / 2000000.0, 0.3, 0.005);
  c.injection = InjectionKind::kInterval;
  c.interval = 100;
  auto iv = MakeInjection(c, 16);
  ASSERT_TRUE(iv.ok());
  const int64_t first = (*iv)->First(rng);
  EXPECT_GE(first, 0);
  EXPECT_LT(first, 100);
  EXPECT_EQ((*iv)->Next(first, rng), first + 100);
  c.interval = 0;
  EXPECT_NE(MakeInjection(c, 16).status().message().find("traffic.interval"), std::string::npos);
  c.injection = InjectionKind::kBernoulli;
  c.rate = 1.5;
  EXPECT_NE(MakeInjection(c, 16).status().message().find("traffic.rate"), std::string::npos);
}

// The gaps between one node's creations over `cycles` cycles: of `process`, or (process =
// nullptr) of BookSim2's on/off process run cycle by cycle as its injection.cpp does (the
// state advances, then an on node creates a message with probability r1).
std::map<int64_t, double> GapShares(const InjectionProcess* process, double alpha, double beta,
                                    double r1, int64_t cycles, Rng& rng) {
  std::map<int64_t, double> shares;
  int64_t last = -1, gaps = 0;
  auto add = [&](int64_t t) {
    if (last >= 0) {
      shares[std::min<int64_t>(t - last, 11)] += 1;
      ++gaps;
    }
    last = t;
  };
  if (process != nullptr) {
    for (int64_t t = process->First(rng); t < cycles; t = process->Next(t, rng)) add(t);
  } else {
    bool on = rng.Bernoulli(0.5);
    for (int64_t t = 0; t < cycles; ++t) {
      on = on ? rng.NextDouble() >= beta : rng.NextDouble() < alpha;
      if (on && rng.NextDouble() < r1) add(t);
    }
  }
  for (auto& [gap, n] : shares) n /= static_cast<double>(gaps);
  shares[0] = static_cast<double>(gaps) / static_cast<double>(cycles);  // the rate
  return shares;
}

// on_off (BookSim2's OnOffInjectionProcess) drawn as geometric runs gives BookSim2's
// process: the same rate and the same distribution of gaps (bursts: far more gaps of one
// cycle than bernoulli's), against the cycle-by-cycle reference; r1 derived as BookSim2
// derives it; bad parameters name their key.
TEST(TrafficTest, OnOffIsBookSimsBurstProcess) {
  TrafficConfig c;
  c.injection = InjectionKind::kOnOff;
  c.rate = 0.2;  // flits/node/cycle: 0.05 messages of 4 flits
  c.burst_alpha = 0.05;
  c.burst_beta = 0.2;
  auto made = MakeInjection(c, 4);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_DOUBLE_EQ((*made)->OfferedFlitsPerCycle(), 0.2);
  const double r1 = 0.05 * (0.05 + 0.2) / 0.05;  // 0.25
  Rng a(3), b(4);
  const std::map<int64_t, double> ours = GapShares(made->get(), 0, 0, 0, 4000000, a);
  const std::map<int64_t, double> ref = GapShares(nullptr, 0.05, 0.2, r1, 4000000, b);
  EXPECT_NEAR(ours.at(0), 0.05, 0.002);  // messages per cycle
  EXPECT_NEAR(ref.at(0), 0.05, 0.002);
  // A gap of one cycle: stay on (0.8) and create (0.25) = 0.2; bernoulli's would be 0.05.
  EXPECT_NEAR(ours.at(1), 0.2, 0.01);
  for (int64_t gap : {1, 2, 3, 5, 11}) {  // 11: eleven cycles or more
    EXPECT_NEAR(ours.at(gap), ref.at(gap), 0.01) << "gap " << gap;
  }
  // alpha derived from beta and r1 (BookSim2: alpha = beta p / (r1 - p)).
  c.burst_alpha = -1;
  c.burst_r1 = 0.25;
  EXPECT_TRUE(MakeInjection(c, 4).ok());
  // Two derived, or an r1 above 1 (0.5 messages per cycle of 1 flit with alpha = beta).
  c.burst_beta = -1;
  EXPECT_NE(MakeInjection(c, 4).status().message().find("traffic.burst_r1"), std::string::npos);
  c.burst_alpha = 0.5;
  c.burst_beta = 0.5;
  c.burst_r1 = -1;
  c.rate = 0.6;
  const Status high = MakeInjection(c, 1).status();
  EXPECT_NE(high.message().find("traffic.rate"), std::string::npos) << high.ToString();
  EXPECT_NE(high.message().find("r1 1.2"), std::string::npos) << high.ToString();
  // A rate so low that r1 falls below 1e-6 is refused: drawing a gap would walk millions of
  // on/off periods.
  c.rate = 1e-9;
  const Status low = MakeInjection(c, 1).status();
  EXPECT_NE(low.message().find("below 1e-6"), std::string::npos) << low.ToString();
  EXPECT_EQ(low.key(), "traffic.rate");
}

// A mix of sizes (BookSim2's packet_size list): each size drawn with its weight's share,
// the mean weighted alike; bad mixes name their key.
TEST(TrafficTest, SizeMixDrawsEachSizeWithItsWeight) {
  TrafficConfig c;
  c.size_mix_flits = {1, 8, 3};
  c.size_mix_weights = {3, 1, 4};
  const SizeMix mix(c);
  EXPECT_DOUBLE_EQ(mix.mean(), (3 * 1 + 1 * 8 + 4 * 3) / 8.0);
  EXPECT_EQ(mix.largest(), 8);
  Rng rng(5);
  std::map<int, int> seen;
  for (int i = 0; i < 400000; ++i) ++seen[mix.Draw(rng)];
  EXPECT_NEAR(seen[1] / 400000.0, 3 / 8.0, 0.005);
  EXPECT_NEAR(seen[8] / 400000.0, 1 / 8.0, 0.005);
  EXPECT_NEAR(seen[3] / 400000.0, 4 / 8.0, 0.005);
  EXPECT_EQ(seen.size(), 3u);
  c.size_mix_weights.clear();  // equal weights
  EXPECT_DOUBLE_EQ(SizeMix(c).mean(), 4.0);
  EXPECT_TRUE(CheckSizeMix(c).ok());
  c.size_mix_weights = {1, 2};
  EXPECT_EQ(CheckSizeMix(c).key(), "traffic.size_mix_weights");
  c.size_mix_weights = {1, 0, 2};
  EXPECT_EQ(CheckSizeMix(c).key(), "traffic.size_mix_weights");
  c.size_mix_weights.clear();
  c.size_mix_flits = {1, 40000};
  EXPECT_EQ(CheckSizeMix(c).key(), "traffic.size_mix_flits");
}

}  // namespace
}  // namespace ukai::sim
