// What a partitioned run refuses (Network::CheckPartitionable, docs/simulator.md "Parallel
// simulation"): the features whose state one partition would have to share with the others
// during a cycle give a config error naming run.threads (or run.ranks under MPI) and the
// feature's own key, never a different answer. The same configs run on one partition.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "sim/engine/network.h"
#include "sim_test_util.h"
#include "sss_test_util.h"
#include "thread_rank_group.h"

namespace ukai::sim {
namespace {

// Creates `c` with 2 threads (every partition allowed) and expects the refusal naming
// `key` whose message names `feature`; with 1 thread it must build.
void ExpectRefusedByThreads(
    SimConfig c, const std::string& feature,
    const std::function<std::unique_ptr<RoutingFunction>()>& routing = nullptr) {
  c.run.partition_min_nodes = 1;
  c.run.threads = 1;
  Result<std::unique_ptr<Network>> one =
      Network::Create(c, routing == nullptr ? nullptr : routing(), true);
  ASSERT_TRUE(one.ok()) << feature << ": " << one.status().ToString();
  c.run.threads = 2;
  Result<std::unique_ptr<Network>> two =
      Network::Create(c, routing == nullptr ? nullptr : routing(), true);
  ASSERT_FALSE(two.ok()) << feature << ": a partitioned run was accepted";
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(two.status().key(), "run.threads") << two.status().ToString();
  EXPECT_NE(two.status().message().find(feature), std::string::npos) << two.status().ToString();
  EXPECT_NE(two.status().message().find("run.threads = 1"), std::string::npos);
}

TEST(ParallelRefusalTest, SssNicModel) {
  ExpectRefusedByThreads(testing::SssTree(4, 2), "sss.operation");
}

TEST(ParallelRefusalTest, GraphTopologies) {
  SimConfig c = testing::SssTree(4, 2);
  c.sss.operation = RmaOperation::kMessage;  // the flit model on the tree, no NIC model
  ExpectRefusedByThreads(c, "network.topology = graph / tree / anynet");
}

TEST(ParallelRefusalTest, Workloads) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {8, 8});
  c.workload.kind = WorkloadKind::kNetrace;
  c.workload.file = "unused.tra.bz2";  // the check comes before any file is read
  ExpectRefusedByThreads(c, "workload.kind");
}

// A routing that forks (multicast): DOR that says it may fork. Only graph topologies have
// one in the registry, so a test-only routing shows the check on a mesh.
class ForkingDor final : public RoutingFunction {
 public:
  explicit ForkingDor(std::unique_ptr<RoutingFunction> dor) : dor_(std::move(dor)) {}
  void Route(const RouteRequest& r, RouteResult* out) const override { dor_->Route(r, out); }
  bool MayFork() const override { return true; }

 private:
  std::unique_ptr<RoutingFunction> dor_;
};

TEST(ParallelRefusalTest, ForkingRoutings) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8});
  c.router.vcs = 4;
  const std::unique_ptr<KaryNCube> cube = testing::MakeCube(c.network.topology, c.network.k);
  ExpectRefusedByThreads(c, "forks messages", [&cube] {
    return std::make_unique<ForkingDor>(std::make_unique<testing::TableLookupDor>(*cube));
  });
}

// Under MPI (two ranks played by threads): BookSim2's measurement reads per-node counts
// that each rank holds only for its own nodes; a workload is refused as with threads.
TEST(ParallelRefusalTest, UnderRanks) {
  testing::ThreadRanks ranks(2);
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8});
  c.run.partition_min_nodes = 1;
  c.run.ranks = ranks.member(0);
  c.measure.mode = MeasureMode::kBooksim;
  Result<std::unique_ptr<Network>> net = Network::Create(c);
  ASSERT_FALSE(net.ok());
  EXPECT_EQ(net.status().key(), "run.ranks") << net.status().ToString();
  EXPECT_NE(net.status().message().find("measure.mode = booksim"), std::string::npos)
      << net.status().ToString();
  EXPECT_NE(net.status().message().find("2 MPI ranks"), std::string::npos);
  c.measure.mode = MeasureMode::kMessages;
  c.workload.kind = WorkloadKind::kOtf2;
  c.workload.file = "unused";
  net = Network::Create(c);
  ASSERT_FALSE(net.ok());
  EXPECT_EQ(net.status().key(), "run.ranks") << net.status().ToString();
  EXPECT_NE(net.status().message().find("workload.kind"), std::string::npos);
}

}  // namespace
}  // namespace ukai::sim
