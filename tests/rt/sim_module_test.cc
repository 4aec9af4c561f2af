// The sim module against the simulator itself (docs/sim-module.md): exact zero-load
// latency, the link rate, determinism, bad machine configs, stalls and node failures. The
// module conformance suites run over sim through conformance_modules.h.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "rt_test_util.h"
#include "sim_test_util.h"
#include "sim_zero_load.h"

namespace ukai::rt::testing {
namespace {

using std::chrono::nanoseconds;

// Runtimes on `fabric` (one context, one endpoint each), finalized at the end.
struct SimJob {
  explicit SimJob(std::shared_ptr<SimFabric> f, int n) : fabric(std::move(f)) {
    for (int i = 0; i < n; ++i) {
      RuntimeOptions o = ModuleOptions("sim", nullptr);
      o.sim_fabric = fabric;
      auto rt = Runtime::Init(o);
      EXPECT_TRUE(rt.ok()) << rt.status().ToString();
      if (!rt.ok()) return;
      rts.push_back(std::move(*rt));
      auto ctx = rts.back()->CreateContext({});
      auto ep = (*ctx)->CreateEndpoint();
      eps.push_back(*ep);
    }
  }
  ~SimJob() {
    for (auto& rt : rts) {
      const Status st = rt->Finalize();
      if (clean) {
        EXPECT_TRUE(st.ok()) << st.ToString();
      }
    }
  }
  bool clean = true;  // the run is expected to end well
  std::shared_ptr<SimFabric> fabric;
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<Endpoint*> eps;
};

int64_t Counter(SimFabric& f, const char* name) { return static_cast<int64_t>(f.Counters()[name]); }

struct Machine {
  const char* name;
  std::string config;
  int to_node;      // process 1's node (process 0 on node 0)
  int64_t hops;     // router-to-router hops from node 0 to it (-1: the simulator's count)
  int hop_cycles;   // router.hop_cycles
  int link_cycles;  // router.link_cycles
  int flit_bytes;
};

std::string PlaceOn(int node) { return "node_map = [0, " + std::to_string(node) + "]\n"; }

class ZeroLoad : public ::testing::TestWithParam<Machine> {};

// A ping of P payload bytes from process 0 to 1 and its pong back, communication only: the
// one-way time (Now() in the handler minus Now() before the send) is the zero-load latency
// (H + 1) * hop + H * link + L of docs/simulator.md, L = ceil(wire bytes / flit_bytes); the
// pong leaves in the cycle of the ping's delivery, so the round trip is the sum of both.
TEST_P(ZeroLoad, PingPongOneWayTimeIsTheZeroLoadLatencyExactly) {
  const Machine& m = GetParam();
  for (int payload : {0, 100, 1000}) {
    SCOPED_TRACE(payload);
    SimJob job(SimFabricOf(m.config + "[sim]\ncpu_scale = 0.0\n" + PlaceOn(m.to_node)), 2);
    ASSERT_EQ(job.rts.size(), 2u);
    std::atomic<int64_t> t1{-1}, t2{-1};
    ASSERT_TRUE(job.eps[1]
                    ->RegisterHandler("ping", HandlerKind::kNonThreaded,
                                      [&](Rsr& r) {
                                        t1 = job.rts[1]->Now().count();
                                        EXPECT_TRUE(r.runtime()
                                                        .SendRsr(Buffer(),
                                                                 r.reader().GetStartpoint().value(),
                                                                 HandlerId::Of("pong"))
                                                        .ok());
                                      })
                    .ok());
    ASSERT_TRUE(job.eps[0]
                    ->RegisterHandler("pong", HandlerKind::kNonThreaded,
                                      [&](Rsr&) { t2 = job.rts[0]->Now().count(); })
                    .ok());
    Buffer b;
    b.PutStartpoint(job.eps[0]->MakeStartpoint());
    b.PutBytes(std::vector<uint8_t>(payload, 7));
    const size_t wire_bytes = wire::kHeaderSize + b.size();
    const int64_t before = Counter(*job.fabric, "bytes_sent");
    const int64_t t0 = job.rts[0]->Now().count();
    ASSERT_TRUE(job.rts[0]
                    ->SendRsr(std::move(b), job.eps[1]->MakeStartpoint(), HandlerId::Of("ping"))
                    .ok());
    EXPECT_EQ(Counter(*job.fabric, "bytes_sent") - before, int64_t(wire_bytes));
    ASSERT_TRUE(WaitFor([&] { return t2.load() >= 0; }));
    const sim::PointResult net = NetworkResult(*job.fabric);
    int64_t hops = m.hops;
    if (hops < 0) hops = std::llround(net.avg_hops);  // every packet took the same path
    EXPECT_EQ(net.avg_hops * 2, double(2 * hops)) << "both packets travel H hops";
    const int64_t t0_formula = ukai::testing::ZeroLoadCycles(hops, m.hop_cycles, m.link_cycles,
                                                             int64_t(wire_bytes), m.flit_bytes);
    // 1000 MHz: a cycle is a nanosecond.
    EXPECT_EQ(t1.load() - t0, t0_formula) << m.name << " H=" << hops << " bytes=" << wire_bytes;
    const int64_t back = ukai::testing::ZeroLoadCycles(hops, m.hop_cycles, m.link_cycles,
                                                       int64_t(wire::kHeaderSize), m.flit_bytes);
    EXPECT_EQ(t2.load() - t0, t0_formula + back);
  }
}

constexpr char kRouter[] = "[router]\nflit_bytes = 16\nclock_mhz = 1000\n";
INSTANTIATE_TEST_SUITE_P(
    Machines, ZeroLoad,
    ::testing::Values(
        Machine{"mesh",
                std::string("[network]\ntopology = \"mesh\"\nk = 5\nn = 2\n") + kRouter +
                    "[routing]\nalgorithm = \"dor\"\n",
                18, 3 + 3, 5, 1, 16},
        Machine{"torus",
                std::string("[network]\ntopology = \"torus\"\nk = 4\nn = 2\n") + kRouter +
                    "hop_cycles = 3\nlink_cycles = 2\n[routing]\nalgorithm = \"dor\"\n",
                10, 2 + 2, 3, 2, 16},
        Machine{"group",
                std::string("[network]\ntopology = \"group\"\ngroups = 6\ngroup_size = 4\n") +
                    kRouter +
                    "vcs = 6\nvc_buffer_flits = 64\n[routing]\nalgorithm = \"dor-detour\"\n",
                13, -1, 5, 1, 16}),
    [](const auto& info) { return std::string(info.param.name); });

// A 1 MiB RSR from node 0 to its neighbour: the time approaches the link rate of
// flit_bytes per cycle.
TEST(SimModule, LargeMessagesApproachTheLinkRate) {
  SimJob job(SimTestFabric("node_map = [0, 1]\n"), 2);
  constexpr size_t kBytes = size_t{1} << 20;
  std::atomic<int64_t> t1{-1};
  ASSERT_TRUE(job.eps[1]
                  ->RegisterHandler("big", HandlerKind::kNonThreaded,
                                    [&](Rsr&) { t1 = job.rts[1]->Now().count(); })
                  .ok());
  Buffer b(kBytes + 16);
  b.PutBytes(std::vector<uint8_t>(kBytes, 1));
  const int64_t t0 = job.rts[0]->Now().count();
  ASSERT_TRUE(
      job.rts[0]->SendRsr(std::move(b), job.eps[1]->MakeStartpoint(), HandlerId::Of("big")).ok());
  ASSERT_TRUE(WaitFor([&] { return t1.load() >= 0; }, std::chrono::seconds(60)));
  const double bytes_per_cycle = double(kBytes) / double(t1.load() - t0);
  EXPECT_LE(bytes_per_cycle, 16.0);
  EXPECT_GE(bytes_per_cycle, 0.95 * 16.0) << (t1.load() - t0) << " cycles";
}

// A token passed round a ring of 4 processes 20 times, with a burst of sends beside it:
// with cpu_scale = 0 every Now() the program reads is the same on every run.
std::vector<int64_t> RingTimes() {
  SimJob job(SimTestFabric(), 4);
  std::mutex mu;
  std::vector<int64_t> times;
  std::atomic<int> laps{0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(job.eps[i]
                    ->RegisterHandler("token", HandlerKind::kNonThreaded,
                                      [&, i](Rsr& r) {
                                        const int64_t hop = *r.reader().GetU64();
                                        {
                                          std::lock_guard<std::mutex> lock(mu);
                                          times.push_back(job.rts[i]->Now().count());
                                        }
                                        if (hop == 80) {
                                          laps = 1;
                                          return;
                                        }
                                        Buffer b;
                                        b.PutU64(hop + 1);
                                        b.PutBytes(std::vector<uint8_t>(hop * 10, 1));
                                        EXPECT_TRUE(
                                            r.runtime()
                                                .SendRsr(std::move(b),
                                                         job.eps[(i + 1) % 4]->MakeStartpoint(),
                                                         HandlerId::Of("token"))
                                                .ok());
                                      })
                    .ok());
    EXPECT_TRUE(job.eps[i]->RegisterHandler("noise", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  }
  for (int k = 0; k < 50; ++k) {
    EXPECT_TRUE(
        job.rts[2]->SendRsr(Buffer(), job.eps[0]->MakeStartpoint(), HandlerId::Of("noise")).ok());
  }
  Buffer b;
  b.PutU64(1);
  EXPECT_TRUE(
      job.rts[0]->SendRsr(std::move(b), job.eps[1]->MakeStartpoint(), HandlerId::Of("token")).ok());
  EXPECT_TRUE(WaitFor([&] { return laps.load() == 1; }));
  std::lock_guard<std::mutex> lock(mu);
  return times;
}

TEST(SimModule, SameSimulatedTimesOnEveryRun) {
  const std::vector<int64_t> a = RingTimes();
  const std::vector<int64_t> b = RingTimes();
  ASSERT_EQ(a.size(), 80u);
  EXPECT_EQ(a, b);
  EXPECT_GT(a.back(), a.front());
}

TEST(SimModule, BadMachineConfigsAreRefusedNamingTheKey) {
  const std::string torus = "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n";
  // Fewer nodes than processes.
  auto few = NewSimFabricFromString(torus, "m.toml", {}, 17);
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.status().key(), "sim.node_map");
  EXPECT_NE(few.status().message().find("17 processes"), std::string::npos)
      << few.status().ToString();
  // An unknown key of the [sim] table.
  auto unknown = NewSimFabricFromString(torus + "[sim]\ncpu_scael = 0.0\n", "m.toml", {}, 2);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("sim.cpu_scael"), std::string::npos)
      << unknown.status().ToString();
  // A node map out of range.
  auto range = NewSimFabricFromString(torus + "[sim]\nnode_map = [0, 16]\n", "m.toml", {}, 2);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.status().key(), "sim.node_map");
  EXPECT_NE(range.status().message().find("m.toml:6"), std::string::npos)
      << range.status().ToString();
  // A node map placing fewer processes than asked for.
  auto short_map = NewSimFabricFromString(torus + "[sim]\nnode_map = [3, 3]\n", "m.toml", {}, 3);
  ASSERT_FALSE(short_map.ok());
  EXPECT_EQ(short_map.status().key(), "sim.node_map");
  // A bad value of a sim key.
  auto negative = NewSimFabricFromString(torus + "[sim]\ncpu_scale = -1.0\n", "m.toml", {}, 2);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("sim.cpu_scale"), std::string::npos);
  // Several processes per node are fine.
  EXPECT_TRUE(
      NewSimFabricFromString(torus + "[sim]\nnode_map = [5, 5, 5]\n", "m.toml", {}, 3).ok());
  // Without a machine the module refuses to start.
  RuntimeOptions o = ModuleOptions("sim", nullptr);
  o.sim_fabric = nullptr;
  auto rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("no simulated machine"), std::string::npos);
  // sim is exclusive: nothing may bypass the simulated network.
  o.modules = {"sim", "shm"};
  o.sim_fabric = SimTestFabric();
  rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("beside 'sim'"), std::string::npos);
}

// A program thread that neither calls the runtime nor says it waits holds the simulation:
// after sim.stall_ms the run stops with an error naming the process and its last call.
TEST(SimModule, StallingProcessIsNamedWithItsLastCall) {
  SimJob job(SimTestFabric("stall_ms = 200\n"), 2);
  ASSERT_TRUE(job.eps[1]->RegisterHandler("x", HandlerKind::kNonThreaded, [](Rsr&) {}).ok());
  ASSERT_TRUE(job.rts[0]->SendRsr(Buffer(), job.eps[1]->MakeStartpoint(), HandlerId::Of("x")).ok());
  const auto start = std::chrono::steady_clock::now();
  while (job.fabric->status().ok() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // "spinning" outside the runtime
  }
  const Status st = job.fabric->status();
  job.clean = false;  // the run stopped: Finalize reports the frames it could not flush
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("process 0"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("its last call: SendRsr"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("sim.stall_ms = 200"), std::string::npos) << st.ToString();
  EXPECT_EQ(job.rts[0]->SendRsr(Buffer(), job.eps[1]->MakeStartpoint(), HandlerId::Of("x")).code(),
            StatusCode::kUnavailable);
}

// A node failure of faults.events stops the runtime on that node at that simulated time;
// its peers see it fail (not orderly), and sends to it are refused with kUnavailable.
TEST(SimModule, NodeFailureStopsItsRuntimeAndPeersSeeItFail) {
  std::shared_ptr<SimFabric> fabric = SimFabricOf(
      "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[router]\nflit_bytes = 16\n"
      "clock_mhz = 1000\n[routing]\nalgorithm = \"detour-ud\"\n[sim]\ncpu_scale = 0.0\n"
      "node_map = [0, 1, 4]\n[faults]\nevents = [{cycle = 5000, fail_node = 1}]\n");
  ASSERT_TRUE(fabric);
  std::mutex mu;
  std::vector<PeerEvent> events;
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<Endpoint*> eps;
  for (int i = 0; i < 3; ++i) {
    RuntimeOptions o = ModuleOptions("sim", nullptr);
    o.sim_fabric = fabric;
    if (i == 0) {
      o.on_peer_event = [&](const PeerEvent& e) {
        std::lock_guard<std::mutex> lock(mu);
        events.push_back(e);
      };
    }
    auto rt = Runtime::Init(o);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    rts.push_back(std::move(*rt));
    eps.push_back(*(*rts.back()->CreateContext({}))->CreateEndpoint());
  }
  std::atomic<int> pongs{0};
  std::atomic<int64_t> last_pong{0};
  ASSERT_TRUE(eps[1]
                  ->RegisterHandler("ping", HandlerKind::kNonThreaded,
                                    [&](Rsr& r) {
                                      (void)r.runtime().SendRsr(Buffer(), eps[0]->MakeStartpoint(),
                                                                HandlerId::Of("pong"));
                                    })
                  .ok());
  ASSERT_TRUE(eps[0]
                  ->RegisterHandler("pong", HandlerKind::kNonThreaded,
                                    [&](Rsr& r) {
                                      last_pong = rts[0]->Now().count();
                                      ++pongs;
                                      // The next ping from the handler, inside the runtime:
                                      // the exchange holds the simulated clock, so the count
                                      // before the failure does not depend on when the test
                                      // thread wakes (it waits outside the runtime).
                                      (void)r.runtime().SendRsr(Buffer(), eps[1]->MakeStartpoint(),
                                                                HandlerId::Of("ping"));
                                    })
                  .ok());
  std::atomic<int> twos{0};
  ASSERT_TRUE(eps[2]->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++twos; }).ok());
  // Ping process 1 until it is gone (each pong sends the next ping).
  ASSERT_TRUE(rts[0]->SendRsr(Buffer(), eps[1]->MakeStartpoint(), HandlerId::Of("ping")).ok());
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !events.empty();
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(events[0].peer, rts[1]->id());
    EXPECT_FALSE(events[0].orderly);
  }
  EXPECT_GT(pongs.load(), 10);
  EXPECT_LT(last_pong.load(), 5000);
  EXPECT_GE(rts[0]->Now().count(), 5000);
  EXPECT_EQ(rts[0]->SendRsr(Buffer(), eps[1]->MakeStartpoint(), HandlerId::Of("ping")).code(),
            StatusCode::kUnavailable);
  // The rest of the machine works on.
  ASSERT_TRUE(rts[0]->SendRsr(Buffer(), eps[2]->MakeStartpoint(), HandlerId::Of("x")).ok());
  EXPECT_TRUE(WaitFor([&] { return twos.load() == 1; }));
  for (int i : {0, 2}) EXPECT_TRUE(rts[i]->Finalize().ok()) << i;
  (void)rts[1]->Finalize();  // its node failed: its frames to the others were lost
}

}  // namespace
}  // namespace ukai::rt::testing
