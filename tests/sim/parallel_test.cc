// Parallel simulation (engine/partition.h, network.h "Parallel simulation"): every result
// field of every point is bit-identical at 1, 2 and 3 threads, slab and block partitions,
// over a matrix of configs — routing algorithms, switching modes, patterns, both
// measurement modes, static and timed faults with the reconfiguration protocol, the
// paper's router options, the watchdog, the gateway NIC with pcap in and out, store-and-
// forward switching, a BookSim2 config with its measurement, routing.in_order — and the
// partition edge cases (more partitions than slabs, a partition of faulty nodes only,
// k = 2 rings). The MPI ranks' version of the matrix is tests/cli/sim_mpi_itest.cc.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "parallel_test_util.h"
#include "point_result_equal.h"
#include "scratch_path.h"
#include "sim/engine/network.h"
#include "sim/engine/partition.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"
#include "sim/nic/pcap_io.h"
#include "sim/nic/run_gateway.h"
#include "sim_test_util.h"

namespace ukai::sim {
namespace {

using testing::NodeNumber;
using testing::ReadFile;
using testing::ResultDifferences;

// Runs `c` serially, then with 2 threads in slabs and 3 in blocks (every partition
// allowed, however small), and expects identical results. (Each run synchronises its
// threads every cycle: the runs are kept to a few thousand cycles, as a machine with
// fewer cores than threads makes every synchronisation a context switch.)
void ExpectSameAtEveryThreadCount(SimConfig c, const std::string& what) {
  c.run.threads = 1;
  Result<PointResult> serial = RunPoint(c);
  ASSERT_TRUE(serial.ok()) << what << ": " << serial.status().ToString();
  ASSERT_GT(serial->messages_measured, 0) << what;
  const bool cube = c.network.topology != TopologyKind::kGroup;
  for (int threads : {2, 3}) {
    const PartitionShape shape =
        threads == 3 && cube ? PartitionShape::kBlock : PartitionShape::kSlab;
    SimConfig p = c;
    p.run.threads = threads;
    p.run.partition = shape;
    p.run.partition_min_nodes = 1;
    Result<PointResult> par = RunPoint(p);
    ASSERT_TRUE(par.ok()) << what << ": " << par.status().ToString();
    EXPECT_EQ(ResultDifferences(*serial, *par), "")
        << what << " at " << threads << " threads, "
        << (shape == PartitionShape::kSlab ? "slab" : "block");
    EXPECT_EQ(par->partition_note, "");
  }
}

SimConfig Short(SimConfig c) {
  c.measure.warmup_messages = 200;
  c.measure.measure_messages = 800;
  return c;
}

TEST(ParallelTest, DorAndDuatoUniformAndTranspose) {
  for (const char* routing : {"dor", "duato"}) {
    SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {8, 8}, routing));
    c.traffic.pattern = routing[0] == 'd' && routing[1] == 'o' ? "uniform" : "transpose";
    c.traffic.rate = 0.3;
    c.seed = 11;
    ExpectSameAtEveryThreadCount(c, std::string(routing) + " " + c.traffic.pattern);
  }
}

TEST(ParallelTest, VirtualCutThroughPastSaturation) {
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "duato"));
  c.router.switching = Switching::kVirtualCutThrough;
  c.traffic.message_bytes = 32;
  c.traffic.rate = 0.9;
  c.measure.max_cycles = 3000;
  ExpectSameAtEveryThreadCount(c, "vct saturated");
}

TEST(ParallelTest, UpDownOnAMeshWithStaticFaults) {
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kMesh, {6, 6}, "updown"));
  c.faults.nodes = {NodeNumber(8), NodeNumber(27)};
  c.traffic.rate = 0.15;
  ExpectSameAtEveryThreadCount(c, "updown faults");
}

// Detour-UD with timed faults and the reconfiguration protocol, both discard rules.
TEST(ParallelTest, DetourUdTimedFaultsWithTheReconfigurationProtocol) {
  for (ReconfigConfig::Discard discard :
       {ReconfigConfig::Discard::kRecovering, ReconfigConfig::Discard::kAll}) {
    const SimConfig c = testing::DetourUdReconfigConfig(discard);
    ExpectSameAtEveryThreadCount(
        c, discard == ReconfigConfig::Discard::kAll ? "reconfig all" : "reconfig recovering");
  }
}

// The paper's router: one header unit per port, two table read ports, a switch bubble, a
// waiting sender with interval injection; detour-nf with static faults.
TEST(ParallelTest, DetourNfWithThePapersRouterOptions) {
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {10, 10}, "detour-nf"));
  c.router.header_units = HeaderUnits::kPerPort;
  c.router.table_read_ports = 2;
  c.router.switch_bubble_cycles = 1;
  c.traffic.injection = InjectionKind::kInterval;
  c.traffic.interval = 1;
  c.traffic.source_queue = 1;
  c.faults.nodes = {NodeNumber(25), NodeNumber(74)};
  c.measure.warmup_messages = 200;
  c.measure.measure_messages = 600;
  ExpectSameAtEveryThreadCount(c, "detour-nf paper router");
}

TEST(ParallelTest, CyclesModeHotspotOnA3DMeshWithWideEjection) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4, 4}, "dor");
  c.traffic.pattern = "hotspot";
  c.traffic.hotspot_nodes = {5, 40};
  c.traffic.rate = 0.2;
  c.router.eject_flits = 2;
  c.measure.mode = MeasureMode::kCycles;
  c.measure.warmup_cycles = 500;
  c.measure.sample_cycles = 500;
  c.measure.max_cycles = 4000;
  ExpectSameAtEveryThreadCount(c, "cycles mode hotspot");
}

// Partition edge cases, on networks of a few nodes.
SimConfig Tiny(SimConfig c) {
  c.traffic.rate = 0.5;
  c.measure.warmup_messages = 100;
  c.measure.measure_messages = 400;
  return c;
}

// Issue 21's store-and-forward switching: vct-saf (stored after a failed selection) and saf
// (every head stored) keep their per-VC state in the router that evaluates it.
TEST(ParallelTest, StoreAndForwardSwitching) {
  for (Switching sw : {Switching::kVctSaf, Switching::kStoreAndForward}) {
    SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "duato"));
    c.router.switching = sw;
    c.traffic.message_bytes = 32;
    c.traffic.rate = 0.4;
    c.measure.max_cycles = 4000;
    ExpectSameAtEveryThreadCount(c, sw == Switching::kVctSaf ? "vct-saf" : "saf");
  }
}

// Issue 23's BookSim2 config: router.model = booksim (its endpoint channels) and BookSim2's
// measurement (warm-up and sample periods, per-node sent counts, in-flight flits in the
// drain), and routing.in_order (a pair's messages on one injection VC).
TEST(ParallelTest, BooksimConfigAndInOrder) {
  Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(
      "topology = torus; k = 8; n = 2; routing_function = dim_order; num_vcs = 4; "
      "traffic = uniform; packet_size = 4; injection_rate = 0.2; sample_period = 500; "
      "warmup_periods = 1; max_samples = 4; seed = 5;",
      "t.cfg", {});
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  ExpectSameAtEveryThreadCount(points->front(), "booksim");
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {8, 8}, "dor"));
  c.routing.in_order = true;
  c.traffic.rate = 0.3;
  ExpectSameAtEveryThreadCount(c, "in_order");
}

TEST(ParallelTest, KEqualsTwoRings) {
  ExpectSameAtEveryThreadCount(Tiny(testing::SmallConfig(TopologyKind::kTorus, {2, 2, 2}, "dor")),
                               "2-ary 3-cube");
  ExpectSameAtEveryThreadCount(Tiny(testing::SmallConfig(TopologyKind::kTorus, {2, 5}, "duato")),
                               "2x5 torus");
}

TEST(ParallelTest, MorePartitionsThanSlabs) {
  SimConfig c = Tiny(testing::SmallConfig(TopologyKind::kMesh, {4, 2}, "dor"));
  c.run.partition_min_nodes = 1;
  for (int threads : {3, 5}) {
    SimConfig p = c;
    p.run.threads = threads;
    Result<PointResult> serial = RunPoint(c), par = RunPoint(p);
    ASSERT_TRUE(serial.ok() && par.ok());
    EXPECT_EQ(ResultDifferences(*serial, *par), "") << threads << " partitions of 2 slabs";
  }
  Result<PartitionPlan> plan = PartitionPlan::Make(c.network, 8, 5, PartitionShape::kSlab);
  ASSERT_TRUE(plan.ok());
  int64_t nodes = 0;
  for (int p = 0; p < 5; ++p) {
    EXPECT_GE(plan->NodesOf(p), 1);
    nodes += plan->NodesOf(p);
  }
  EXPECT_EQ(nodes, 8);
}

// The last slab holds only faulty nodes: its partition has nothing to do, the others
// route around it.
TEST(ParallelTest, APartitionOfFaultyNodesOnly) {
  SimConfig c = Tiny(testing::SmallConfig(TopologyKind::kMesh, {5, 3}, "updown"));
  for (int x = 0; x < 5; ++x) c.faults.nodes.push_back(NodeNumber(10 + x));
  ExpectSameAtEveryThreadCount(c, "faulty slab");
}

// Always "+" around the ring on VC 0 only: a cyclic channel dependency.
class RingNoDateline final : public RoutingFunction {
 public:
  void Route(const RouteRequest&, RouteResult* out) const override { out->Add(0, 1u); }
};

// The watchdog fires in the same cycle with the same report, whatever the threads.
TEST(ParallelTest, WatchdogReportsTheSameDeadlock) {
  std::string reports[3];
  for (int threads = 1; threads <= 3; ++threads) {
    SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {12});
    c.router.vcs = 2;
    c.traffic.rate = 1.0;
    c.traffic.message_bytes = 4 * 40;
    c.measure.watchdog_cycles = 500;
    c.run.threads = threads;
    c.run.partition_min_nodes = 1;
    auto net = Network::Create(c, std::make_unique<RingNoDateline>());
    ASSERT_TRUE(net.ok());
    EXPECT_EQ((*net)->threads(), threads);
    bool stalled = false;
    for (int i = 0; i < 20000 && !stalled; ++i) {
      (*net)->Step();
      stalled = (*net)->Stalled(c.measure.watchdog_cycles);
    }
    ASSERT_TRUE(stalled);
    ASSERT_TRUE((*net)->CheckInvariants().ok()) << (*net)->CheckInvariants().ToString();
    reports[threads - 1] = (*net)->DeadlockStatus(c.measure.watchdog_cycles).ToString();
  }
  EXPECT_NE(reports[0].find("blocked channels"), std::string::npos);
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_EQ(reports[0], reports[2]);
}

// The gateway NIC with an ingress capture and an egress capture.
TEST(ParallelTest, GatewayWithPcapInAndOut) {
  const std::string in = testing_util::ScratchPath("par_in.pcap");
  ASSERT_TRUE(testing::WriteGatewayIngress(in).ok());
  std::string captures[3];
  PointResult results[3];
  for (int threads = 1; threads <= 3; ++threads) {
    const std::string out = testing_util::ScratchPath("par_out" + std::to_string(threads));
    SimConfig c = testing::GatewayConfig(in, out);
    c.run.threads = threads;
    c.run.partition_min_nodes = 1;
    Result<PointResult> r = RunGatewayPoint(c, {});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    results[threads - 1] = *r;
    captures[threads - 1] = ReadFile(out);
    std::remove(out.c_str());
  }
  std::remove(in.c_str());
  EXPECT_GT(results[0].gateway.frames_delivered, 0);
  EXPECT_GT(results[0].gateway.egress_frames, 0);
  EXPECT_FALSE(captures[0].empty());
  for (int t = 1; t < 3; ++t) {
    EXPECT_EQ(ResultDifferences(results[0], results[t]), "") << t + 1 << " threads";
    EXPECT_TRUE(captures[0] == captures[t]) << t + 1 << " threads: egress capture differs";
  }
}

// A network too small for the partitions asked for runs on fewer and says so.
TEST(ParallelTest, SmallNetworkFallsBackToFewerPartitions) {
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "dor"));
  c.run.threads = 4;
  c.run.partition_min_nodes = 16;
  Result<std::unique_ptr<Network>> net = Network::Create(c);
  ASSERT_TRUE(net.ok());
  EXPECT_EQ((*net)->threads(), 2);
  EXPECT_NE((*net)->partition_note().find("too few for 4 partitions"), std::string::npos)
      << (*net)->partition_note();
  c.run.partition_min_nodes = 64;
  net = Network::Create(c);
  ASSERT_TRUE(net.ok());
  EXPECT_EQ((*net)->threads(), 1);
  Result<PointResult> r = RunPoint(c);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->partition_note.find("running 1 thread"), std::string::npos) << r->partition_note;
}

// run.threads = 0: one thread per core this process may run on (as many as the network
// fills), the results the serial ones.
TEST(ParallelTest, ZeroThreadsMeansOnePerCore) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const int cores = CPU_COUNT(&set);
  SimConfig c = Short(testing::SmallConfig(TopologyKind::kTorus, {8, 8}, "dor"));
  c.run.threads = 0;
  c.run.partition_min_nodes = 1;
  Result<std::unique_ptr<Network>> net = Network::Create(c);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ((*net)->threads(), std::min(cores, 64));
  SimConfig serial = c;
  serial.run.threads = 1;
  Result<PointResult> a = RunPoint(serial), b = RunPoint(c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ResultDifferences(*a, *b), "");
}

TEST(ParallelTest, BlockPartitionsCutTheFewestChannels) {
  NetworkConfig n;
  n.topology = TopologyKind::kTorus;
  n.n = 3;
  n.k = {8, 8, 8};
  Result<PartitionPlan> plan = PartitionPlan::Make(n, 512, 8, PartitionShape::kBlock);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->description(), "8 blocks (2 x 2 x 2 per dimension)");
  for (int p = 0; p < 8; ++p) EXPECT_EQ(plan->NodesOf(p), 64);
  plan = PartitionPlan::Make(n, 512, 2, PartitionShape::kSlab);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->owner(0), 0);
  EXPECT_EQ(plan->owner(255), 0);
  EXPECT_EQ(plan->owner(256), 1);
  EXPECT_EQ(plan->runs(1).size(), 1u);
  n.topology = TopologyKind::kGroup;
  EXPECT_FALSE(PartitionPlan::Make(n, 24, 2, PartitionShape::kBlock).ok());
}

}  // namespace
}  // namespace ukai::sim
