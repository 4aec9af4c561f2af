// Fast defaults: a program thread that drives progress itself (Runtime::Progress() in its
// wait loop) takes over from the progress thread, which steps aside instead of polling
// beside it; processes are pinned one per core under `ukai launch` (PinCpu), or always with
// --ukai-pin=core.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rt/core/runtime_impl.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

TEST(FastDefaults, ProgressThreadStepsAsideWhileTheProgramDrivesProgress) {
  auto fabric = NewInprocFabric();
  RuntimeOptions o = ModuleOptions("inproc", fabric);
  ASSERT_TRUE(o.progress_thread);  // the default
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok());
  auto ctx = (*rt)->CreateContext({.name = "c"});
  Endpoint* ep = *(*ctx)->CreateEndpoint();
  std::atomic<int> got{0}, on_caller{0};
  const std::thread::id me = std::this_thread::get_id();
  ASSERT_TRUE(ep->RegisterHandler("n", HandlerKind::kNonThreaded, [&](Rsr&) {
                  if (std::this_thread::get_id() == me) ++on_caller;
                  ++got;
                }).ok());
  // Drive progress for a while: the progress thread sees it and steps aside.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) (*rt)->Progress();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE((*rt)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("n")).ok());
    const int want = i + 1;
    while (got.load() < want) (*rt)->Progress();
  }
  // All but the first few (before the thread noticed) ran on this thread.
  EXPECT_GE(on_caller.load(), 190) << "handlers ran on the progress thread beside the caller";
  // Once the program stops driving progress, the thread takes over again.
  const int before = on_caller.load();
  ASSERT_TRUE((*rt)->SendRsr(Buffer(), ep->MakeStartpoint(), HandlerId::Of("n")).ok());
  ASSERT_TRUE(WaitFor([&] { return got.load() == 201; }));
  EXPECT_EQ(on_caller.load(), before);
  EXPECT_TRUE((*rt)->Finalize().ok());
}

TEST(FastDefaults, PinCpuPlacesLaunchedRanksOnePerCore) {
  const std::vector<int> cpus = {2, 3, 5};
  EXPECT_EQ(internal::PinCpu("auto", "launcher", 0, 2, cpus), 2);
  EXPECT_EQ(internal::PinCpu("auto", "launcher", 1, 2, cpus), 3);
  EXPECT_EQ(internal::PinCpu("auto", "launcher", 2, 3, cpus), 5);
  EXPECT_EQ(internal::PinCpu("auto", "launcher", 0, 4, cpus), -1);  // more ranks than CPUs
  EXPECT_EQ(internal::PinCpu("auto", "single", 0, 1, cpus), -1);    // not launched
  EXPECT_EQ(internal::PinCpu("auto", "mpi", 0, 2, cpus), -1);       // mpirun binds itself
  EXPECT_EQ(internal::PinCpu("core", "single", 4, 1, cpus), 3);     // 4 % 3
  EXPECT_EQ(internal::PinCpu("off", "launcher", 0, 2, cpus), -1);
}

// Pollers yield at once only in a job with more processes on this host than it has CPUs
// (else after 50 us of idleness, CallerIdle); a job spread over hosts is not counted.
TEST(FastDefaults, OversubscribedCountsTheJobAgainstTheHostsCpus) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  EXPECT_FALSE(internal::Oversubscribed(/*one_host=*/true, 1));
  EXPECT_FALSE(internal::Oversubscribed(true, static_cast<int>(cpus)));
  EXPECT_TRUE(internal::Oversubscribed(true, static_cast<int>(cpus) + 1));
  EXPECT_FALSE(internal::Oversubscribed(/*one_host=*/false, static_cast<int>(cpus) + 1));
}

TEST(FastDefaults, PinCoreRestrictsTheProcessToOneCpu) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  RuntimeOptions o = ModuleOptions("inproc", nullptr);
  o.pin = "core";
  auto rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status().ToString();
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE((*rt)->Finalize().ok());
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  o.pin = "sometimes";
  EXPECT_EQ(Runtime::Init(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ukai::rt::testing
