// Determinism of the sim module under host load (docs/sim-module.md, "Conservative
// stepping"): with sim.cpu_scale = 0 and a program without races, every simulated time the
// program reads is the same on every run, whatever the host does meanwhile. Collectives are
// the hard case: their messages are sent from handlers on the progress engine while the
// program threads wait in the runtime, and each member's next step depends on what arrived.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rt_test_util.h"
#include "sim_test_util.h"

namespace ukai::rt::testing {
namespace {

constexpr int kMembers = 8;
constexpr ContextId kContext = 11;

// Threads that spin on the host's cores while they live (host noise: the runtimes' threads
// are descheduled at random points).
class HostNoise {
 public:
  explicit HostNoise(int threads) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        uint64_t x = 1;
        while (!stop_.load(std::memory_order_relaxed)) {
          for (int k = 0; k < 1000; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
          if ((x & 0xff) == 0) std::this_thread::yield();
        }
        sink_.fetch_add(x, std::memory_order_relaxed);
      });
    }
  }
  ~HostNoise() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sink_{0};
  std::vector<std::thread> threads_;
};

// kMembers runtimes on the 4x4 torus of SimTestFabric (process i on node i), each driven by
// one thread from Init to Finalize as the processes of an SPMD program are (a thread holds
// its runtime from Init on: the machine waits for it, so no runtime's clock runs ahead while
// its thread has not started). In a group: a barrier, Allreduce of 4 KiB, Broadcast of 64 KiB
// from rank 3, Allreduce of 64 KiB, Broadcast of 512 B from rank 0, each member reading Now()
// before and after every call. Returns every member's readings (rank-major), with `noise`
// spinning threads beside.
std::vector<int64_t> CollectiveTimes(int noise) {
  std::shared_ptr<SimFabric> fabric = SimTestFabric("", kMembers);
  if (!fabric) return {};
  std::vector<Startpoint> members(kMembers);
  std::vector<std::vector<int64_t>> times(kMembers);
  std::latch started(kMembers);
  std::atomic<int> joined{0};
  HostNoise host_noise(noise);
  std::vector<std::thread> threads;
  for (int r = 0; r < kMembers; ++r) {
    threads.emplace_back([&, r] {
      RuntimeOptions o = ModuleOptions("sim", nullptr);
      o.sim_fabric = fabric;
      // Runtimes join in rank order (the i-th to join is process i, on node i).
      while (joined.load() != r) std::this_thread::yield();
      auto rt = Runtime::Init(o);
      ++joined;
      auto ctx = rt.ok() ? (*rt)->CreateContext({.name = "det", .id = kContext})
                         : Result<Context*>(rt.status());
      if (ctx.ok()) members[r] = Startpoint((*rt)->shared_descriptors(), kContext, 1);
      // Every member's startpoint is known before any uses them (a wait outside the
      // runtime: the machine waits, nothing is in flight).
      started.arrive_and_wait();
      ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
      Runtime& runtime = **rt;
      {
        auto g = Group::FromStartpoints(**ctx, members);
        ASSERT_TRUE(g.ok()) << g.status().ToString();
        Group& group = **g;
        std::vector<double> in(8192, 1.0 + r), out(8192, 0.0);
        auto now = [&] { times[r].push_back(runtime.Now().count()); };
        ASSERT_TRUE(group.Barrier().ok());
        now();
        ASSERT_TRUE(group
                        .Allreduce(std::span<const double>(in.data(), 512),
                                   std::span<double>(out.data(), 512), ReduceOp::kSum)
                        .ok());
        now();
        EXPECT_EQ(out[0], kMembers * (kMembers + 1) / 2.0);
        ASSERT_TRUE(group.Broadcast(std::span<double>(out.data(), 8192), 3).ok());
        now();
        ASSERT_TRUE(group
                        .Allreduce(std::span<const double>(in.data(), 8192),
                                   std::span<double>(out.data(), 8192), ReduceOp::kSum)
                        .ok());
        now();
        ASSERT_TRUE(group.Broadcast(std::span<double>(out.data(), 64), 0).ok());
        now();
        // The group's goodbye before the runtime leaves.
        EXPECT_TRUE(group.Barrier().ok());
      }
      EXPECT_TRUE(runtime.Finalize().ok());
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int64_t> all;
  for (const auto& t : times) all.insert(all.end(), t.begin(), t.end());
  return all;
}

// Without noise, then with two, four and three spinning threads (on the 2-core development
// machine: the runtimes' threads lose their cores at random points): the same times.
TEST(SimDeterminism, CollectivesTakeTheSameSimulatedTimesWhateverTheHostLoad) {
  const std::vector<int64_t> quiet = CollectiveTimes(0);
  ASSERT_EQ(quiet.size(), size_t{kMembers * 5});
  for (int r = 0; r < kMembers; ++r) {
    for (int k = 1; k < 5; ++k) EXPECT_GE(quiet[r * 5 + k], quiet[r * 5 + k - 1]) << r << " " << k;
  }
  for (int noise : {2, 4, 3}) {
    EXPECT_EQ(CollectiveTimes(noise), quiet) << "with " << noise << " spinning threads";
  }
}

}  // namespace
}  // namespace ukai::rt::testing
