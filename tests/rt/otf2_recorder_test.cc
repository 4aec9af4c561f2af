// The OTF2 recorder and the merge (src/rt/trace/), without a runtime: two "processes" (two
// recorders of ranks 0 and 1 in one directory) record, finish and are merged; the archive is
// read back with libotf2's reader (otf2_read.h) and checked: locations, location groups,
// communicator and groups, the RMA window, the clock, each location's events in order with
// non-decreasing timestamps, the posted-receive scheme of contexts, answers completed or
// cancelled once, peers outside the job, and the errors before a run (a directory that cannot
// be written, an existing archive, a leftover part) and of the merge (no part, a missing rank,
// a part that is not ours).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "gtest/gtest.h"
#include "otf2_read.h"
#include "rt/trace/archive.h"
#include "rt/trace/recorder.h"
#include "scratch_path.h"

namespace ukai::rt::trace {
namespace {

using rt::testing::Otf2Trace;
using rt::testing::ReadOtf2;

constexpr RuntimeId kA = 0xaaaa, kB = 0xbbbb, kStranger = 0x5555;
constexpr uint32_t kTag = 77;

class Otf2RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::ScratchPath(
        "otf2_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Recorder> Open(int rank, const std::string& host = "h") {
    Result<std::unique_ptr<Recorder>> r = Recorder::Open({dir_, rank, 2, {kA, kB}, host});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : nullptr;
  }
  static Status Sent() { return Status::Ok(); }
  std::string dir_;
};

TEST_F(Otf2RecorderTest, LocationsDefinitionsAndEventOrder) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* ctx = r1->OpenContext(7, "server");  // rank 1, slot 1
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->id(), LocationId(1, 1));
  EXPECT_EQ(r0->main()->id(), 0u);
  // rank 0 main sends; rank 1's context handles it and answers; the request completes.
  ASSERT_TRUE(
      r0->SendAndRecord(r0->main(), kB, kWorldComm, kTag, 100, Sent, 5 | kAnswerRequestBit).ok());
  r1->HandlerStart(ctx, kA, kTag, 100);
  ASSERT_TRUE(r1->SendAndRecord(ctx, kA, kAnswerComm, AnswerTag(5), 8, Sent).ok());
  r1->HandlerEnd(ctx);
  r0->CompleteReceive(r0->main(), 5 | kAnswerRequestBit, kB, kAnswerComm, AnswerTag(5), 8);
  r0->BarrierBegin(r0->main());
  r1->BarrierBegin(r1->main());
  r0->BarrierEnd(r0->main());
  r1->BarrierEnd(r1->main());
  // A failed send records nothing.
  EXPECT_FALSE(r0->SendAndRecord(r0->main(), kB, kWorldComm, kTag, 1, [] {
                   return Status::Unavailable("x");
                 }).ok());
  r1->CloseContext(ctx);
  ASSERT_TRUE(r0->Finish().ok());
  ASSERT_TRUE(r1->Finish().ok());
  Result<MergeReport> m = MergeArchive(dir_, 2);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ranks, 2);
  EXPECT_EQ(m->locations, 3u);
  EXPECT_TRUE(m->missing_ranks.empty());
  EXPECT_FALSE(std::filesystem::exists(PartsDir(dir_)));  // the parts are gone

  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.resolution, 1000000000u);
  ASSERT_EQ(t.locations.size(), 3u);
  EXPECT_EQ(t.locations[0].name, "rank 0 main");
  EXPECT_EQ(t.locations[1].name, "rank 1 main");
  EXPECT_EQ(t.locations[LocationId(1, 1)].name, "rank 1 context 7 'server'");
  EXPECT_EQ(t.locations[LocationId(1, 1)].group, 1u);
  EXPECT_EQ(t.groups[0], "rank 0");
  EXPECT_EQ(t.comm_locations, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(t.comm_group, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(t.comms[kWorldComm], "MPI_COMM_WORLD");
  EXPECT_EQ(t.comms[kAnswerComm], "ukai answers");
  EXPECT_EQ(t.rma_windows[kRmaWindow], kWorldComm);
  for (const auto& [id, l] : t.locations) EXPECT_EQ(l.clock_offsets, 1) << id;  // one host: 0
  EXPECT_EQ(rt::testing::CheckOrder(t), "");

  const auto kinds = [&](uint64_t loc) {
    std::vector<std::string> k;
    for (const auto& e : t.locations[loc].events) k.push_back(e.kind);
    return k;
  };
  EXPECT_EQ(kinds(0), (std::vector<std::string>{"MpiSend", "MpiIrecvRequest", "MpiIrecv",
                                                "MpiCollectiveBegin", "MpiCollectiveEnd"}));
  EXPECT_EQ(kinds(LocationId(1, 1)),
            (std::vector<std::string>{"MpiIrecvRequest", "MpiIrecv", "MpiSend", "MpiIrecvRequest",
                                      "MpiRequestCancelled"}));
  const auto& e0 = t.locations[0].events;
  EXPECT_EQ(e0[0].peer, 1u);
  EXPECT_EQ(e0[0].tag, kTag);
  EXPECT_EQ(e0[0].bytes, 100u);
  EXPECT_EQ(e0[1].request, 5 | kAnswerRequestBit);
  EXPECT_EQ(e0[2].request, 5 | kAnswerRequestBit);
  EXPECT_EQ(e0[2].peer, 1u);
  EXPECT_EQ(e0[0].comm, kWorldComm);  // the request: tag = handler; its answer: its own envelope
  EXPECT_EQ(e0[2].comm, kAnswerComm);
  EXPECT_EQ(e0[2].tag, AnswerTag(5));
  EXPECT_EQ(e0[4].op, static_cast<uint32_t>(OTF2_COLLECTIVE_OP_BARRIER));
  EXPECT_EQ(e0[4].root, static_cast<uint32_t>(OTF2_COLLECTIVE_ROOT_NONE));
  const auto& ec = t.locations[LocationId(1, 1)].events;
  EXPECT_EQ(ec[1].request, ec[0].request);  // the posted receive completes
  EXPECT_EQ(ec[2].comm, kAnswerComm);       // the answer: the envelope the requester posted
  EXPECT_EQ(ec[2].tag, AnswerTag(5));
  EXPECT_EQ(ec[4].request, ec[3].request);  // the next one is cancelled at the close
  EXPECT_EQ(rt::testing::Messages(t, true), rt::testing::Messages(t, false));
}

TEST_F(Otf2RecorderTest, ManyThreadsKeepEachLocationInTimeOrder) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* ctx = r0->OpenContext(1, "c");
  constexpr int kThreads = 4, kEach = 20000;  // more than the 1 MiB a location buffers
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Location* loc = i % 2 == 0 ? r0->main() : ctx;
      for (int k = 0; k < kEach; ++k) {
        ASSERT_TRUE(r0->SendAndRecord(loc, kB, kWorldComm, kTag + i, k, Sent).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(r0->Finish().ok());
  ASSERT_TRUE(r1->Finish().ok());
  ASSERT_TRUE(MergeArchive(dir_, 2).ok());
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(rt::testing::CheckOrder(t), "");
  EXPECT_EQ(t.Count("MpiSend"), size_t{kThreads} * kEach);
  // Each thread's own sends keep their order (the k-th send has length k).
  std::map<uint32_t, uint64_t> next;
  for (const auto& [id, l] : t.locations) {
    for (const auto& e : l.events) {
      if (e.kind != "MpiSend") continue;
      EXPECT_EQ(e.bytes, next[e.tag]) << "tag " << e.tag;
      next[e.tag] = e.bytes + 1;
    }
  }
}

TEST_F(Otf2RecorderTest, OverlappingHandlersPostTheirOwnReceives) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* ctx = r0->OpenContext(1, "c");  // posts 1
  r0->HandlerStart(ctx, kB, kTag, 1);       // completes 1
  r0->HandlerStart(ctx, kB, kTag, 2);       // overlapping: posts 2 and completes it at once
  r0->HandlerEnd(ctx);                      // posts 3
  r0->HandlerEnd(ctx);                      // posts 4
  r0->HandlerStart(ctx, kB, kTag, 3);       // completes 3 (FIFO)
  r0->HandlerEnd(ctx);                      // posts 5
  ASSERT_TRUE(r0->Finish().ok());           // cancels 4 and 5
  ASSERT_TRUE(r1->Finish().ok());
  ASSERT_TRUE(MergeArchive(dir_, 2).ok());
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const auto& e : t.locations[LocationId(0, 1)].events) got.emplace_back(e.kind, e.request);
  const std::vector<std::pair<std::string, uint64_t>> want = {
      {"MpiIrecvRequest", 1},    {"MpiIrecv", 1},        {"MpiIrecvRequest", 2},
      {"MpiIrecv", 2},           {"MpiIrecvRequest", 3}, {"MpiIrecvRequest", 4},
      {"MpiIrecv", 3},           {"MpiIrecvRequest", 5}, {"MpiRequestCancelled", 4},
      {"MpiRequestCancelled", 5}};
  EXPECT_EQ(got, want);
}

TEST_F(Otf2RecorderTest, AnswersCompleteOrCancelOnceAndStrangersAreCounted) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* m = r0->main();
  const uint64_t a = 1 | kAnswerRequestBit, b = 2 | kAnswerRequestBit;
  ASSERT_TRUE(r0->SendAndRecord(m, kB, kWorldComm, kTag, 1, Sent, a).ok());
  ASSERT_TRUE(r0->SendAndRecord(m, kB, kWorldComm, kTag, 1, Sent, b).ok());
  r0->CompleteReceive(m, a, kB, kAnswerComm, AnswerTag(1), 4);
  r0->CancelReceive(m, a);  // answered already: nothing
  r0->CancelReceive(m, b);
  r0->CompleteReceive(m, b, kB, kAnswerComm, AnswerTag(2), 4);  // cancelled already: nothing
  r0->CancelReceive(m, 3 | kAnswerRequestBit);                  // never posted: nothing
  ASSERT_TRUE(r0->SendAndRecord(m, kStranger, kWorldComm, kTag, 1, Sent).ok());  // outside the job
  r0->Arrival(m, kStranger, kWorldComm, kTag, 1);
  r0->Arrival(m, kB, kWorldComm, kTag, 9);  // a frame nobody expected: posted and completed at once
  EXPECT_EQ(r0->RmaIssue(m, RmaKind::kPut, kStranger, 8, 0), 0u);
  EXPECT_EQ(r0->stats().unrecorded, 3u);
  ASSERT_TRUE(r0->Finish().ok());
  ASSERT_TRUE(r1->Finish().ok());
  Result<MergeReport> rep = MergeArchive(dir_, 2);
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->unrecorded, 3u);
  EXPECT_NE(Describe(*rep).find("3 messages with runtimes outside the job"), std::string::npos);
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.properties["UKAI::UNRECORDED"], "3");
  std::vector<std::string> kinds;
  for (const auto& e : t.locations[0].events) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"MpiSend", "MpiIrecvRequest", "MpiSend",
                                             "MpiIrecvRequest", "MpiIrecv", "MpiRequestCancelled",
                                             "MpiIrecvRequest", "MpiIrecv"}));
}

TEST_F(Otf2RecorderTest, RmaOperationsAndTheirCompletions) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* m = r0->main();
  const uint64_t put = r0->RmaIssue(m, RmaKind::kPut, kB, 4096, 0);
  const uint64_t get = r0->RmaIssue(m, RmaKind::kGet, kB, 0, 100);
  const uint64_t cas =
      r0->RmaIssue(m, RmaKind::kAtomic, kB, 16, 8, OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP);
  ASSERT_TRUE(put != 0 && get != 0 && cas != 0 && put != get && get != cas);
  r0->RmaComplete(m, get, false);
  r0->RmaComplete(m, put, false);
  r0->RmaComplete(m, cas, true);
  ASSERT_TRUE(r0->Finish().ok());
  ASSERT_TRUE(r1->Finish().ok());
  ASSERT_TRUE(MergeArchive(dir_, 2).ok());
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  const auto& e = t.locations[0].events;
  ASSERT_EQ(e.size(), 6u);
  EXPECT_EQ(e[0].kind, "RmaPut");
  EXPECT_EQ(e[0].bytes, 4096u);
  EXPECT_EQ(e[0].peer, 1u);
  EXPECT_EQ(e[1].kind, "RmaGet");
  EXPECT_EQ(e[1].bytes, 100u);
  EXPECT_EQ(e[2].kind, "RmaAtomic");
  EXPECT_EQ(e[2].op, static_cast<uint32_t>(OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP));
  EXPECT_EQ(e[2].bytes, 16u);
  EXPECT_EQ(e[2].bytes2, 8u);
  EXPECT_EQ(e[3].kind, "RmaOpCompleteNonBlocking");
  EXPECT_EQ(e[3].request, get);
  EXPECT_EQ(e[5].kind, "RmaOpCompleteBlocking");
  EXPECT_EQ(e[5].request, cas);
}

TEST_F(Otf2RecorderTest, EventsAfterFinishOrCloseAreIgnored) {
  auto r0 = Open(0), r1 = Open(1);
  ASSERT_TRUE(r0 && r1);
  Location* ctx = r0->OpenContext(1, "c");
  r0->CloseContext(ctx);
  r0->HandlerStart(ctx, kB, kTag, 1);  // closed: ignored
  ASSERT_TRUE(r0->Finish().ok());
  EXPECT_TRUE(r0->Finish().ok());  // idempotent
  EXPECT_EQ(r0->OpenContext(2, "late"), nullptr);
  ASSERT_TRUE(
      r0->SendAndRecord(r0->main(), kB, kWorldComm, kTag, 1, Sent).ok());  // sent, not recorded
  ASSERT_TRUE(r1->Finish().ok());
  ASSERT_TRUE(MergeArchive(dir_, 2).ok());
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.locations[LocationId(0, 1)].events.size(), 2u);  // posted, cancelled
  EXPECT_EQ(t.Count("MpiSend"), 0u);
}

// ---- bad input ----

TEST_F(Otf2RecorderTest, DirectoryThatCannotBeWrittenIsAClearError) {
  // A regular file where the directory's parent should be: refused for root too.
  const std::string file = dir_ + "_file";
  std::ofstream(file) << "x";
  Result<std::unique_ptr<Recorder>> r = Recorder::Open({file + "/sub", 0, 1, {kA}, "h"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find(file + "/sub"), std::string::npos) << r.status().ToString();
  Status s = PrepareArchiveDir(file, true);  // the file itself
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(file + ": cannot create it: Not a directory"), std::string::npos)
      << s.ToString();
  std::filesystem::remove(file);
  if (::geteuid() != 0) {  // permissions bind only non-root users
    std::filesystem::create_directories(dir_ + "/ro");
    ::chmod((dir_ + "/ro").c_str(), 0500);
    Status ro = PrepareArchiveDir(dir_ + "/ro", true);
    EXPECT_FALSE(ro.ok());
    EXPECT_NE(ro.message().find("not writable"), std::string::npos) << ro.ToString();
    ::chmod((dir_ + "/ro").c_str(), 0700);
  }
  Result<std::unique_ptr<Recorder>> empty = Recorder::Open({"", 0, 1, {kA}, "h"});
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  Result<std::unique_ptr<Recorder>> rank = Recorder::Open({dir_, 3, 2, {kA, kB}, "h"});
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(Otf2RecorderTest, ExistingArchiveOrLeftoverPartIsAClearError) {
  std::filesystem::create_directories(dir_);
  std::ofstream(AnchorPath(dir_)) << "not ours";
  Result<std::unique_ptr<Recorder>> r = Recorder::Open({dir_, 0, 1, {kA}, "h"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("already holds an OTF2 archive"), std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(MergeArchive(dir_, 1).ok());  // nor is one merged over it
  std::filesystem::remove(AnchorPath(dir_));
  {
    auto first = Open(0);  // a part of rank 0 now exists
    ASSERT_TRUE(first);
    Result<std::unique_ptr<Recorder>> again = Recorder::Open({dir_, 0, 2, {kA, kB}, "h"});
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.status().message().find("rank-0"), std::string::npos)
        << again.status().ToString();
  }
  Status s = PrepareArchiveDir(dir_, /*no_parts=*/true);  // what `ukai launch --otf2` checks
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("traces.parts exists"), std::string::npos) << s.ToString();
}

TEST_F(Otf2RecorderTest, MergeReportsMissingRanksAndRejectsForeignParts) {
  EXPECT_EQ(MergeArchive(dir_, 2).status().code(), StatusCode::kNotFound);  // no part at all
  {
    auto r1 = Open(1);
    ASSERT_TRUE(r1);
    ASSERT_TRUE(r1->SendAndRecord(r1->main(), kA, kWorldComm, kTag, 3, Sent).ok());
    ASSERT_TRUE(r1->Finish().ok());
  }  // rank 0 never finishes a part (it died)
  Result<MergeReport> m = MergeArchive(dir_, 2);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->missing_ranks, std::vector<int>{0});
  EXPECT_NE(Describe(*m).find("no part from rank 0"), std::string::npos);
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.comm_locations, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(t.locations[0].events.size(), 0u);  // an empty main location stands for rank 0
  EXPECT_EQ(t.properties["UKAI::MISSING_RANKS"], "0");
  EXPECT_EQ(t.Count("MpiSend"), 1u);

  // A part file that is not an OTF2 anchor: an error naming it, no archive.
  const std::string other = dir_ + "/other";
  std::filesystem::create_directories(PartsDir(other));
  std::ofstream(PartAnchorPath(other, 0)) << "garbage";
  Result<MergeReport> bad = MergeArchive(other, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(PartAnchorPath(other, 0)), std::string::npos)
      << bad.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(AnchorPath(other)));
}

TEST_F(Otf2RecorderTest, PartsFromTwoHostsGetClockOffsets) {
  auto r0 = Open(0, "host-a"), r1 = Open(1, "host-b");
  ASSERT_TRUE(r0 && r1);
  ASSERT_TRUE(r0->Finish().ok());
  ASSERT_TRUE(r1->Finish().ok());
  Result<MergeReport> m = MergeArchive(dir_, 2);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->hosts, 2);
  Otf2Trace t = ReadOtf2(AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.locations[0].clock_offsets, 1);
  EXPECT_EQ(t.locations[1].clock_offsets, 1);
}

}  // namespace
}  // namespace ukai::rt::trace
