// No deadlock far past saturation: DOR (2, 3, 4 VCs; both dateline schemes, every tie rule)
// and Duato (3, 4 VCs) on small tori run
// 200,000 cycles at offered load 1.0 flit/node/cycle without the watchdog firing, with
// flits still being delivered at the end; uniform traffic, and for Duato also the
// adversarial permutations (tornado, transpose, bit complement) that once deadlocked it
// when its VCs were allocated non-atomically (a head waiting behind another message).
#include <gtest/gtest.h>

#include <string>

#include "sim/engine/network.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

struct Case {
  const char* routing;
  int vcs;
  std::vector<int> k;
  Switching switching;
  const char* pattern = "uniform";
  DorDateline dateline = DorDateline::kShared;
  DorTieRule tie = DorTieRule::kRandom;
};

void RunSaturated(const Case& c) {
  SimConfig cfg = testing::SmallConfig(TopologyKind::kTorus, c.k, c.routing);
  cfg.routing.dor_dateline = c.dateline;
  cfg.routing.dor_tie = c.tie;
  cfg.router.vcs = c.vcs;
  cfg.router.switching = c.switching;
  cfg.traffic.pattern = c.pattern;
  cfg.traffic.rate = 1.0;
  cfg.traffic.message_bytes = c.switching == Switching::kWormhole ? 64 : 32;
  cfg.measure.watchdog_cycles = 2000;
  auto net = Network::Create(cfg);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const std::string what = (*net)->topology().Describe() + " " + c.routing +
                           " vcs=" + std::to_string(c.vcs) + " " + c.pattern;
  int64_t delivered_late = 0;
  for (int64_t i = 0; i < 200000; ++i) {
    (*net)->Step();
    if ((*net)->Stalled(cfg.measure.watchdog_cycles)) {
      FAIL() << what << ": " << (*net)->DeadlockStatus(cfg.measure.watchdog_cycles).ToString();
    }
    if (i >= 190000) delivered_late += static_cast<int64_t>((*net)->deliveries().size());
  }
  EXPECT_GT(delivered_late, 100) << what;
  EXPECT_TRUE((*net)->CheckInvariants().ok()) << what;
}

TEST(DeadlockFreedomTest, DorTwoThreeFourVcs) {
  for (int vcs : {2, 3, 4}) RunSaturated({"dor", vcs, {6, 6}, Switching::kWormhole});
  RunSaturated({"dor", 2, {4, 3, 4}, Switching::kWormhole});
  RunSaturated({"dor", 2, {5, 5}, Switching::kVirtualCutThrough});
}

// The dateline and tie options of DOR (the default is shared + random, above), also with
// the permutations that load the wrap channels hardest.
TEST(DeadlockFreedomTest, DorDatelineAndTieOptions) {
  const auto kWh = Switching::kWormhole;
  for (const char* pattern : {"tornado", "transpose", "bitcomp"}) {
    RunSaturated({"dor", 2, {8, 8}, kWh, pattern});
    RunSaturated({"dor", 4, {8, 8}, kWh, pattern});
  }
  RunSaturated({"dor", 3, {6, 6}, kWh, "uniform", DorDateline::kSplit, DorTieRule::kPlus});
  RunSaturated({"dor", 4, {6, 6}, kWh, "uniform", DorDateline::kShared, DorTieRule::kParity});
  RunSaturated({"dor", 2, {4, 4, 4}, kWh, "tornado", DorDateline::kShared, DorTieRule::kPlus});
}

TEST(DeadlockFreedomTest, DuatoThreeFourVcs) {
  for (int vcs : {3, 4}) RunSaturated({"duato", vcs, {6, 6}, Switching::kWormhole});
  RunSaturated({"duato", 3, {4, 3, 4}, Switching::kWormhole});
  RunSaturated({"duato", 3, {5, 5}, Switching::kVirtualCutThrough});
}

TEST(DeadlockFreedomTest, DuatoAdversarialPatterns) {
  for (const char* pattern : {"tornado", "transpose", "bitcomp"}) {
    for (int vcs : {3, 4}) {
      RunSaturated({"duato", vcs, {8, 8}, Switching::kWormhole, pattern});
    }
  }
  RunSaturated({"duato", 3, {4, 4, 4}, Switching::kWormhole, "tornado"});
}

}  // namespace
}  // namespace ukai::sim
