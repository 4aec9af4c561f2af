// SimFabric's driver over a scripted network (docs/sim-module.md): once only runtimes whose
// node failed are left, nothing can observe the network and the driver stops advancing it,
// even while the network is still busy; a runtime joining on a node that already failed is
// stopped at once; a wait whose check raced with a dispatch holds the
// simulation for one more round.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "rt/modules/sim/sim_fabric.h"
#include "rt_test_util.h"

namespace ukai::rt::testing {
namespace {

// A network that is never idle (a packet that can never be delivered) and counts its steps.
class BusyNetwork final : public SimNetwork {
 public:
  BusyNetwork(std::shared_ptr<std::atomic<int64_t>> cycle, std::vector<NodeFailure> failures)
      : cycle_(std::move(cycle)), failures_(std::move(failures)) {}
  int nodes() const override { return 4; }
  double clock_mhz() const override { return 1000; }
  int64_t now() const override { return cycle_->load(); }
  std::vector<NodeFailure> node_failures() const override { return failures_; }
  void Add(int, int, int64_t, int64_t, uint64_t) override {}
  bool Busy() const override { return true; }
  Status Skip(int64_t to) override {
    cycle_->store(to);
    return Status::Ok();
  }
  Status Step(std::vector<SimArrival>*) override {
    cycle_->fetch_add(1);
    return Status::Ok();
  }

 private:
  std::shared_ptr<std::atomic<int64_t>> cycle_;
  std::vector<NodeFailure> failures_;
};

struct NullMember final : SimMember {
  void Arrive(ByteBlock&&, std::shared_ptr<SimInFlight>) override {}
  void Kick() override {}
  void PeerGone(RuntimeId, bool, const Status&) override {}
  void Stopped(const Status&) override { stopped = true; }
  std::atomic<bool> stopped{false};
};

Result<std::shared_ptr<SimFabric>> FabricWhoseNode1FailsAtCycle10(
    std::shared_ptr<std::atomic<int64_t>> cycle) {
  return SimFabric::Create(
      std::make_unique<BusyNetwork>(cycle, std::vector<SimNetwork::NodeFailure>{{1, 10}}),
      SimFabricOptions{});
}

TEST(SimFabric, StopsSteppingWhenOnlyFailedRuntimesRemain) {
  auto cycle = std::make_shared<std::atomic<int64_t>>(0);
  auto fabric = FabricWhoseNode1FailsAtCycle10(cycle);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  NullMember on_node0, on_node1;
  ASSERT_TRUE((*fabric)->Join(100, &on_node0).ok());
  ASSERT_TRUE((*fabric)->Join(101, &on_node1).ok());
  // Node 1 fails at cycle 10; the network runs on for the runtime on node 0.
  ASSERT_TRUE(WaitFor([&] { return on_node1.stopped.load() && cycle->load() > 20; }))
      << "node 1 stopped: " << on_node1.stopped.load() << ", cycle " << cycle->load()
      << ", fabric: " << (*fabric)->status().ToString();
  EXPECT_FALSE(on_node0.stopped.load());
  (*fabric)->Leave(100);
  // Only the stopped runtime is left: the network must stand still.
  const int64_t c0 = cycle->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cycle->load(), c0) << "the driver kept stepping a network nobody can observe";
  EXPECT_TRUE((*fabric)->status().ok()) << (*fabric)->status().ToString();
  (*fabric)->Leave(101);
}

// A runtime that joins after its node failed (the network ran past the failure before it
// joined) is stopped at once: the failure is not skipped for it.
TEST(SimFabric, JoiningAfterTheNodeFailedStopsAtOnce) {
  auto cycle = std::make_shared<std::atomic<int64_t>>(0);
  auto fabric = FabricWhoseNode1FailsAtCycle10(cycle);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  NullMember on_node0, on_node1;
  ASSERT_TRUE((*fabric)->Join(100, &on_node0).ok());
  ASSERT_TRUE(WaitFor([&] { return cycle->load() > 20; }));
  EXPECT_FALSE(on_node1.stopped.load());
  ASSERT_TRUE((*fabric)->Join(101, &on_node1).ok());
  EXPECT_TRUE(on_node1.stopped.load()) << "joined on a node that failed at cycle 10";
  EXPECT_FALSE((*fabric)->Has(101));
  EXPECT_FALSE(on_node0.stopped.load());
  (*fabric)->Leave(100);
  (*fabric)->Leave(101);
}

// A program thread waits: it checks its condition, then tells the fabric it is idle. A frame
// dispatched between the check and the idle call (seq moved on) may have made the condition
// true unseen, so that idle call must not let the network run: only a second one, with
// nothing dispatched in between, does. (Without it the thread's next send could be stamped
// with a later clock, depending on thread timing: runs differed under load.)
TEST(SimFabric, AWaitThatRacedWithADispatchHoldsOneMoreRound) {
  auto cycle = std::make_shared<std::atomic<int64_t>>(0);
  SimFabricOptions options;
  options.cpu_scale = 0;  // only communication moves the clocks
  auto fabric = SimFabric::Create(
      std::make_unique<BusyNetwork>(cycle, std::vector<SimNetwork::NodeFailure>{}), options);
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  NullMember member;
  ASSERT_TRUE((*fabric)->Join(100, &member).ok());
  SimFabric& f = **fabric;
  f.ThreadCall(100, "SendRsr");  // this thread holds the simulation (where it got to)
  const int64_t held = cycle->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(cycle->load(), held);
  f.Dispatched(100, 0);           // a dispatch on another thread, racing with the check
  f.ThreadIdle(100, "Progress");  // the check before it did not see what it did
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(cycle->load(), held) << "the network ran on after a wait that may have missed a "
                                    "dispatch";
  f.ThreadIdle(100, "Progress");  // a full round with nothing new: now it waits
  EXPECT_TRUE(WaitFor([&] { return cycle->load() > held; }));
  f.Leave(100);
}

}  // namespace
}  // namespace ukai::rt::testing
