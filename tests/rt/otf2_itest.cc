// OTF2 recording end to end (docs/otf2-recording.md): the SPMD ring and the key-value store
// examples recorded over shm by `ukai launch --otf2` (rt::Launch, as the command runs it), a
// program given --ukai-otf2 under `ukai launch` without --otf2 and alone (rank 0 merges in
// Finalize), and two ranks under mpirun with the mpi module. Each archive is read by
// `otf2-print` (its exit status and its event lines counted) and by libotf2's reader
// (otf2_read.h): ranks, locations, every message received exactly once, time order. Also the
// launcher's errors before any process starts.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "mpi_run.h"
#include "otf2_read.h"
#include "rt/launch/launcher.h"
#include "rt/trace/archive.h"
#include "rt_test_util.h"
#include "scratch_path.h"
#include "ukai/ukai.hpp"

namespace ukai::rt {
namespace {

using testing::Otf2Trace;

// Runs otf2-print on `anchor`; returns its exit status and the count of each event name.
int Otf2Print(const std::string& anchor, std::map<std::string, int>* events) {
  const std::string out = anchor + ".print";
  const int rc = std::system(("otf2-print " + anchor + " > " + out + " 2>&1").c_str());
  std::ifstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const std::string word = line.substr(0, line.find(' '));
    if (word.starts_with("MPI_") || word.starts_with("RMA_")) ++(*events)[word];
  }
  std::remove(out.c_str());
  return rc;
}

class Otf2LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::ScratchPath(
        "otf2it_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The archive read back, with the checks every recording must pass.
  Otf2Trace ReadChecked(size_t ranks) {
    Otf2Trace t = testing::ReadOtf2(trace::AnchorPath(dir_));
    EXPECT_TRUE(t.ok) << t.error;
    EXPECT_EQ(t.comm_locations.size(), ranks);
    EXPECT_EQ(testing::CheckOrder(t), "");
    EXPECT_EQ(testing::Messages(t, true), testing::Messages(t, false))
        << "a message sent was not received exactly once";
    EXPECT_FALSE(std::filesystem::exists(trace::PartsDir(dir_)));
    return t;
  }
  std::string dir_;
};

TEST_F(Otf2LaunchTest, LaunchRecordsTheRingOverShm) {
  LaunchOptions o;
  o.processes = 3;
  o.modules = {"shm"};
  o.otf2 = dir_;
  o.timeout_s = 60;
  o.command = {UKAI_EXAMPLE_SPMD_RING, "50"};
  Result<int> code = Launch(o);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  ASSERT_EQ(*code, 0);
  Otf2Trace t = ReadChecked(3);
  EXPECT_EQ(t.locations.size(), 6u);  // main + the ring context per rank
  // 50 laps of 3 hops; rank 0's main sends the first token, the contexts the rest.
  EXPECT_EQ(t.Count("MpiSend"), 150u);
  EXPECT_EQ(t.Count("MpiIrecv"), 150u);
  EXPECT_EQ(t.Count("MpiCollectiveEnd"), 6u);  // two barriers per rank
  std::map<std::string, int> printed;
  ASSERT_EQ(Otf2Print(trace::AnchorPath(dir_), &printed), 0);
  EXPECT_EQ(printed["MPI_SEND"], 150);
  EXPECT_EQ(printed["MPI_IRECV"], 150);
  EXPECT_EQ(printed["MPI_COLLECTIVE_END"], 6);
}

TEST_F(Otf2LaunchTest, LaunchRecordsTheKeyValueStoreOverShm) {
  LaunchOptions o;
  o.processes = 3;
  o.modules = {"shm"};
  o.otf2 = dir_;
  o.timeout_s = 60;
  o.command = {UKAI_EXAMPLE_KV_STORE, "60"};
  Result<int> code = Launch(o);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  ASSERT_EQ(*code, 0);
  Otf2Trace t = ReadChecked(3);
  // Every request is answered (kv.gte by a refusal): as many sends as receives, half of them
  // answers posted as the requests left.
  EXPECT_GT(t.Count("MpiSend"), 3u * 60u * 2u);
  EXPECT_EQ(t.Count("MpiSend"), t.Count("MpiIrecv"));
  std::map<std::string, int> printed;
  ASSERT_EQ(Otf2Print(trace::AnchorPath(dir_), &printed), 0);
  EXPECT_EQ(printed["MPI_SEND"], static_cast<int>(t.Count("MpiSend")));
}

TEST_F(Otf2LaunchTest, ProgramOptionUnderLaunchMergesOnRankZero) {
  LaunchOptions o;
  o.processes = 2;
  o.modules = {"shm"};
  o.timeout_s = 60;
  o.command = {UKAI_EXAMPLE_SPMD_RING, "20", "--ukai-otf2=" + dir_};
  Result<int> code = Launch(o);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  ASSERT_EQ(*code, 0);
  Otf2Trace t = ReadChecked(2);
  EXPECT_EQ(t.Count("MpiSend"), 40u);
}

TEST_F(Otf2LaunchTest, ProcessAloneRecordsItself) {
  // No launcher, no MPI: the "single" bootstrap; the token travels from rank 0 to itself.
  const std::string cmd = "env -u UKAI_BOOTSTRAP -u UKAI_LAUNCH_ADDR " +
                          std::string(UKAI_EXAMPLE_SPMD_RING) + " 10 --ukai-otf2=" + dir_ +
                          " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Otf2Trace t = ReadChecked(1);
  EXPECT_EQ(t.Count("MpiSend"), 10u);
  std::map<std::string, int> printed;
  ASSERT_EQ(Otf2Print(trace::AnchorPath(dir_), &printed), 0);
  EXPECT_EQ(printed["MPI_SEND"], 10);
}

TEST_F(Otf2LaunchTest, LaunchRefusesABadDirectoryBeforeAnyProcessStarts) {
  const std::string marker = dir_ + "_started";
  LaunchOptions o;
  o.processes = 2;
  o.command = {"/bin/sh", "-c", "touch " + marker};
  std::filesystem::create_directories(dir_);
  std::ofstream(trace::AnchorPath(dir_)) << "earlier";
  o.otf2 = dir_;
  Result<int> code = Launch(o);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(code.status().message().find("already holds an OTF2 archive"), std::string::npos)
      << code.status().ToString();
  o.otf2 = trace::AnchorPath(dir_) + "/sub";  // below a regular file: cannot be created
  code = Launch(o);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), StatusCode::kIoError) << code.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a process ran";
  // A job that records nothing (no ukai program): the merge's error is the launcher's.
  std::filesystem::remove_all(dir_);
  o.otf2 = dir_;
  code = Launch(o);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), StatusCode::kNotFound) << code.status().ToString();
  std::filesystem::remove(marker);
}

// Worker of KeepGoingMergesTheSurvivors: every rank talks to the others; rank 1 is killed
// after the start-up; ranks 0 and 2 go on and finalize (their parts complete).
TEST(Otf2Worker, RankOneDies) {
  const char* role = std::getenv("UKAI_OTF2_ITEST_ROLE");
  if (role == nullptr || std::string(role) != "keep_going") GTEST_SKIP() << "run by Otf2LaunchTest";
  std::atomic<int> hellos{0};
  std::atomic<bool> dead{false};
  RuntimeOptions base;
  base.on_peer_event = [&](const PeerEvent&) { dead = true; };
  int argc = 1;
  char arg0[] = "worker";
  char* argv[] = {arg0, nullptr};
  auto made = Runtime::Init(argc, argv, base);  // UKAI_OTF2 from ukai launch --otf2
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Runtime& r = **made;
  ASSERT_TRUE(r.CreateContext({.id = 1,
                               .init = [&](Context& c) -> Status {
                                 auto ep = c.CreateEndpoint({1});
                                 if (!ep.ok()) return ep.status();
                                 return (*ep)
                                     ->RegisterHandler("hello", HandlerKind::kNonThreaded,
                                                       [&](Rsr&) { ++hellos; })
                                     .status();
                               }})
                  .ok());
  ASSERT_TRUE(r.Barrier().ok());
  for (int peer = 0; peer < r.size(); ++peer) {
    if (peer == r.rank()) continue;
    ASSERT_TRUE(r.SendRsr(Buffer(), *r.WorldStartpoint(peer, 1, 1), HandlerId::Of("hello")).ok());
  }
  ASSERT_TRUE(testing::WaitFor([&] { return hellos.load() == r.size() - 1; }));
  ASSERT_TRUE(r.Barrier().ok());
  if (r.rank() == 1) ::raise(SIGKILL);
  ASSERT_TRUE(testing::WaitFor([&] { return dead.load(); }));
  ASSERT_TRUE(r.Finalize().ok());
}

TEST_F(Otf2LaunchTest, KeepGoingMergesTheSurvivors) {
  setenv("UKAI_OTF2_ITEST_ROLE", "keep_going", 1);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  LaunchOptions o;
  o.processes = 3;
  o.modules = {"shm"};
  o.keep_going = true;
  o.otf2 = dir_;
  o.timeout_s = 60;
  o.command = {std::string(exe, static_cast<size_t>(n)), "--gtest_filter=Otf2Worker.RankOneDies"};
  Result<int> code = Launch(o);
  unsetenv("UKAI_OTF2_ITEST_ROLE");
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 128 + SIGKILL);
  Otf2Trace t = testing::ReadOtf2(trace::AnchorPath(dir_));
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.comm_locations.size(), 3u);  // the dead rank keeps its place
  EXPECT_EQ(t.properties["UKAI::MISSING_RANKS"], "1");
  EXPECT_EQ(t.locations[1].events.size(), 0u);
  EXPECT_EQ(testing::CheckOrder(t), "");
  // The survivors' hellos to each other and to rank 1 were recorded (2 each), and the
  // receives of those from each other (rank 1's sends died with it).
  EXPECT_EQ(t.Count("MpiSend"), 4u);
  EXPECT_EQ(t.Count("MpiIrecv"), 4u);  // from each other and from rank 1
  std::map<std::string, int> printed;
  EXPECT_EQ(Otf2Print(trace::AnchorPath(dir_), &printed), 0);
}

#if UKAI_HAVE_MPI

// Worker under mpirun: two ranks over the mpi module exchange RSRs and requests, meet in a
// barrier and finalize; rank 0 merges the archive named by UKAI_OTF2.
TEST(MpiWorker, Otf2Recording) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  ASSERT_TRUE(ApplyRuntimeEnv(&o).ok());  // UKAI_OTF2
  ASSERT_FALSE(o.otf2.empty());
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  Runtime& r = **rt;
  std::atomic<int> got{0};
  auto ctx = r.CreateContext(
      {.name = "w", .id = 1, .init = [&](Context& c) {
         auto ep = c.CreateEndpoint({.id = 1});
         if (!ep.ok()) return ep.status();
         auto a = (*ep)->RegisterHandler("n", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; });
         auto b =
             (*ep)->RegisterHandler("q", HandlerKind::kThreaded, [](Rsr& m) { m.Reply(Buffer()); });
         return a.ok() && b.ok() ? Status::Ok() : Status::Internal("reg");
       }});
  ASSERT_TRUE(ctx.ok());
  ASSERT_TRUE(r.Barrier().ok());
  auto peer = r.WorldStartpoint(1 - r.rank(), 1, 1);
  ASSERT_TRUE(peer.ok());
  for (int i = 0; i < 20; ++i) {
    Buffer b;
    b.PutU32(static_cast<uint32_t>(i));
    ASSERT_TRUE(r.SendRsr(std::move(b), *peer, HandlerId::Of("n")).ok());
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(r.Request(Buffer(), *peer, HandlerId::Of("q")).Wait().ok());
  }
  ASSERT_TRUE(testing::WaitFor([&] { return got.load() == 20; }));
  ASSERT_TRUE(r.Barrier().ok());
  ASSERT_TRUE(r.Finalize().ok());
}

TEST_F(Otf2LaunchTest, MpirunRecordsTwoRanksOverTheMpiModule) {
  testing::RunUnderMpirun(2, "MpiWorker.Otf2Recording", "UKAI_OTF2=" + dir_);
  Otf2Trace t = ReadChecked(2);
  EXPECT_EQ(t.Count("MpiSend"), 2u * (20 + 5 + 5));  // RSRs, requests, answers
  EXPECT_EQ(t.Count("MpiCollectiveEnd"), 4u);
  std::map<std::string, int> printed;
  ASSERT_EQ(Otf2Print(trace::AnchorPath(dir_), &printed), 0);
  EXPECT_EQ(printed["MPI_SEND"], 60);
}

#endif  // UKAI_HAVE_MPI

}  // namespace
}  // namespace ukai::rt
