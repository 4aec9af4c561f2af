// The runtime's RMA and multicast programs on the SSS-CORE switched network (issue 21's
// tree of switches with source routing, docs/sss.md) through the sim module: the data
// arrives intact, every operation completes, and its frames crossed the switches (the
// simulated times are those of the tree: they grow with the switches between the nodes).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "rma_test_util.h"
#include "rt_test_util.h"
#include "sim_test_util.h"
#include "ukai/rt/multicast.hpp"
#include "ukai/rt/rma.hpp"

namespace ukai::rt::testing {
namespace {

// 16 end nodes under a tree of 4 x 4 switches (2 levels), source routing, as the SSS
// experiments configure it (experiments/sss/*.toml), communication only. Process i on
// node_map[i]: 0 and 1 share a leaf switch; 2, 3 and 4 are under the other leaves.
constexpr char kTree[] =
    "[network]\ntopology = \"tree\"\ntree_arity = 4\ntree_levels = 2\n"
    "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
    "[routing]\nalgorithm = \"source\"\n"
    "[sim]\ncpu_scale = 0.0\nnode_map = [0, 1, 5, 10, 15]\n";
constexpr int kProcesses = 5;

struct TreeJob {
  TreeJob() : fabric(SimFabricOf(kTree)) {
    for (int i = 0; i < kProcesses && fabric; ++i) {
      RuntimeOptions o = ModuleOptions("sim", nullptr);
      o.sim_fabric = fabric;
      auto rt = Runtime::Init(o);
      EXPECT_TRUE(rt.ok()) << rt.status().ToString();
      if (!rt.ok()) return;
      rts.push_back(std::move(*rt));
      auto ctx = rts.back()->CreateContext({.name = "p" + std::to_string(i)});
      EXPECT_TRUE(ctx.ok()) << ctx.status().ToString();
      if (!ctx.ok()) return;
      ctxs.push_back(*ctx);
    }
  }
  ~TreeJob() {
    mcs.clear();
    rmas.clear();
    for (auto& rt : rts) EXPECT_TRUE(rt->Finalize().ok());
  }
  bool ok() const { return static_cast<int>(ctxs.size()) == kProcesses; }

  std::shared_ptr<SimFabric> fabric;
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<Context*> ctxs;
  std::vector<std::unique_ptr<Rma>> rmas;
  std::vector<std::unique_ptr<Multicaster>> mcs;
};

// Puts and gets of several packets (RMA packets are at most 4 KiB) to a process under the
// same leaf switch and to one under another: both round trips are exact copies, and the
// far one takes longer in simulated time (it crosses the root switch).
TEST(SimOnSssNetwork, RmaPutsAndGetsCrossTheSwitches) {
  TreeJob job;
  ASSERT_TRUE(job.ok());
  for (int i = 0; i < kProcesses; ++i) {
    auto rma = Rma::Create(*job.ctxs[i]);
    ASSERT_TRUE(rma.ok()) << rma.status().ToString();
    job.rmas.push_back(std::move(*rma));
  }
  std::map<int, int64_t> round_trip;
  // Page-aligned, so that the packets do not depend on where the heap put the memory: the
  // 20,000 bytes from offset 100 are 5 packets (3,996 + 3 x 4,096 + 3,716 bytes).
  std::vector<std::unique_ptr<Pages>> memory;
  for (int i = 0; i < kProcesses; ++i) memory.push_back(std::make_unique<Pages>(64 << 10));
  for (int target : {1, 3}) {
    auto key = job.rmas[target]->Register(memory[target]->span());
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    const std::vector<uint8_t> data = Pattern(20000, target);
    std::vector<uint8_t> back(data.size());
    const int64_t t0 = job.rts[0]->Now().count();
    ASSERT_TRUE(job.rmas[0]->PutSync(*key, 100, data).ok());
    ASSERT_TRUE(job.rmas[0]->GetSync(*key, 100, back).ok());
    round_trip[target] = job.rts[0]->Now().count() - t0;
    EXPECT_EQ(back, data) << "target " << target;
    EXPECT_TRUE(std::equal(data.begin(), data.end(), memory[target]->data + 100));
  }
  EXPECT_GT(round_trip[1], 0);
  EXPECT_GT(round_trip[3], round_trip[1]) << "the far node is behind the root switch";
  const sim::PointResult net = NetworkResult(*job.fabric);
  // Node to node under one leaf switch: 2 hops; across the root: 4. Every message took one
  // of the two (the hop total is 2 near + 4 far). Each path carries the same RMA traffic:
  // the put's 5 packets and their 5 acks, the get's 5 requests and 5 replies, which the
  // network carried as 27 messages on each path in every run traced (2026-11-28, alone and
  // beside a build; more than 20: not broken down here). With the memory where the heap put
  // it, the packets depended on its page offset, which changed with the allocation history
  // of a loaded run, and the two paths could differ: the likely cause of a failure under
  // `ctest -j2` (2026-11-28 14:40; its output was not kept).
  const double measured = static_cast<double>(net.messages_measured);
  const double far = (net.avg_hops - 2.0) * measured / 2.0, near = measured - far;
  EXPECT_NEAR(far, std::round(far), 1e-6) << "a message took neither 2 nor 4 hops";
  EXPECT_GE(near, 20.0);
  EXPECT_NEAR(far, near, 1e-6) << "near " << near << ", far " << far;
  EXPECT_EQ(net.undeliverable_messages, 0);
}

// Chained, tree and naive multicasts of several chunks from process 0 to the four others:
// every member gets each message once and intact, and the acks come back combined.
TEST(SimOnSssNetwork, MulticastsReachEveryMemberWithCombinedAcks) {
  TreeJob job;
  ASSERT_TRUE(job.ok());
  std::mutex mu;
  std::map<int, std::vector<std::vector<uint8_t>>> got;
  for (int i = 0; i < kProcesses; ++i) {
    auto mc = Multicaster::Attach(*job.ctxs[i], [&, i](const MulticastDelivery& d) {
      std::lock_guard<std::mutex> lock(mu);
      got[i].emplace_back(d.data.begin(), d.data.end());
    });
    ASSERT_TRUE(mc.ok()) << mc.status().ToString();
    job.mcs.push_back(std::move(*mc));
  }
  std::vector<Startpoint> group;
  for (int m = 1; m < kProcesses; ++m) group.push_back(job.mcs[m]->startpoint());
  size_t sent = 0;
  for (MulticastKind kind : {MulticastKind::kChain, MulticastKind::kTree, MulticastKind::kNaive}) {
    SCOPED_TRACE(MulticastKindName(kind));
    const std::vector<uint8_t> data = Pattern(50000, static_cast<int>(kind));
    MulticastOptions o;
    o.kind = kind;
    o.chunk_bytes = 16384;
    const int64_t t0 = job.rts[0]->Now().count();
    auto r = job.mcs[0]->Multicast(group, data, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ++sent;
    EXPECT_TRUE(r->all_acked());
    EXPECT_GT(job.rts[0]->Now().count(), t0);
    for (int m = 1; m < kProcesses; ++m) {
      ASSERT_TRUE(WaitFor([&] {
        std::lock_guard<std::mutex> lock(mu);
        return got[m].size() == sent;
      })) << "member "
          << m;
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(got[m].back(), data) << "member " << m;
    }
  }
  EXPECT_EQ(NetworkResult(*job.fabric).undeliverable_messages, 0);
}

}  // namespace
}  // namespace ukai::rt::testing
