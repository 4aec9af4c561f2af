// The rank exchange (engine/rank_exchange.cc) without mpirun: the ranks of a job played by
// threads of this process (thread_rank_group.h). Every result field of every point is
// bit-identical to the serial run's on 2 ranks at 1, 2 and 3 threads each, in slabs and in
// blocks, over routings, patterns, both measurement modes, static and timed faults with the
// reconfiguration protocol, the gateway NIC with pcap in and out; every rank computes the
// same results; the watchdog's report is the serial one, channels in node order, also when
// a rank's block of nodes is not contiguous in node numbers. The same under a real mpirun
// is tests/cli/sim_mpi_itest.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "parallel_test_util.h"
#include "point_result_equal.h"
#include "scratch_path.h"
#include "sim/engine/network.h"
#include "sim/experiment/run.h"
#include "sim/nic/pcap_io.h"
#include "sim/nic/run_gateway.h"
#include "sim_test_util.h"
#include "thread_rank_group.h"

namespace ukai::sim {
namespace {

using testing::NodeNumber;
using testing::ReadFile;
using testing::ResultDifferences;
using testing::ThreadRanks;

using PointFn = std::function<Result<PointResult>(const SimConfig&)>;

// Runs `run` on `ranks` ranks of `threads` threads each (every partition allowed) and
// returns every rank's result.
std::vector<Result<PointResult>> RunOnRanks(const SimConfig& c, int ranks, int threads,
                                            PartitionShape shape, const PointFn& run) {
  ThreadRanks group(ranks);
  std::vector<std::optional<Result<PointResult>>> out(static_cast<size_t>(ranks));
  std::vector<std::thread> workers;
  for (int r = 0; r < ranks; ++r) {
    workers.emplace_back([&, r] {
      SimConfig p = c;
      p.run.threads = threads;
      p.run.partition = shape;
      p.run.partition_min_nodes = 1;
      p.run.ranks = group.member(r);
      out[static_cast<size_t>(r)] = run(p);
    });
  }
  for (std::thread& t : workers) t.join();
  std::vector<Result<PointResult>> results;
  for (auto& o : out) results.push_back(std::move(*o));
  return results;
}

Result<PointResult> Synthetic(const SimConfig& c) { return RunPoint(c); }

// Serial, then 2 ranks x {1, 2, 3} threads (slabs at 1 and 3 threads, blocks at 2 on a
// mesh or torus): every rank's result identical to the serial one.
void ExpectSameOnTwoRanks(const SimConfig& c, const std::string& what,
                          const PointFn& run = Synthetic) {
  Result<PointResult> serial = run(c);
  ASSERT_TRUE(serial.ok()) << what << ": " << serial.status().ToString();
  ASSERT_GT(serial->messages_measured, 0) << what;
  const bool cube = c.network.topology != TopologyKind::kGroup;
  for (int threads : {1, 2, 3}) {
    const PartitionShape shape =
        threads == 2 && cube ? PartitionShape::kBlock : PartitionShape::kSlab;
    std::vector<Result<PointResult>> ranks = RunOnRanks(c, 2, threads, shape, run);
    for (size_t r = 0; r < ranks.size(); ++r) {
      ASSERT_TRUE(ranks[r].ok()) << what << ", rank " << r << ": " << ranks[r].status().ToString();
      EXPECT_EQ(ResultDifferences(*serial, *ranks[r]), "")
          << what << ": rank " << r << " of 2 at " << threads << " thread(s), "
          << (shape == PartitionShape::kSlab ? "slab" : "block");
    }
  }
}

TEST(ParallelRanksTest, DorUniformAndDuatoTranspose) {
  for (const char* routing : {"dor", "duato"}) {
    SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 8}, routing);
    c.traffic.pattern = routing[1] == 'o' ? "uniform" : "transpose";
    c.traffic.rate = 0.3;
    c.seed = 5;
    c.measure.warmup_messages = 200;
    c.measure.measure_messages = 800;
    ExpectSameOnTwoRanks(c, std::string(routing) + " " + c.traffic.pattern);
  }
}

TEST(ParallelRanksTest, UpDownStaticFaultsInCyclesMode) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {6, 6}, "updown");
  c.faults.nodes = {NodeNumber(8), NodeNumber(27)};
  c.traffic.pattern = "hotspot";
  c.traffic.hotspot_nodes = {20};
  c.traffic.rate = 0.15;
  c.measure.mode = MeasureMode::kCycles;
  c.measure.warmup_cycles = 400;
  c.measure.sample_cycles = 400;
  c.measure.max_cycles = 1600;
  ExpectSameOnTwoRanks(c, "updown static faults, cycles mode");
}

TEST(ParallelRanksTest, DetourUdTimedFaultsWithTheReconfigurationProtocol) {
  const SimConfig c = testing::DetourUdReconfigConfig(ReconfigConfig::Discard::kRecovering);
  ExpectSameOnTwoRanks(c, "detour-ud reconfiguration");
}

// The gateway NIC (group topology, dor-detour) with pcap in and out: rank 0 alone writes
// the egress capture, byte for byte the serial one.
TEST(ParallelRanksTest, GatewayWithPcapInAndOut) {
  const std::string in = testing_util::ScratchPath("ranks_in.pcap");
  ASSERT_TRUE(testing::WriteGatewayIngress(in).ok());
  const std::string out_serial = testing_util::ScratchPath("ranks_out_serial.pcap");
  const std::string out_ranks = testing_util::ScratchPath("ranks_out.pcap");
  SimConfig c = testing::GatewayConfig(in, out_serial);
  auto gateway = [](const SimConfig& p) { return RunGatewayPoint(p, {}); };
  Result<PointResult> serial = gateway(c);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_GT(serial->gateway.frames_delivered, 0);
  c.nic.egress_pcap = out_ranks;
  for (int threads : {1, 3}) {
    std::remove(out_ranks.c_str());
    std::vector<Result<PointResult>> ranks =
        RunOnRanks(c, 2, threads, PartitionShape::kSlab, gateway);
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_TRUE(ranks[r].ok()) << ranks[r].status().ToString();
      EXPECT_EQ(ResultDifferences(*serial, *ranks[r]), "") << "rank " << r << ", " << threads;
    }
    const std::string a = ReadFile(out_serial), b = ReadFile(out_ranks);
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << "egress capture differs at 2 ranks x " << threads << " thread(s)";
  }
  for (const std::string& f : {in, out_serial, out_ranks}) std::remove(f.c_str());
}

// A network too small for one partition per rank: every rank simulates it whole, with no
// exchange, and says so; the results are the serial ones on both ranks.
TEST(ParallelRanksTest, TooFewNodesForTheRanksRunsWholeOnEach) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {6, 6}, "dor");
  c.traffic.rate = 0.3;
  c.measure.warmup_messages = 100;
  c.measure.measure_messages = 400;
  Result<PointResult> serial = RunPoint(c);
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  c.run.partition_min_nodes = 64;
  ThreadRanks group(2);
  std::optional<Result<PointResult>> other;
  std::thread t([&] {
    SimConfig p = c;
    p.run.ranks = group.member(1);
    other = RunPoint(p);
  });
  SimConfig p = c;
  p.run.ranks = group.member(0);
  Result<PointResult> mine = RunPoint(p);
  t.join();
  for (const Result<PointResult>* r : {&mine, &*other}) {
    ASSERT_TRUE(r->ok()) << r->status().ToString();
    EXPECT_EQ(ResultDifferences(*serial, **r), "");
    EXPECT_NE((*r)->partition_note.find("every rank simulates the whole network"),
              std::string::npos)
        << (*r)->partition_note;
  }
  EXPECT_EQ(group.exchanges(), 0) << "a replicated run exchanges nothing";
}

// Always "+x" on VC 0: a cyclic channel dependency on every x ring.
class PlusXOnly final : public RoutingFunction {
 public:
  void Route(const RouteRequest&, RouteResult* out) const override { out->Add(0, 1u); }
};

// Steps until the watchdog fires; returns its report ("" if it never fires).
std::string WatchdogReport(const SimConfig& c) {
  Result<std::unique_ptr<Network>> net = Network::Create(c, std::make_unique<PlusXOnly>());
  if (!net.ok()) return "create: " + net.status().ToString();
  for (int i = 0; i < 20000; ++i) {
    (*net)->Step();
    if ((*net)->Stalled(c.measure.watchdog_cycles)) {
      const Status inv = (*net)->CheckInvariants();
      if (!inv.ok()) return "invariants: " + inv.ToString();
      return (*net)->DeadlockStatus(c.measure.watchdog_cycles).ToString();
    }
  }
  return "";
}

// On an 8 x 4 torus cut into 2 blocks along x, each rank's nodes are every other run of 4
// node numbers: the report still lists the blocked channels in node order, as the serial
// run's does, the same on both ranks.
TEST(ParallelRanksTest, WatchdogReportsTheSerialDeadlockOnBlocks) {
  SimConfig c = testing::SmallConfig(TopologyKind::kTorus, {8, 4});
  c.router.vcs = 2;
  c.traffic.rate = 1.0;
  c.traffic.message_bytes = 4 * 40;
  c.measure.watchdog_cycles = 500;
  const std::string serial = WatchdogReport(c);
  ASSERT_NE(serial.find("blocked channels"), std::string::npos) << serial;
  for (PartitionShape shape : {PartitionShape::kBlock, PartitionShape::kSlab}) {
    ThreadRanks group(2);
    std::string reports[2];
    std::thread other([&] {
      SimConfig p = c;
      p.run.partition = shape;
      p.run.partition_min_nodes = 1;
      p.run.ranks = group.member(1);
      reports[1] = WatchdogReport(p);
    });
    SimConfig p = c;
    p.run.partition = shape;
    p.run.partition_min_nodes = 1;
    p.run.ranks = group.member(0);
    reports[0] = WatchdogReport(p);
    other.join();
    const char* name = shape == PartitionShape::kBlock ? "blocks" : "slabs";
    EXPECT_EQ(reports[0], serial) << name;
    EXPECT_EQ(reports[1], serial) << name;
  }
}

}  // namespace
}  // namespace ukai::sim
