// Collectives between processes: a representative slice of the matrix (coll_matrix.h) over
// shm (4 processes; with GroupOptions::single_copy_oversubscribed on and off) and tcp (3)
// under `ukai launch`, and over the mpi module under
// `mpirun -n 3`; a member killed (SIGKILL) during an allreduce under `ukai launch
// --keep-going` (shm, tcp): every other member's allreduce completes with kUnavailable naming
// it, and the survivors Shrink and go on; likewise a member killed between two allreduces
// done in shared slots (shm): the others' next one must not wait on its slot for ever.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <tuple>

#include "coll_matrix.h"
#include "mpi_run.h"
#include "rt/coll/group_state.h"
#include "rt/launch/launcher.h"

namespace ukai::rt {
namespace {

using testing::Case;

constexpr ContextId kCtx = 1;

std::string Mode() {
  const char* m = std::getenv("UKAI_COLL_ITEST");
  return m == nullptr ? "" : m;
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Each collective with kAuto, its first and its last algorithm; 1, 7 and 40000 elements (the
// largest over the rendezvous size); one reduction type per element size; point-to-point
// relayed around the ring; a split.
void RunSlice(Group& w) {
  std::vector<Case> cases;
  for (Collective c : testing::kAllCollectives) {
    std::vector<Algorithm> algs = AlgorithmsFor(c);
    for (Algorithm alg : {Algorithm::kAuto, algs.front(), algs.back()}) {
      for (uint64_t count : {1, 7, 40000}) {
        if (c == Collective::kBarrier && count != 1) continue;
        if (testing::Reduces(c)) {
          cases.push_back({c, alg, DataType::kDouble, ReduceOp::kSum, count});
          cases.push_back({c, alg, DataType::kInt32, ReduceOp::kMin, count});
        } else {
          cases.push_back({c, alg, DataType::kByte, ReduceOp::kSum, count});
          cases.push_back({c, alg, DataType::kInt64, ReduceOp::kSum, count});
        }
      }
    }
  }
  for (const Case& c : cases) testing::RunCase(w, c);
  const int n = w.size(), r = w.rank();
  CollOptions relay;
  relay.algorithm = Algorithm::kRelay;
  std::vector<int64_t> msg(200000, r), got(200000, -1);
  CollRequest q = w.IRecv(got, (r + n - 1) % n, 3);
  ASSERT_TRUE(w.Send(msg, (r + 1) % n, 3, relay).ok());
  ASSERT_TRUE(q.WaitFor(testing::kWait).ok()) << q.status().ToString();
  EXPECT_EQ(got[199999], (r + n - 1) % n);
  auto half = w.Split(r % 2, r);
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  int32_t one = 1, sum = 0;
  ASSERT_TRUE((*half)
                  ->Allreduce(ConstView(&one, 1, DataType::kInt32),
                              MutView(&sum, 1, DataType::kInt32), ReduceOp::kSum)
                  .ok());
  EXPECT_EQ(sum, (n + (r % 2 == 0 ? 1 : 0)) / 2);
  ASSERT_TRUE(w.Barrier().ok());
}

// Modes "slice" (default options) and "slice-cma" (single_copy_oversubscribed). Large
// rooted steps between processes are shared copies (process_vm_readv/writev) unless the
// group outnumbers its CPUs and the option is off: then they come through the shm pool.
TEST(CollWorker, Slice) {
  if (Mode() != "slice" && Mode() != "slice-cma") GTEST_SKIP() << "run by CollMultiProcess";
  int argc = 1;
  char arg0[] = "worker";
  char* argv[] = {arg0, nullptr};
  auto rt = Runtime::Init(argc, argv);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  auto ctx = (*rt)->CreateContext({.name = "coll", .id = kCtx});
  ASSERT_TRUE(ctx.ok());
  GroupOptions go;
  go.single_copy_oversubscribed = Mode() == "slice-cma";
  auto w = Group::World(**ctx, go);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  RunSlice(**w);
  const internal::CollCounters& c = (*w)->state()->counters();
  const uint64_t shared = c.shared_reads.load() + c.shared_writes.load();
  if ((*w)->module() == "shm") {
    const bool pool_only = (*w)->state()->oversubscribed() && Mode() == "slice";
    EXPECT_EQ(shared == 0, pool_only) << "shared copies " << shared << ", oversubscribed "
                                      << (*w)->state()->oversubscribed() << ", " << Mode();
  }
  w->reset();
  EXPECT_TRUE((*rt)->Finalize().ok());
}

// One process of the killed-member tests: its runtime, context and world group.
struct KillWorker {
  bool Start() {
    int argc = 1;
    char arg0[] = "worker";
    char* argv[] = {arg0, nullptr};
    auto made = Runtime::Init(argc, argv);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (!made.ok()) return false;
    rt = std::move(*made);
    auto ctx = rt->CreateContext({.name = "coll", .id = kCtx});
    EXPECT_TRUE(ctx.ok());
    if (!ctx.ok()) return false;
    auto w = Group::World(**ctx);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return false;
    world = std::move(*w);
    return true;
  }
  // Ends the runtime (Finalize may report frames the dead member never took) and, when this
  // rank saw what it should, says so in a file: the launcher sees only exit codes, and
  // --keep-going ignores the survivors'.
  void Finish(int rank) {
    world.reset();
    (void)rt->Finalize();
    if (!::testing::Test::HasFailure()) {
      std::ofstream(std::string(std::getenv("UKAI_COLL_ITEST_DIR")) + "/rank" +
                    std::to_string(rank) + ".ok")
          << "ok\n";
    }
  }
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Group> world;
};

// Mode "kill": the ring; "kill-auto": the automatic choice (over shm with 4 members, relay
// with each part in one piece).
TEST(CollWorker, KilledDuringAllreduce) {
  if (Mode() != "kill" && Mode() != "kill-auto") GTEST_SKIP() << "run by CollMultiProcess";
  KillWorker job;
  ASSERT_TRUE(job.Start());
  Group& w = *job.world;
  const int rank = w.rank();
  ASSERT_TRUE(w.Barrier().ok());
  std::vector<double> in(1 << 19, w.rank() + 1.0), out(in.size());
  CollOptions ring;
  ring.algorithm = Mode() == "kill" ? Algorithm::kRing : Algorithm::kAuto;
  if (w.rank() == 2) {
    CollRequest q = w.IAllreduce(in, out, ReduceOp::kSum, ring);  // its first messages leave
    ::raise(SIGKILL);
  }
  const Status st = w.Allreduce(in, out, ReduceOp::kSum, ring);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("group member 2 (runtime"), std::string::npos) << st.ToString();
  EXPECT_EQ(w.FailedMembers(), std::vector<int>{2});
  auto survivors = w.Shrink();
  ASSERT_TRUE(survivors.ok()) << survivors.status().ToString();
  EXPECT_EQ((*survivors)->size(), 3);
  ASSERT_TRUE((*survivors)->Allreduce(in, out, ReduceOp::kSum, ring).ok());
  EXPECT_EQ(out[12345], 1.0 + 2.0 + 4.0);
  survivors->reset();
  job.Finish(rank);
}

TEST(CollWorker, KilledBetweenSlotAllreduces) {
  if (Mode() != "slot-kill") GTEST_SKIP() << "run by CollMultiProcess";
  KillWorker job;
  ASSERT_TRUE(job.Start());
  Group& w = *job.world;
  const int rank = w.rank();
  ASSERT_TRUE(w.shared_slots());
  double in = rank + 1.0, out = 0;
  const ConstView i(&in, 1, DataType::kDouble);
  const MutView o(&out, 1, DataType::kDouble);
  for (int k = 0; k < 100; ++k) {
    ASSERT_TRUE(w.Allreduce(i, o, ReduceOp::kSum).ok());
    ASSERT_EQ(out, 10.0);
  }
  if (rank == 2) ::raise(SIGKILL);
  const Status st = w.Allreduce(i, o, ReduceOp::kSum);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("group member 2 (runtime"), std::string::npos) << st.ToString();
  EXPECT_EQ(w.Barrier().code(), StatusCode::kUnavailable);
  EXPECT_EQ(w.FailedMembers(), std::vector<int>{2});
  EXPECT_EQ(w.state()->counters().slot_ops.load(), 100u);
  auto survivors = w.Shrink();
  ASSERT_TRUE(survivors.ok()) << survivors.status().ToString();
  EXPECT_TRUE((*survivors)->shared_slots());
  ASSERT_TRUE((*survivors)->Allreduce(i, o, ReduceOp::kSum).ok());
  EXPECT_EQ(out, 1.0 + 2.0 + 4.0);
  survivors->reset();
  job.Finish(rank);
}

TEST(CollMultiProcess, SliceOverShmAndTcp) {
  for (auto [module, n, mode] : {std::tuple<const char*, int, const char*>{"shm", 4, "slice"},
                                 {"shm", 4, "slice-cma"},
                                 {"tcp", 3, "slice"}}) {
    ::setenv("UKAI_COLL_ITEST", mode, 1);
    LaunchOptions o;
    o.processes = n;
    o.modules = {module};
    o.timeout_s = 240;
    o.command = {SelfExe(), "--gtest_filter=CollWorker.Slice"};
    Result<int> code = Launch(o);
    ::unsetenv("UKAI_COLL_ITEST");
    ASSERT_TRUE(code.ok()) << code.status().ToString();
    EXPECT_EQ(*code, 0) << module << " " << mode;
  }
}

// Launches `worker` (a CollWorker test) as 4 processes over `module` with --keep-going and
// mode `mode`; rank 2 kills itself: the job ends with its SIGKILL and every other rank left
// a file saying it saw what it should.
void LaunchWithAKilledMember(const std::string& mode, const std::string& module,
                             const std::string& worker) {
  const std::string dir =
      "/tmp/ukai_coll_" + mode + "_" + std::to_string(::getpid()) + "_" + module;
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  ::setenv("UKAI_COLL_ITEST", mode.c_str(), 1);
  ::setenv("UKAI_COLL_ITEST_DIR", dir.c_str(), 1);
  LaunchOptions o;
  o.processes = 4;
  o.modules = {module};
  o.keep_going = true;
  o.timeout_s = 120;
  o.command = {SelfExe(), "--gtest_filter=CollWorker." + worker};
  Result<int> code = Launch(o);
  ::unsetenv("UKAI_COLL_ITEST");
  ::unsetenv("UKAI_COLL_ITEST_DIR");
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 128 + SIGKILL) << module;
  for (int rank : {0, 1, 3}) {
    EXPECT_TRUE(std::ifstream(dir + "/rank" + std::to_string(rank) + ".ok").good())
        << module << ": rank " << rank << " did not finish";
  }
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(CollMultiProcess, MemberKilledDuringAllreduce) {
  for (const char* module : {"shm", "tcp"}) {
    LaunchWithAKilledMember("kill", module, "KilledDuringAllreduce");
  }
  LaunchWithAKilledMember("kill-auto", "shm", "KilledDuringAllreduce");
}

TEST(CollMultiProcess, MemberKilledBetweenSlotAllreduces) {
  LaunchWithAKilledMember("slot-kill", "shm", "KilledBetweenSlotAllreduces");
}

#if UKAI_HAVE_MPI
TEST(MpiWorker, CollSlice) {
  if (std::getenv("UKAI_MPI_ITEST_WORKER") == nullptr) GTEST_SKIP() << "run by MpiTest";
  RuntimeOptions o;
  o.bootstrap = "mpi";
  o.modules = {"mpi"};
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  auto ctx = (*rt)->CreateContext({.name = "coll", .id = kCtx});
  ASSERT_TRUE(ctx.ok());
  auto w = Group::World(**ctx);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ((*w)->module(), "mpi");
  RunSlice(**w);
  w->reset();
  EXPECT_TRUE((*rt)->Finalize().ok());
}

TEST(MpiTest, CollectivesSlice) { testing::RunUnderMpirun(3, "MpiWorker.CollSlice"); }
#endif

}  // namespace
}  // namespace ukai::rt
