// Traffic patterns and injection processes.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ukai::sim
