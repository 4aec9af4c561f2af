// The OTF2 reader and replay (sim/workload/otf2_archive.h, otf2_replay.h) on archives the
// test writes with libotf2 (otf2_writer.h): the reader's definitions, locations and events
// (against otf2-print's count), point-to-point matching in MPI order, eager and rendezvous,
// every collective with every algorithm replaying its schedule's messages and bytes, compute
// time, rank maps, RMA, a rank's thread locations, unmodelled events counted by name, and
// clear errors for bad archives (missing, not OTF2, truncated, corrupt, inconsistent).
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "otf2_writer.h"
#include "scratch_path.h"
#include "sim/experiment/run.h"
#include "sim/sim_test_util.h"
#include "sim/workload/otf2_replay.h"
#include "sim/workload/run_workload.h"
#include "workload_test_util.h"

namespace ukai::sim {
namespace {

using testing::DriveEnd;
using testing::DriveWorkload;
using ukai::testing::Otf2TestArchive;
using ukai::testing_util::ScratchPath;
using W = OTF2_EvtWriter*;
constexpr OTF2_CommRef kWorld = Otf2TestArchive::kWorld;
constexpr double kMhz = 1000;  // one nanosecond tick = one cycle

// ---- Writing events ---------------------------------------------------------------------------

void Send(W w, uint64_t t, uint32_t to, uint32_t tag, uint64_t bytes, OTF2_CommRef c = kWorld) {
  OTF2_EvtWriter_MpiSend(w, nullptr, t, to, c, tag, bytes);
}
void Recv(W w, uint64_t t, uint32_t from, uint32_t tag, uint64_t bytes, OTF2_CommRef c = kWorld) {
  OTF2_EvtWriter_MpiRecv(w, nullptr, t, from, c, tag, bytes);
}
void Isend(W w, uint64_t t, uint32_t to, uint32_t tag, uint64_t bytes, uint64_t req) {
  OTF2_EvtWriter_MpiIsend(w, nullptr, t, to, kWorld, tag, bytes, req);
}
void IrecvRequest(W w, uint64_t t, uint64_t req) {
  OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, req);
}
void Irecv(W w, uint64_t t, uint32_t from, uint32_t tag, uint64_t bytes, uint64_t req) {
  OTF2_EvtWriter_MpiIrecv(w, nullptr, t, from, kWorld, tag, bytes, req);
}
void Coll(W w, uint64_t t, OTF2_CollectiveOp op, uint32_t root, uint64_t sent, uint64_t received,
          OTF2_CommRef c = kWorld) {
  OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
  OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t + 1, op, c, root, sent, received);
}
// A region (Enter at t0, Leave at t1).
void Region(W w, OTF2_RegionRef region, uint64_t t0, uint64_t t1) {
  OTF2_EvtWriter_Enter(w, nullptr, t0, region);
  OTF2_EvtWriter_Leave(w, nullptr, t1, region);
}

// ---- Replaying --------------------------------------------------------------------------------

SimConfig Otf2Config(const std::string& anchor, std::vector<int> k = {4, 4}) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, std::move(k));
  c.router.clock_mhz = kMhz;
  c.workload.kind = WorkloadKind::kOtf2;
  c.workload.file = anchor;
  return c;
}

struct Otf2Run {
  std::unique_ptr<Network> net;
  std::unique_ptr<Otf2Replay> source;
  std::unique_ptr<Workload> workload;
  DriveEnd end = DriveEnd::kError;
  Status status;
};

Otf2Run RunOtf2Replay(const SimConfig& c) {
  Otf2Run r;
  r.net = std::move(Network::Create(c, {}, false)).value();
  Result<std::unique_ptr<Otf2Replay>> s = Otf2Replay::Open(c, r.net->topology(), kMhz);
  if (!s.ok()) {
    r.status = s.status();
    return r;
  }
  r.source = std::move(*s);
  r.source->KeepMatchLog(true);
  WorkloadOptions o = WorkloadOptionsFor(c);
  o.keep_packet_log = true;
  r.workload = std::make_unique<Workload>(o);
  r.workload->AddSource(r.source.get());
  r.end = DriveWorkload(*r.net, *r.workload);
  r.status = r.workload->status();
  return r;
}

// ---- The reader -------------------------------------------------------------------------------

// Events otf2-print lists (one line per event after its column header), -1 when it cannot
// run.
int64_t Otf2PrintEvents(const std::string& anchor) {
  const std::string cmd = "otf2-print '" + anchor + "' 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 4096> line;
  int64_t events = 0;
  bool body = false;
  while (std::fgets(line.data(), line.size(), p) != nullptr) {
    const std::string s(line.data());
    if (s.rfind("-----", 0) == 0) {  // the end of the column header
      body = true;
      continue;
    }
    if (body && !s.empty() && s[0] >= 'A' && s[0] <= 'Z' && s.find(' ') != std::string::npos) {
      ++events;
    }
  }
  return ::pclose(p) == 0 ? events : -1;
}

TEST(Otf2, ReaderReadsDefinitionsLocationsAndEveryEvent) {
  const std::string dir = ScratchPath("otf2_reader");
  Otf2TestArchive a(dir, 3, 1000000);  // microsecond ticks
  const OTF2_CommRef sub = a.AddComm("sub", {2, 0});
  const OTF2_RmaWinRef win = a.AddWindow(sub);
  const int thread = a.AddThread(1);
  Send(a.Events(0), 10, 1, 7, 100);
  Region(a.Events(0), Otf2TestArchive::kCompute, 11, 20);
  Coll(a.Events(0), 30, OTF2_COLLECTIVE_OP_BARRIER, 0, 0, 0, sub);
  Coll(a.Events(2), 30, OTF2_COLLECTIVE_OP_BARRIER, 0, 0, 0, sub);
  OTF2_EvtWriter_RmaPut(a.Events(2), nullptr, 40, win, 1, 64, 5);
  OTF2_EvtWriter_RmaOpCompleteBlocking(a.Events(2), nullptr, 41, win, 5);
  IrecvRequest(a.Events(thread), 5, 1);
  Irecv(a.Events(thread), 12, 0, 7, 100, 1);
  const std::string anchor = a.Close();

  Result<std::unique_ptr<Otf2Archive>> opened = Otf2Archive::Open(anchor);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Otf2Archive& r = **opened;
  EXPECT_EQ(r.ranks(), 3);
  ASSERT_EQ(r.locations(), 4);
  EXPECT_EQ(r.rank_of(3), 1);
  EXPECT_EQ(r.location_ref(3), (uint64_t{1} << 32) | 1);
  EXPECT_EQ(r.timer_resolution(), 1000000u);
  ASSERT_NE(r.FindComm(sub), nullptr);
  EXPECT_EQ(r.FindComm(sub)->members, (std::vector<int>{2, 0}));
  EXPECT_EQ(r.FindComm(kWorld)->members, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*r.WindowComm(win), sub);
  EXPECT_FALSE(r.WindowComm(9).ok());
  EXPECT_TRUE(r.IsMpiRegion(Otf2TestArchive::kMpiSend));
  EXPECT_FALSE(r.IsMpiRegion(Otf2TestArchive::kCompute));

  std::vector<std::vector<Otf2EventKind>> kinds(4);
  int64_t total = 0;
  for (int loc = 0; loc < 4; ++loc) {
    for (;;) {
      Result<const Otf2Event*> e = r.Peek(loc);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      if (*e == nullptr) break;
      kinds[loc].push_back((*e)->kind);
      r.Pop(loc);
      ++total;
    }
    EXPECT_EQ(r.events_read(loc), static_cast<int64_t>(kinds[loc].size()));
  }
  using K = Otf2EventKind;
  EXPECT_EQ(kinds[0], (std::vector<K>{K::kSend, K::kEnter, K::kLeave, K::kCollBegin, K::kCollEnd}));
  EXPECT_TRUE(kinds[1].empty());
  EXPECT_EQ(kinds[2],
            (std::vector<K>{K::kCollBegin, K::kCollEnd, K::kRmaPut, K::kRmaCompleteBlocking}));
  EXPECT_EQ(kinds[3], (std::vector<K>{K::kIrecvRequest, K::kIrecv}));
  const int64_t printed = Otf2PrintEvents(anchor);
  if (printed >= 0) {
    EXPECT_EQ(printed, total) << "otf2-print lists another number of events";
  }
}

TEST(Otf2, ArchiveWithoutMpiGroupHasARankPerThread) {
  const std::string dir = ScratchPath("otf2_nompi");
  Otf2TestArchive a(dir, 2);
  a.WithoutMpiGroup();
  Send(a.Events(0), 1, 1, 0, 8);
  Recv(a.Events(1), 2, 0, 0, 8);
  Result<std::unique_ptr<Otf2Archive>> opened = Otf2Archive::Open(a.Close());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ((*opened)->ranks(), 2);
  EXPECT_EQ((*opened)->FindComm(kWorld)->members, (std::vector<int>{0, 1}));
}

// The committed example archive (tests/data/otf2/README.md) replays what it holds: 4 ranks x
// 8 iterations of one send (every 8th by rendezvous: a request more) and one allreduce.
TEST(Otf2, TheExampleArchiveReplays) {
  SimConfig c = Otf2Config(std::string(UKAI_SOURCE_DIR) + "/tests/data/otf2/ring4/traces.otf2");
  c.workload.collective_algorithm = CollectiveAlgorithm::kRecursiveDoubling;
  Result<PointResult> point = RunPoint(c);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  const WorkloadFigures& f = point->workload;
  EXPECT_EQ(f.ranks, 4);
  EXPECT_EQ(f.p2p_messages, 32);
  EXPECT_EQ(f.collectives, 8);
  EXPECT_EQ(f.replayed_messages, 32 + 4 + 8 * 8);  // sends, rendezvous requests, 4 x 2 rounds
  EXPECT_EQ(f.replayed_bytes, 28 * 4096 + 4 * (100000 + 8) + 8 * 8 * 8);
  EXPECT_EQ(point->note, "");
  EXPECT_GE(f.program_time_us, 8 * 2.0);  // the compute alone
  const int64_t printed = Otf2PrintEvents(c.workload.file);
  if (printed >= 0) {
    EXPECT_EQ(printed, 4 * 8 * 6);
  }
}

// ---- Point-to-point ---------------------------------------------------------------------------

TEST(Otf2, PointToPointMatchesByCommunicatorSourceAndTagInPostOrder) {
  const std::string dir = ScratchPath("otf2_match");
  Otf2TestArchive a(dir, 3);
  const OTF2_CommRef pair = a.AddComm("pair", {2, 1});  // comm rank 0 = world 2
  W r0 = a.Events(0), r1 = a.Events(1), r2 = a.Events(2);
  Send(r0, 10, 1, 5, 100);
  Send(r0, 11, 1, 7, 200);
  Send(r0, 12, 1, 5, 300);
  Send(r2, 10, 1, 5, 400);        // world: another source
  Send(r2, 11, 1, 5, 500, pair);  // same ranks and tag, another communicator
  IrecvRequest(r1, 20, 1);        // posted first, completed last
  Recv(r1, 30, 0, 5, 100);
  Recv(r1, 31, 0, 5, 300);
  Recv(r1, 32, 0, 5, 500, pair);  // comm rank 0 of "pair" = world rank 2
  Recv(r1, 33, 2, 5, 400);
  Irecv(r1, 40, 0, 7, 200, 1);
  Otf2Run run = RunOtf2Replay(Otf2Config(a.Close()));
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.end, DriveEnd::kDone);
  // Per (communicator, source, destination, tag): bytes in the order they matched.
  std::map<std::tuple<uint64_t, int, int, uint32_t>, std::vector<int64_t>> seen;
  for (const auto& m : run.source->match_log())
    seen[{m.comm, m.src, m.dst, m.tag}].push_back(m.bytes);
  using Key = std::tuple<uint64_t, int, int, uint32_t>;
  EXPECT_EQ(seen, (std::map<Key, std::vector<int64_t>>{{{kWorld, 0, 1, 5}, {100, 300}},
                                                       {{kWorld, 0, 1, 7}, {200}},
                                                       {{kWorld, 2, 1, 5}, {400}},
                                                       {{pair, 2, 1, 5}, {500}}}));
  EXPECT_EQ(run.source->p2p_messages(), 5);
  EXPECT_EQ(run.workload->stats().messages_delivered, 5);
  EXPECT_EQ(run.workload->stats().bytes_delivered, 1500);
  // A receive never completes before its message is delivered.
  const auto times = testing::TimesOf(*run.workload);
  int64_t last = 0;
  for (const auto& [id, t] : times) last = std::max(last, t.delivered);
  EXPECT_GE(run.source->finish_cycle(1), last);
}

// Rank 1 posts its receive at 50 us (compute before it); rank 0 sends 100000 bytes at 0.
struct Rendezvous {
  int64_t sender_finish, receiver_finish, messages;
};
Rendezvous RunRendezvous(int64_t eager_bytes) {
  const std::string dir = ScratchPath("otf2_rdv_" + std::to_string(eager_bytes));
  Otf2TestArchive a(dir, 2);
  OTF2_EvtWriter_Enter(a.Events(0), nullptr, 0, Otf2TestArchive::kMpiSend);
  Send(a.Events(0), 0, 1, 3, 100000);
  OTF2_EvtWriter_Leave(a.Events(0), nullptr, 1, Otf2TestArchive::kMpiSend);
  Region(a.Events(1), Otf2TestArchive::kCompute, 0, 50000);
  OTF2_EvtWriter_Enter(a.Events(1), nullptr, 50000, Otf2TestArchive::kMpiRecv);
  Recv(a.Events(1), 90000, 0, 3, 100000);
  OTF2_EvtWriter_Leave(a.Events(1), nullptr, 90001, Otf2TestArchive::kMpiRecv);
  SimConfig c = Otf2Config(a.Close());
  c.workload.eager_bytes = eager_bytes;
  Otf2Run run = RunOtf2Replay(c);
  EXPECT_EQ(run.end, DriveEnd::kDone);
  return {run.source->finish_cycle(0), run.source->finish_cycle(1),
          run.workload->stats().messages_delivered};
}

TEST(Otf2, EagerSendsLeaveAtOnceRendezvousWaitsForTheReceive) {
  const Rendezvous eager = RunRendezvous(1 << 20);
  const Rendezvous rdv = RunRendezvous(65536);
  // Eager: one message; the sender is done at once, the data waits at the receiver.
  EXPECT_EQ(eager.messages, 1);
  EXPECT_LT(eager.sender_finish, 10);
  EXPECT_GE(eager.receiver_finish, 50000);
  EXPECT_LT(eager.receiver_finish, 50000 + 100);  // the data arrived during the compute
  // Rendezvous: a request, then the data once the receive is posted at 50 us; the sender
  // waits for it: 25000 flits of 4 bytes after 50 us.
  EXPECT_EQ(rdv.messages, 2);
  EXPECT_GE(rdv.sender_finish, 50000 + 25000);
  EXPECT_GE(rdv.receiver_finish, rdv.sender_finish);
}

TEST(Otf2, NonBlockingRequestsCompleteAtTheirWait) {
  const std::string dir = ScratchPath("otf2_isend");
  Otf2TestArchive a(dir, 2);
  Isend(a.Events(0), 0, 1, 1, 200000, 9);  // rendezvous: completes when the data is delivered
  Region(a.Events(0), Otf2TestArchive::kCompute, 1, 10000);
  OTF2_EvtWriter_MpiIsendComplete(a.Events(0), nullptr, 10001, 9);
  IrecvRequest(a.Events(1), 0, 4);
  Irecv(a.Events(1), 5, 0, 1, 200000, 4);
  Otf2Run run = RunOtf2Replay(Otf2Config(a.Close()));
  ASSERT_EQ(run.end, DriveEnd::kDone);
  // 50000 flits: the send completes well after its 10 us of compute.
  EXPECT_GE(run.source->finish_cycle(0), 50000);
  EXPECT_EQ(run.source->compute_cycles(0), 10000);
  EXPECT_GE(run.source->finish_cycle(1), 50000);
}

// ---- Threads of a rank (the runtime's contexts) ----------------------------------------------

TEST(Otf2, ThreadLocationsReceiveAndAnswerForTheirRank) {
  const std::string dir = ScratchPath("otf2_threads");
  Otf2TestArchive a(dir, 2);
  const int ctx = a.AddThread(1);
  // Rank 0 sends a request (tag 10) and waits for the answer (tag 11) on its main location.
  Send(a.Events(0), 100, 1, 10, 64);
  IrecvRequest(a.Events(0), 101, uint64_t{1} << 63);
  Irecv(a.Events(0), 5000, 1, 11, 32, uint64_t{1} << 63);
  // Rank 1's context: a posted receive, the handler (2 us), its answer, the next posting.
  IrecvRequest(a.Events(ctx), 0, 1);
  Irecv(a.Events(ctx), 200, 0, 10, 64, 1);
  Send(a.Events(ctx), 2200, 0, 11, 32);
  IrecvRequest(a.Events(ctx), 2201, 2);
  SimConfig c = Otf2Config(a.Close());
  Otf2Run run = RunOtf2Replay(c);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.end, DriveEnd::kDone);
  EXPECT_EQ(run.source->locations(), 3);
  EXPECT_EQ(run.workload->stats().messages_delivered, 2);
  // The answer leaves 2 us after the request arrived; rank 0 waits for it.
  EXPECT_GE(run.source->finish_cycle(0), 100 + 2000);
  Result<PointResult> point = RunPoint(c);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  EXPECT_NE(point->note.find("1 x MpiIrecvRequest never completed"), std::string::npos)
      << point->note;
}

// Two locations of rank 1 post receives of one envelope; the replay walks the thread's first
// (the main location waits for another message), but the main location posted earlier (at
// about cycle 20 against 1000): by MPI's rule the first message sent matches the main
// location's receive.
TEST(Otf2, ReceivesOfSeveralLocationsMatchInTheOrderOfTheirPostCycles) {
  const std::string dir = ScratchPath("otf2_post_order");
  Otf2TestArchive a(dir, 3);
  const int thread = a.AddThread(1);
  Send(a.Events(2), 0, 1, 8, 8);  // lets rank 1's main location go on at about cycle 20
  Region(a.Events(2), Otf2TestArchive::kCompute, 1, 3000);
  Send(a.Events(2), 3000, 0, 9, 8);  // lets rank 0 send at about cycle 3000
  Recv(a.Events(1), 10, 2, 8, 8);
  IrecvRequest(a.Events(1), 11, 1);
  Irecv(a.Events(1), 9000, 0, 5, 100, 1);
  Region(a.Events(thread), Otf2TestArchive::kCompute, 0, 1000);
  IrecvRequest(a.Events(thread), 1000, 1);
  Irecv(a.Events(thread), 9000, 0, 5, 200, 1);
  Recv(a.Events(0), 10, 2, 9, 8);
  Send(a.Events(0), 5000, 1, 5, 100);
  Send(a.Events(0), 5001, 1, 5, 200);
  Otf2Run run = RunOtf2Replay(Otf2Config(a.Close()));
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.end, DriveEnd::kDone);
  std::vector<std::pair<int64_t, int64_t>> tag5;  // (bytes, post cycle) in match order
  for (const auto& m : run.source->match_log()) {
    if (m.tag == 5) tag5.emplace_back(m.bytes, m.posted);
  }
  ASSERT_EQ(tag5.size(), 2u);
  EXPECT_EQ(tag5[0].first, 100);
  EXPECT_LT(tag5[0].second, 1000);  // the main location's receive
  EXPECT_EQ(tag5[1].first, 200);
  EXPECT_EQ(tag5[1].second, 1000);  // the thread's
}

// The runtime's refusal (docs/otf2-recording.md): rank 1's progress location receives rank
// 0's first request (tag 7) before rank 1's context exists and answers it with an error
// (tag 70); rank 0 sends it again, and the context receives that. The progress location
// waits first for a large message from rank 2 that the trace shows arriving 1 ns after it
// left, so in the replay it posts its receive of tag 7 later (by its clock) than the
// context, whose clock has no wait. By the trace the progress location posted first: the
// first request is its, and the replay ends with every message matched. Taken in the
// replayed clocks' order, the context would take the first request, the progress location
// would wait for the second, which rank 0 sends only after the refusal: nobody goes on.
TEST(Otf2, ReceivesOfSeveralLocationsMatchInTheTracesOrderWhenTheirClocksDrift) {
  const std::string dir = ScratchPath("otf2_trace_order");
  Otf2TestArchive a(dir, 3);
  const int progress = a.AddThread(1);
  const int context = a.AddThread(1);
  Send(a.Events(2), 40, 1, 9, 2000);
  IrecvRequest(a.Events(progress), 40, 1);
  Irecv(a.Events(progress), 41, 2, 9, 2000, 1);
  IrecvRequest(a.Events(progress), 150, 2);
  Irecv(a.Events(progress), 150, 0, 7, 8, 2);
  Send(a.Events(progress), 151, 0, 70, 40);  // the refusal
  Region(a.Events(1), Otf2TestArchive::kCompute, 0, 1);
  IrecvRequest(a.Events(context), 160, 1);
  Irecv(a.Events(context), 2300, 0, 7, 16, 1);
  Send(a.Events(context), 2301, 0, 71, 4);  // its answer
  Send(a.Events(0), 100, 1, 7, 8);
  IrecvRequest(a.Events(0), 101, uint64_t{1} << 63);
  Irecv(a.Events(0), 200, 1, 70, 40, uint64_t{1} << 63);
  Send(a.Events(0), 2200, 1, 7, 16);  // again
  IrecvRequest(a.Events(0), 2201, (uint64_t{1} << 63) + 1);
  Irecv(a.Events(0), 2400, 1, 71, 4, (uint64_t{1} << 63) + 1);
  SimConfig c = Otf2Config(a.Close());
  Otf2Run run = RunOtf2Replay(c);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.end, DriveEnd::kDone);
  std::vector<std::pair<int64_t, int64_t>> tag7;  // (bytes, post cycle) in match order
  for (const auto& m : run.source->match_log()) {
    if (m.tag == 7) tag7.emplace_back(m.bytes, m.posted);
  }
  ASSERT_EQ(tag7.size(), 2u);
  EXPECT_EQ(tag7[0].first, 8);   // the progress location's receive ...
  EXPECT_EQ(tag7[1].first, 16);  // ... and the context's
  EXPECT_EQ(tag7[1].second, 160);
  EXPECT_GT(tag7[0].second, 160);  // the drift this test is about
  Result<PointResult> point = RunPoint(c);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  EXPECT_EQ(point->note, "");
}

// ---- Compute time ------------------------------------------------------------------------------

TEST(Otf2, ComputeTraceReplaysTheGapsNoneOnlyCommunication) {
  const std::string dir = ScratchPath("otf2_compute");
  Otf2TestArchive a(dir, 2);
  Region(a.Events(0), Otf2TestArchive::kCompute, 0, 100000);  // 100 us
  Send(a.Events(0), 100001, 1, 0, 8);
  OTF2_EvtWriter_Enter(a.Events(1), nullptr, 10, Otf2TestArchive::kMpiRecv);
  Recv(a.Events(1), 100500, 0, 0, 8);  // waiting inside MPI_Recv: not compute
  OTF2_EvtWriter_Leave(a.Events(1), nullptr, 100501, Otf2TestArchive::kMpiRecv);
  const std::string anchor = a.Close();
  SimConfig c = Otf2Config(anchor);
  Result<PointResult> trace = RunPoint(c);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  c.workload.compute = ComputeMode::kNone;
  Result<PointResult> none = RunPoint(c);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  const WorkloadFigures& t = trace->workload;
  const WorkloadFigures& n = none->workload;
  ASSERT_EQ(t.rank_finish_us.size(), 2u);
  EXPECT_GE(t.rank_finish_us[0], 100.0);
  EXPECT_GT(t.rank_finish_us[1], 100.0);
  EXPECT_LT(t.rank_finish_us[1], 101.0);
  EXPECT_NEAR(t.rank_communication_us[0], 0.001, 0.0015);  // the send's nanosecond
  EXPECT_DOUBLE_EQ(t.program_time_us, t.rank_finish_us[1]);
  EXPECT_LT(n.program_time_us, 0.5);  // one 8-byte message on a 4x4 mesh
  EXPECT_GT(n.program_time_us, 0.0);
  EXPECT_EQ(t.replayed_messages, 1);
  EXPECT_EQ(t.replayed_bytes, 8);
  EXPECT_EQ(t.ranks, 2);
}

// ---- Rank maps ---------------------------------------------------------------------------------

TEST(Otf2, RankMapsLinearRandomAndList) {
  const std::string dir = ScratchPath("otf2_map");
  Otf2TestArchive a(dir, 5);
  for (int r = 0; r < 5; ++r) Coll(a.Events(r), 0, OTF2_COLLECTIVE_OP_BARRIER, 0, 0, 0);
  const std::string anchor = a.Close();
  SimConfig c = Otf2Config(anchor, {4, 4});
  auto topo = std::move(Network::Create(c, {}, false)).value();
  auto nodes = [&](const SimConfig& cfg) {
    auto r = std::move(Otf2Replay::Open(cfg, topo->topology(), kMhz)).value();
    std::vector<int> n;
    for (int i = 0; i < r->ranks(); ++i) n.push_back(r->node_of(i));
    return n;
  };
  EXPECT_EQ(nodes(c), (std::vector<int>{0, 1, 2, 3, 4}));
  c.workload.rank_map = NodeMapKind::kRandom;
  const std::vector<int> random = nodes(c);
  EXPECT_EQ(std::set<int>(random.begin(), random.end()).size(), 5u);
  EXPECT_EQ(nodes(c), random) << "the same seed draws the same map";
  std::set<std::vector<int>> maps;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    c.seed = seed;
    maps.insert(nodes(c));
  }
  EXPECT_GT(maps.size(), 1u) << "the map depends on the seed";
  c.workload.rank_map = NodeMapKind::kList;
  c.workload.rank_list = {15, 3, 7, 0, 9};
  EXPECT_EQ(nodes(c), (std::vector<int>{15, 3, 7, 0, 9}));
  Result<PointResult> point = RunPoint(c);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  EXPECT_EQ(point->workload.replayed_messages, 4 * 2 + 2);  // recursive doubling on 5

  c.workload.rank_list = {1, 2};
  Result<std::unique_ptr<Otf2Replay>> short_list = Otf2Replay::Open(c, topo->topology(), kMhz);
  ASSERT_FALSE(short_list.ok());
  EXPECT_NE(short_list.status().message().find("workload.rank_map"), std::string::npos);
  c.workload.rank_list = {1, 2, 3, 4, 16};
  Result<std::unique_ptr<Otf2Replay>> outside = Otf2Replay::Open(c, topo->topology(), kMhz);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("node 16"), std::string::npos);
  SimConfig small = Otf2Config(anchor, {2, 2});
  Result<PointResult> too_many = RunPoint(small);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("5 ranks but the network has only 4"),
            std::string::npos)
      << too_many.status().message();
}

// ---- RMA and unmodelled events -----------------------------------------------------------------

TEST(Otf2, RmaOperationsBecomeTheirMessages) {
  const std::string dir = ScratchPath("otf2_rma");
  Otf2TestArchive a(dir, 2);
  const OTF2_RmaWinRef win = a.AddWindow(kWorld);
  W r0 = a.Events(0);
  OTF2_EvtWriter_RmaWinCreate(r0, nullptr, 0, win);
  OTF2_EvtWriter_RmaPut(r0, nullptr, 1, win, 1, 1000, 1);
  OTF2_EvtWriter_RmaOpCompleteBlocking(r0, nullptr, 2, win, 1);
  OTF2_EvtWriter_RmaGet(r0, nullptr, 3, win, 1, 2000, 2);
  OTF2_EvtWriter_RmaOpCompleteBlocking(r0, nullptr, 4, win, 2);
  OTF2_EvtWriter_RmaAtomic(r0, nullptr, 5, win, 1, OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD, 8, 8, 3);
  OTF2_EvtWriter_RmaOpCompleteNonBlocking(r0, nullptr, 6, win, 3);
  OTF2_EvtWriter_RmaCollectiveBegin(r0, nullptr, 7);
  OTF2_EvtWriter_RmaCollectiveEnd(r0, nullptr, 8, OTF2_COLLECTIVE_OP_BARRIER,
                                  OTF2_RMA_SYNC_LEVEL_MEMORY, win, 0, 0, 0);
  OTF2_EvtWriter_RmaCollectiveBegin(a.Events(1), nullptr, 7);
  OTF2_EvtWriter_RmaCollectiveEnd(a.Events(1), nullptr, 8, OTF2_COLLECTIVE_OP_BARRIER,
                                  OTF2_RMA_SYNC_LEVEL_MEMORY, win, 0, 0, 0);
  SimConfig c = Otf2Config(a.Close());
  Result<PointResult> point = RunPoint(c);
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  const WorkloadFigures& f = point->workload;
  EXPECT_EQ(f.rma_operations, 3);
  EXPECT_EQ(f.collectives, 1);
  // put 1; get 2; atomic 2; barrier on 2 ranks by recursive doubling 2.
  EXPECT_EQ(f.replayed_messages, 1 + 2 + 2 + 2);
  const int64_t ctl = c.workload.control_bytes;
  EXPECT_EQ(f.replayed_bytes, 1000 + (ctl + 2000) + (8 + 8) + 2 * ctl);
  EXPECT_EQ(point->note, "");
}

TEST(Otf2, EventsNotModelledAreCountedByName) {
  const std::string dir = ScratchPath("otf2_unmodelled");
  Otf2TestArchive a(dir, 1);
  W r0 = a.Events(0);
  OTF2_EvtWriter_ProgramBegin(r0, nullptr, 0, 0, 0, nullptr);
  OTF2_EvtWriter_ThreadFork(r0, nullptr, 1, OTF2_PARADIGM_OPENMP, 4);
  OTF2_EvtWriter_ThreadJoin(r0, nullptr, 2, OTF2_PARADIGM_OPENMP);
  OTF2_EvtWriter_ThreadFork(r0, nullptr, 3, OTF2_PARADIGM_OPENMP, 4);
  OTF2_EvtWriter_MeasurementOnOff(r0, nullptr, 4, OTF2_MEASUREMENT_ON);
  OTF2_EvtWriter_IoSeek(r0, nullptr, 5, 0, 0, OTF2_IO_SEEK_FROM_START, 0);
  OTF2_EvtWriter_ProgramEnd(r0, nullptr, 6, 0);
  Otf2Run run = RunOtf2Replay(Otf2Config(a.Close()));
  ASSERT_EQ(run.end, DriveEnd::kDone);
  EXPECT_EQ(run.source->unmodelled(),
            (std::map<std::string, int64_t>{{"IoSeek", 1}, {"ThreadFork", 2}, {"ThreadJoin", 1}}));
  WorkloadFigures f;
  std::vector<std::string> notes;
  run.source->Report(*run.workload, {run.net->now(), kMhz, true}, &f, &notes);
  EXPECT_EQ(f.unmodelled_events, R"({"IoSeek": 1, "ThreadFork": 2, "ThreadJoin": 1})");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2 ThreadFork"), std::string::npos);
}

// ---- Errors ------------------------------------------------------------------------------------

Status OpenAndRun(const SimConfig& c) {
  Result<PointResult> r = RunPoint(c);
  return r.ok() ? Status::Ok() : r.status();
}

// The event file of `location` in the archive of `anchor`.
std::string EventFile(const std::string& anchor, uint64_t location) {
  return std::filesystem::path(anchor).parent_path().string() + "/traces/" +
         std::to_string(location) + ".evt";
}

std::string WriteSmallArchive(const std::string& name) {
  Otf2TestArchive a(ScratchPath(name), 2);
  for (int i = 0; i < 200; ++i) {
    Send(a.Events(0), 10 * i, 1, 0, 8);
    Recv(a.Events(1), 10 * i + 5, 0, 0, 8);
  }
  return a.Close();
}

TEST(Otf2, BadArchivesGiveClearErrorsNamingTheFile) {
  // Missing, and not an archive.
  Status missing = OpenAndRun(Otf2Config(ScratchPath("no_such_dir/traces.otf2")));
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find("no_such_dir/traces.otf2"), std::string::npos);
  const std::string text = ScratchPath("not_otf2.otf2");
  std::ofstream(text) << "this is not an OTF2 anchor file\n";
  Status not_otf2 = OpenAndRun(Otf2Config(text));
  EXPECT_FALSE(not_otf2.ok());
  EXPECT_NE(not_otf2.message().find(text), std::string::npos) << not_otf2.message();

  // An event file cut short, or overwritten with garbage: an error (or a replay of what
  // could be read), never a crash or a hang. A cut file is refused before libotf2 reads it
  // (it would read past the file's end into memory it did not clear).
  const std::string cut = WriteSmallArchive("otf2_cut");
  const std::string evt = EventFile(cut, 1);
  const auto size = std::filesystem::file_size(evt);
  std::filesystem::resize_file(evt, size / 2);
  Status truncated = OpenAndRun(Otf2Config(cut));
  EXPECT_FALSE(truncated.ok());
  EXPECT_NE(truncated.message().find(cut), std::string::npos) << truncated.message();
  EXPECT_NE(truncated.message().find("1.evt does not end with OTF2's end-of-file record"),
            std::string::npos)
      << truncated.message();
  const std::string bad = WriteSmallArchive("otf2_garbage");
  {
    std::fstream f(EventFile(bad, 0), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    for (int i = 0; i < 512; ++i) f.put(static_cast<char>(0x9d ^ (i * 37)));
  }
  Status corrupt = OpenAndRun(Otf2Config(bad));
  EXPECT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find(bad), std::string::npos) << corrupt.message();
  std::filesystem::remove(EventFile(bad, 0));
  Status no_events = OpenAndRun(Otf2Config(bad));
  EXPECT_FALSE(no_events.ok());
}

TEST(Otf2, InconsistentArchivesStopWithTheLocationAndEvent) {
  auto run = [](auto write) {
    static int n = 0;
    Otf2TestArchive a(ScratchPath("otf2_incons_" + std::to_string(++n)), 2);
    write(a);
    return OpenAndRun(Otf2Config(a.Close()));
  };
  Status undefined_comm = run([](Otf2TestArchive& a) { Send(a.Events(0), 1, 1, 0, 8, 42); });
  EXPECT_EQ(undefined_comm.code(), StatusCode::kParseError);
  EXPECT_NE(undefined_comm.message().find("communicator 42"), std::string::npos);
  EXPECT_NE(undefined_comm.message().find("location 0 (rank 0), event 1"), std::string::npos)
      << undefined_comm.message();
  Status outside = run([](Otf2TestArchive& a) { Send(a.Events(1), 1, 2, 0, 8); });
  EXPECT_NE(outside.message().find("names rank 2 of communicator 'MPI_COMM_WORLD', which has 2"),
            std::string::npos)
      << outside.message();
  Status endless =
      run([](Otf2TestArchive& a) { OTF2_EvtWriter_MpiCollectiveBegin(a.Events(0), nullptr, 1); });
  EXPECT_NE(endless.message().find("never ends"), std::string::npos) << endless.message();
  Status mismatch = run([](Otf2TestArchive& a) {
    Coll(a.Events(0), 1, OTF2_COLLECTIVE_OP_BCAST, 0, 16, 8);
    Coll(a.Events(1), 1, OTF2_COLLECTIVE_OP_REDUCE, 0, 8, 0);
  });
  EXPECT_NE(mismatch.message().find("differs between ranks"), std::string::npos)
      << mismatch.message();
  EXPECT_NE(mismatch.message().find("bcast"), std::string::npos);
  EXPECT_NE(mismatch.message().find("reduce"), std::string::npos);
}

TEST(Otf2, AReceiveThatNeverMatchesEndsTheRunWithANote) {
  Otf2TestArchive a(ScratchPath("otf2_stuck"), 2);
  Send(a.Events(0), 1, 1, 4, 8);
  Recv(a.Events(1), 2, 0, 5, 8);  // another tag: never matched
  Result<PointResult> point = RunPoint(Otf2Config(a.Close()));
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  EXPECT_NE(point->note.find("1 send(s) never matched by a receive, 1 receive(s) never matched"),
            std::string::npos)
      << point->note;
  EXPECT_NE(point->note.find("rank 1 waits for a message from rank 0 (tag 5)"), std::string::npos)
      << point->note;
}

}  // namespace
}  // namespace ukai::sim
