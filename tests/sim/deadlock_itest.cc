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
  DuatoAtomic atomic = DuatoAtomic::kAdaptive;
  int message_bytes = 0;      // 0: 64 with wormhole, 32 with VCT
  bool paper_router = false;  // shared header units, a 1-cycle bubble, a waiting sender
};

// Runs case `c` at offered load 1.0 for `cycles` cycles: kDeadlock when the watchdog fires,
// else OK; `delivered_late` counts the deliveries of the last 10000 cycles.
Status Saturate(const Case& c, int64_t cycles, int64_t* delivered_late) {
  SimConfig cfg = testing::SmallConfig(TopologyKind::kTorus, c.k, c.routing);
  cfg.routing.dor_dateline = c.dateline;
  cfg.routing.dor_tie = c.tie;
  cfg.routing.duato_atomic = c.atomic;
  cfg.router.vcs = c.vcs;
  cfg.router.switching = c.switching;
  cfg.traffic.pattern = c.pattern;
  cfg.traffic.rate = 1.0;
  cfg.traffic.message_bytes =
      c.message_bytes > 0 ? c.message_bytes : (c.switching == Switching::kWormhole ? 64 : 32);
  cfg.measure.watchdog_cycles = 2000;
  if (c.paper_router) {
    cfg.router.header_units = HeaderUnits::kPerPort;
    cfg.router.switch_bubble_cycles = 1;
    cfg.traffic.source_queue = 1;
  }
  auto net = Network::Create(cfg);
  if (!net.ok()) return net.status();
  *delivered_late = 0;
  for (int64_t i = 0; i < cycles; ++i) {
    (*net)->Step();
    if ((*net)->Stalled(cfg.measure.watchdog_cycles)) {
      return (*net)->DeadlockStatus(cfg.measure.watchdog_cycles);
    }
    if (i >= cycles - 10000) *delivered_late += static_cast<int64_t>((*net)->deliveries().size());
  }
  return (*net)->CheckInvariants();
}

void RunSaturated(const Case& c, int64_t cycles = 200000) {
  const std::string what = std::string(c.routing) + " vcs=" + std::to_string(c.vcs) + " " +
                           c.pattern + " bytes=" + std::to_string(c.message_bytes);
  int64_t delivered_late = 0;
  const Status st = Saturate(c, cycles, &delivered_late);
  ASSERT_TRUE(st.ok()) << what << ": " << st.ToString();
  EXPECT_GT(delivered_late, 100) << what;
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
  // BookSim2's classes (even VCs: acyclic, dor_options_test.cc).
  RunSaturated({"dor", 2, {8, 8}, kWh, "tornado", DorDateline::kBooksim});
  RunSaturated({"dor", 4, {6, 6}, kWh, "uniform", DorDateline::kBooksim});
}

TEST(DeadlockFreedomTest, DuatoThreeFourVcs) {
  for (int vcs : {3, 4}) RunSaturated({"duato", vcs, {6, 6}, Switching::kWormhole});
  RunSaturated({"duato", 3, {4, 3, 4}, Switching::kWormhole});
  RunSaturated({"duato", 3, {5, 5}, Switching::kVirtualCutThrough});
}

// routing.duato_atomic: with only the adaptive VCs atomic (the default) or all of them,
// Duato survives saturation, also with 1-flit messages (every message a new VC
// allocation) and the adversarial permutations; with the escape VCs atomic and the
// adaptive ones not (or none atomic), a head can wait behind another message in an
// adaptive buffer, unable to reach its escape VC, and the network deadlocks.
TEST(DeadlockFreedomTest, DuatoAtomicOptions) {
  const auto kWh = Switching::kWormhole;
  const auto kRnd = DorTieRule::kRandom;
  const auto kShared = DorDateline::kShared;
  for (const char* pattern : {"uniform", "tornado", "transpose", "bitcomp"}) {
    RunSaturated({"duato", 3, {8, 8}, kWh, pattern, kShared, kRnd, DuatoAtomic::kAdaptive, 4},
                 100000);
  }
  RunSaturated({"duato", 4, {8, 8}, kWh, "uniform", kShared, kRnd, DuatoAtomic::kAll, 4}, 100000);
  RunSaturated({"duato", 4, {4, 4, 4}, kWh, "tornado", kShared, kRnd, DuatoAtomic::kAdaptive, 4},
               100000);
  for (DuatoAtomic a : {DuatoAtomic::kEscape, DuatoAtomic::kNone}) {
    int64_t late = 0;
    const Status st = Saturate(
        {"duato", 4, {10, 10}, kWh, "uniform", DorDateline::kShared, DorTieRule::kRandom, a, 4},
        100000, &late);
    EXPECT_EQ(st.code(), StatusCode::kDeadlock) << st.ToString();
  }
}

// The paper's router options (shared header units per input port, a 1-cycle bubble on a
// change of message, a sender that waits) with DOR and Duato.
TEST(DeadlockFreedomTest, PaperRouterOptions) {
  const auto kWh = Switching::kWormhole;
  const auto kRnd = DorTieRule::kRandom;
  const auto kShared = DorDateline::kShared;
  for (const char* pattern : {"uniform", "tornado"}) {
    RunSaturated({"dor", 4, {8, 8}, kWh, pattern, kShared, kRnd, DuatoAtomic::kAdaptive, 0, true},
                 100000);
    RunSaturated({"duato", 4, {8, 8}, kWh, pattern, kShared, kRnd, DuatoAtomic::kAdaptive, 4, true},
                 100000);
  }
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
