// SimFabric's driver over a scripted network (docs/sim-module.md, "Faults"): once only
// runtimes whose node failed are left, nothing can observe the network and the driver stops
// advancing it, even while the network is still busy.
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
  explicit BusyNetwork(std::shared_ptr<std::atomic<int64_t>> cycle) : cycle_(std::move(cycle)) {}
  int nodes() const override { return 4; }
  double clock_mhz() const override { return 1000; }
  int64_t now() const override { return cycle_->load(); }
  std::vector<NodeFailure> node_failures() const override { return {{1, 10}}; }
  void Add(int, int, int64_t, int64_t, uint64_t) override {}
  bool Busy() const override { return true; }
  void Skip(int64_t to) override { cycle_->store(to); }
  Status Step(std::vector<SimArrival>*) override {
    cycle_->fetch_add(1);
    return Status::Ok();
  }

 private:
  std::shared_ptr<std::atomic<int64_t>> cycle_;
};

struct NullMember final : SimMember {
  void Arrive(ByteBlock&&, std::shared_ptr<SimInFlight>) override {}
  void PeerGone(RuntimeId, bool, const Status&) override {}
  void Stopped(const Status&) override { stopped = true; }
  std::atomic<bool> stopped{false};
};

TEST(SimFabric, StopsSteppingWhenOnlyFailedRuntimesRemain) {
  auto cycle = std::make_shared<std::atomic<int64_t>>(0);
  auto fabric = SimFabric::Create(std::make_unique<BusyNetwork>(cycle), SimFabricOptions{});
  ASSERT_TRUE(fabric.ok()) << fabric.status().ToString();
  NullMember on_node0, on_node1;
  ASSERT_TRUE((*fabric)->Join(100, &on_node0).ok());
  ASSERT_TRUE((*fabric)->Join(101, &on_node1).ok());
  // Node 1 fails at cycle 10; the network runs on for the runtime on node 0.
  ASSERT_TRUE(WaitFor([&] { return on_node1.stopped.load() && cycle->load() > 20; }));
  EXPECT_FALSE(on_node0.stopped.load());
  (*fabric)->Leave(100);
  // Only the stopped runtime is left: the network must stand still.
  const int64_t c0 = cycle->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cycle->load(), c0) << "the driver kept stepping a network nobody can observe";
  EXPECT_TRUE((*fabric)->status().ok()) << (*fabric)->status().ToString();
  (*fabric)->Leave(101);
}

}  // namespace
}  // namespace ukai::rt::testing
