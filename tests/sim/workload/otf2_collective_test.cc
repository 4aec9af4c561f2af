// OTF2 collectives replayed (sim/workload/otf2_collective.cc): for every collective OTF2
// defines and every algorithm, an archive whose ranks record the collective with Score-P's
// sizes replays exactly the messages and bytes of the algorithm's schedule
// (workload/collectives.h, whose counts collectives_test.cc checks against their formulas),
// v-variants with their per-rank sizes; sub-communicators, MPI_COMM_SELF, several
// collectives in a row, and a rank leaving a collective only after its messages.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <numeric>
#include <string>
#include <vector>

#include "otf2_writer.h"
#include "scratch_path.h"
#include "sim/experiment/run.h"
#include "sim/sim_test_util.h"
#include "sim/workload/collectives.h"
#include "sim/workload/workload_config.h"

namespace ukai::sim {
namespace {

using ukai::testing::Otf2TestArchive;
using ukai::testing_util::ScratchPath;
using Op = CollectiveOp;
using A = CollectiveAlgorithm;

SimConfig Otf2Config(const std::string& anchor, A algorithm) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, {4, 4});
  c.router.clock_mhz = 1000;
  c.workload.kind = WorkloadKind::kOtf2;
  c.workload.file = anchor;
  c.workload.collective_algorithm = algorithm;
  return c;
}

// One collective as every rank records it (Score-P's convention for sent / received bytes)
// and the sizes the schedule is built from.
struct Recorded {
  std::vector<uint64_t> sent, received;
  CollectiveSizes sizes;
};

Recorded Record(Op op, int p, int root, int64_t n, const std::vector<int64_t>& b) {
  Recorded r;
  const int64_t total = std::accumulate(b.begin(), b.end(), int64_t{0});
  for (int me = 0; me < p; ++me) {
    const bool is_root = me == root;
    int64_t s = 0, v = 0;
    switch (op) {
      case Op::kBcast:
        s = is_root ? p * n : 0, v = n;
        break;
      case Op::kReduce:
        s = n, v = is_root ? p * n : 0;
        break;
      case Op::kAllreduce:
        s = v = p * n;
        break;
      case Op::kGather:
      case Op::kGatherv:
        s = b[me], v = is_root ? total : 0;
        break;
      case Op::kScatter:
      case Op::kScatterv:
        s = is_root ? total : 0, v = b[me];
        break;
      case Op::kAllgather:
      case Op::kAllgatherv:
        s = p * b[me], v = total;
        break;
      case Op::kAlltoall:
      case Op::kAlltoallv:
      case Op::kAlltoallw:
        s = p * b[me], v = total;
        break;
      case Op::kReduceScatterBlock:
        s = v = p * b[me];
        break;
      case Op::kReduceScatter:
        s = total, v = p * b[me];
        break;
      case Op::kScan:
        s = (p - me) * n, v = (me + 1) * n;
        break;
      case Op::kExscan:
        s = (p - me - 1) * n, v = me * n;
        break;
      default:
        break;
    }
    r.sent.push_back(static_cast<uint64_t>(s));
    r.received.push_back(static_cast<uint64_t>(v));
  }
  switch (op) {
    case Op::kBcast:
    case Op::kReduce:
    case Op::kAllreduce:
    case Op::kScan:
    case Op::kExscan:
      r.sizes = {n, {}};
      break;
    case Op::kReduceScatter:
      r.sizes = {total, b};
      break;
    case Op::kReduceScatterBlock:
      r.sizes = {p * b[0], b};
      break;
    default:
      r.sizes = {0, b};
  }
  return r;
}

TEST(Otf2Collectives, EveryOpAndAlgorithmReplaysItsScheduleMessagesAndBytes) {
  const int64_t control = WorkloadConfig().control_bytes;
  int archives = 0;
  for (int p : {4, 5}) {
    for (int op_i = 0; op_i < kCollectiveOpCount; ++op_i) {
      const Op op = static_cast<Op>(op_i);
      const bool v = op == Op::kGatherv || op == Op::kScatterv || op == Op::kAllgatherv ||
                     op == Op::kAlltoallv || op == Op::kAlltoallw || op == Op::kReduceScatter;
      std::vector<int64_t> blocks;
      for (int r = 0; r < p; ++r) blocks.push_back(v ? 40 + 8 * r : 48);
      const int root = p - 2;
      const Recorded rec = Record(op, p, root, 4096, blocks);
      Otf2TestArchive a(ScratchPath("otf2_coll_" + std::to_string(p) + "_" + std::to_string(op_i)),
                        p);
      for (int r = 0; r < p; ++r) {
        OTF2_EvtWriter_MpiCollectiveBegin(a.Events(r), nullptr, 10 * r);
        OTF2_EvtWriter_MpiCollectiveEnd(a.Events(r), nullptr, 10 * r + 5,
                                        static_cast<OTF2_CollectiveOp>(op), Otf2TestArchive::kWorld,
                                        static_cast<uint32_t>(root), rec.sent[r], rec.received[r]);
      }
      const std::string anchor = a.Close();
      ++archives;
      for (A alg : {A::kBinomial, A::kRing, A::kRecursiveDoubling, A::kAuto}) {
        SCOPED_TRACE(std::string(CollectiveOpName(op)) + " p=" + std::to_string(p) +
                     " algorithm=" + std::to_string(static_cast<int>(alg)));
        const CollSchedule s = BuildSchedule(op, alg, p, root, rec.sizes);
        int64_t bytes = 0;
        for (const CollMessage& m : s.messages) bytes += m.bytes > 0 ? m.bytes : control;
        Result<PointResult> point = RunPoint(Otf2Config(anchor, alg));
        ASSERT_TRUE(point.ok()) << point.status().ToString();
        const WorkloadFigures& f = point->workload;
        EXPECT_EQ(f.collectives, 1);
        EXPECT_EQ(f.replayed_messages, static_cast<int64_t>(s.messages.size()));
        EXPECT_EQ(f.replayed_bytes, bytes);
        EXPECT_EQ(point->note, "");
        // Every rank ends the collective after it reached it (the last at 10 (p - 1) ns).
        for (double t : f.rank_finish_us) EXPECT_GE(t, 0.0);
        if (!s.messages.empty()) {
          EXPECT_GT(f.program_time_us, 0.01 * (p - 1));
        }
      }
    }
  }
  EXPECT_EQ(archives, 2 * kCollectiveOpCount);
}

TEST(Otf2Collectives, SubCommunicatorsSelfAndCollectivesInARow) {
  Otf2TestArchive a(ScratchPath("otf2_coll_comms"), 4);
  const OTF2_CommRef odd = a.AddComm("odd", {3, 1});
  const OTF2_CommRef self = a.AddSelfComm("MPI_COMM_SELF");
  for (int r = 0; r < 4; ++r) {
    OTF2_EvtWriter* w = a.Events(r);
    uint64_t t = 0;
    for (int k = 0; k < 3; ++k) {  // three world allreduces of 800 bytes
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t++);
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t++, OTF2_COLLECTIVE_OP_ALLREDUCE,
                                      Otf2TestArchive::kWorld, 0, 4 * 800, 4 * 800);
    }
    if (r % 2 == 1) {  // a bcast of 1000 bytes from comm rank 0 (world rank 3) on "odd"
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t++);
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t++, OTF2_COLLECTIVE_OP_BCAST, odd, 0,
                                      r == 3 ? 2000 : 0, 1000);
    }
    OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t++);  // each rank alone: no message
    OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t++, OTF2_COLLECTIVE_OP_BARRIER, self, 0, 0, 0);
  }
  Result<PointResult> point = RunPoint(Otf2Config(a.Close(), A::kRecursiveDoubling));
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  // 3 allreduces x (4 ranks x 2 rounds) of 800 bytes, and the bcast on 2 ranks.
  const CollSchedule bcast = BuildSchedule(Op::kBcast, A::kRecursiveDoubling, 2, 0, {1000, {}});
  EXPECT_EQ(point->workload.collectives, 3 + 1 + 4);
  EXPECT_EQ(point->workload.replayed_messages, 3 * 8 + static_cast<int64_t>(bcast.messages.size()));
  EXPECT_EQ(point->workload.replayed_bytes, 3 * 8 * 800 + bcast.total_bytes());
  EXPECT_EQ(point->note, "");
}

// A member leaves a collective only once its own messages are delivered: in a binomial
// bcast of 64 KiB from rank 0, the leaves finish after the data crossed the network.
TEST(Otf2Collectives, MembersLeaveAfterTheirMessages) {
  Otf2TestArchive a(ScratchPath("otf2_coll_leave"), 4);
  for (int r = 0; r < 4; ++r) {
    OTF2_EvtWriter_MpiCollectiveBegin(a.Events(r), nullptr, 0);
    OTF2_EvtWriter_MpiCollectiveEnd(a.Events(r), nullptr, 1, OTF2_COLLECTIVE_OP_BCAST,
                                    Otf2TestArchive::kWorld, 0, r == 0 ? 4 * 65536 : 0, 65536);
  }
  Result<PointResult> point = RunPoint(Otf2Config(a.Close(), A::kBinomial));
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  const std::vector<double>& t = point->workload.rank_finish_us;
  ASSERT_EQ(t.size(), 4u);
  // 16384 flits per step of the tree at one flit per cycle (1 GHz): the root sends to rank 2,
  // then to rank 1 while rank 2 forwards to rank 3. A sender leaves when its last message is
  // delivered.
  const double step = 16.384;
  EXPECT_GE(t[1], 2 * step);
  EXPECT_GE(t[3], 2 * step);
  EXPECT_LT(t[3], 2 * step + 1);
  EXPECT_DOUBLE_EQ(t[2], t[3]);
  EXPECT_DOUBLE_EQ(t[0], t[1]);
}

}  // namespace
}  // namespace ukai::sim
