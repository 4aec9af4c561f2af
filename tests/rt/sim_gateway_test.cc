// The sim module on the gateway patent's group machine WITH its gateway NICs
// (docs/sim-module.md, "The gateway NIC"; sim/workload/runtime_machine.h): the program's
// results do not change with the NICs on, the gateway's frames are delivered, simulated times
// repeat with cpu_scale = 0, external load slows the program down, a failed node brings the
// management node's detours, a process's node failing is seen by its peers as without the
// NICs, and a bad NIC config is refused before any runtime starts.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "rt_test_util.h"
#include "sim_test_util.h"

namespace ukai::rt::testing {
namespace {

// examples/rt/sim/group24_gateway.toml's machine: 6 groups x 4 nodes, processes on 1G0, 3G1
// and 6G1; `nic` is the [nic] table (empty: no gateway), `faults` the [faults] table.
std::string Group24(const std::string& nic, const std::string& faults = "") {
  std::string text =
      "seed = 1\n[network]\ntopology = \"group\"\ngroups = 6\ngroup_size = 4\n"
      "[router]\nvcs = 6\nflit_bytes = 32\nvc_buffer_flits = 64\n"
      "[routing]\nalgorithm = \"dor-detour\"\n"
      "[sim]\ncpu_scale = 0.0\nnode_map = [0, 9, 21]\n";
  if (!faults.empty()) text += "[faults]\n" + faults;
  if (!nic.empty()) text += "[nic]\n" + nic;
  return text;
}

// The NICs of experiments/gateway/group24.toml with internal ingress frames at `rate`.
std::string Nics(double rate) {
  return "enabled = [\"3G0\", \"3G1\"]\nmanagement_node = \"2G2\"\ndetours = \"managed\"\n"
         "frames = 100000\ningress_rate = " +
         std::to_string(rate) +
         "\ningress_frame_bytes = 1000\negress_rate = 0.0005\negress_frame_bytes = 1000\n"
         "notify_delay_cycles = 100\n";
}

struct RingRun {
  std::vector<int64_t> times;     // Now() at each hop's handler
  std::vector<uint64_t> results;  // per hop: the sum of the payload bytes it received
  sim::PointResult network;
};

// A token round the 3 processes, 60 hops, hop h carrying 40 * h bytes of (h + i) mod 251.
RingRun Ring(const std::string& config, const std::vector<std::string>& sets = {}) {
  RingRun out;
  Result<std::shared_ptr<SimFabric>> made = NewSimFabricFromString(config, "m.toml", sets, 3);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  if (!made.ok()) return out;
  std::shared_ptr<SimFabric> fabric = *made;
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<Endpoint*> eps;
  for (int i = 0; i < 3; ++i) {
    RuntimeOptions o = ModuleOptions("sim", nullptr);
    o.sim_fabric = fabric;
    auto rt = Runtime::Init(o);
    EXPECT_TRUE(rt.ok()) << rt.status().ToString();
    if (!rt.ok()) return out;
    rts.push_back(std::move(*rt));
    eps.push_back(*(*rts.back()->CreateContext({}))->CreateEndpoint());
  }
  std::mutex mu;
  std::atomic<bool> done{false};
  auto payload = [](uint64_t hop) {
    std::vector<uint8_t> v(40 * hop);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((hop + i) % 251);
    return v;
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(eps[i]
                    ->RegisterHandler(
                        "token", HandlerKind::kNonThreaded,
                        [&, i](Rsr& r) {
                          const uint64_t hop = *r.reader().GetU64();
                          Result<std::span<const uint8_t>> got = r.reader().GetBytes();
                          EXPECT_TRUE(got.ok());
                          uint64_t sum = got.ok() ? got->size() << 32 : 0;
                          if (got.ok()) {
                            for (uint8_t x : *got) sum += x;
                          }
                          {
                            std::lock_guard<std::mutex> lock(mu);
                            out.times.push_back(rts[i]->Now().count());
                            out.results.push_back(sum);
                          }
                          if (hop == 60) {
                            done = true;
                            return;
                          }
                          Buffer b;
                          b.PutU64(hop + 1);
                          b.PutBytes(payload(hop + 1));
                          EXPECT_TRUE(r.runtime()
                                          .SendRsr(std::move(b), eps[(i + 1) % 3]->MakeStartpoint(),
                                                   HandlerId::Of("token"))
                                          .ok());
                        })
                    .ok());
  }
  Buffer b;
  b.PutU64(1);
  b.PutBytes(payload(1));
  EXPECT_TRUE(rts[0]->SendRsr(std::move(b), eps[1]->MakeStartpoint(), HandlerId::Of("token")).ok());
  EXPECT_TRUE(WaitFor([&] { return done.load(); }, std::chrono::seconds(120)));
  for (auto& rt : rts) EXPECT_TRUE(rt->Finalize().ok());
  out.network = NetworkResult(*fabric);
  return out;
}

TEST(SimGateway, ProgramResultsUnchangedAndTheGatewaysFramesDelivered) {
  const RingRun plain = Ring(Group24(""));
  const RingRun gateway = Ring(Group24(Nics(0.005)));
  ASSERT_EQ(plain.results.size(), 60u);
  EXPECT_EQ(gateway.results, plain.results);
  EXPECT_FALSE(plain.network.gateway.present);
  ASSERT_TRUE(gateway.network.gateway.present);
  EXPECT_GT(gateway.network.gateway.frames_in, 0);
  EXPECT_GT(gateway.network.gateway.frames_delivered, 0);
  EXPECT_GT(gateway.network.gateway.egress_frames, 0);
  // The network's figures are the program's packets: the same count with the NICs on.
  EXPECT_EQ(gateway.network.messages_measured, plain.network.messages_measured);
  EXPECT_EQ(gateway.network.undeliverable_messages, 0);
}

TEST(SimGateway, SameSimulatedTimesOnEveryRun) {
  const RingRun a = Ring(Group24(Nics(0.01)));
  const RingRun b = Ring(Group24(Nics(0.01)));
  ASSERT_EQ(a.times.size(), 60u);
  EXPECT_EQ(a.times, b.times);
  EXPECT_EQ(a.network.gateway.frames_delivered, b.network.gateway.frames_delivered);
  EXPECT_EQ(a.network.gateway.egress_frames, b.network.gateway.egress_frames);
}

TEST(SimGateway, HeavyExternalTrafficSlowsTheProgramDown) {
  const RingRun plain = Ring(Group24(""));
  const RingRun light = Ring(Group24(Nics(0.001)));
  const RingRun heavy = Ring(Group24(Nics(0.05)));
  ASSERT_EQ(plain.times.size(), 60u);
  ASSERT_EQ(heavy.times.size(), 60u);
  EXPECT_GE(light.times.back(), plain.times.back());
  EXPECT_GT(heavy.times.back(), light.times.back())
      << "plain " << plain.times.back() << " light " << light.times.back();
  EXPECT_EQ(heavy.results, plain.results);
}

TEST(SimGateway, AFailedNodeBringsTheManagementNodesDetours) {
  // 4G2 lies on the NICs' paths to other groups' members 2, not on the program's (members 0
  // and 1); it fails at cycle 500 and the management node hears of it 100 cycles later.
  const std::string faults = "events = [{cycle = 500, fail_node = \"4G2\"}]\n";
  const RingRun plain = Ring(Group24(""));
  const RingRun failed = Ring(Group24(Nics(0.01), faults));
  ASSERT_EQ(failed.results.size(), 60u);
  EXPECT_EQ(failed.results, plain.results);
  ASSERT_TRUE(failed.network.gateway.present);
  EXPECT_GT(failed.times.back(), 600) << "the run outlasts the notice";
  EXPECT_GT(failed.network.gateway.table_updates_sent, 0);
  EXPECT_GT(failed.network.gateway.egress_updates_sent, 0);
  const RingRun healthy = Ring(Group24(Nics(0.01)));
  EXPECT_EQ(healthy.network.gateway.table_updates_sent, 0);
}

// Process 2's node (6G1) fails at cycle 2000 beside the gateway: process 0 sees its peer
// fail as without the NICs (PeerEvent, unavailable), process 1 still answers, and the
// gateway ran meanwhile.
TEST(SimGateway, ANodeFailureStopsItsProcessAsWithoutTheNics) {
  Result<std::shared_ptr<SimFabric>> made = NewSimFabricFromString(
      Group24(Nics(0.02), "events = [{cycle = 2000, fail_node = \"6G1\"}]\n"), "m.toml", {}, 3);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::shared_ptr<SimFabric> fabric = *made;
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
  std::atomic<int> pongs{0}, ones{0};
  ASSERT_TRUE(eps[2]
                  ->RegisterHandler("ping", HandlerKind::kNonThreaded,
                                    [&](Rsr& r) {
                                      (void)r.runtime().SendRsr(Buffer(), eps[0]->MakeStartpoint(),
                                                                HandlerId::Of("pong"));
                                    })
                  .ok());
  ASSERT_TRUE(eps[0]
                  ->RegisterHandler("pong", HandlerKind::kNonThreaded,
                                    [&](Rsr& r) {
                                      ++pongs;
                                      (void)r.runtime().SendRsr(Buffer(), eps[2]->MakeStartpoint(),
                                                                HandlerId::Of("ping"));
                                    })
                  .ok());
  ASSERT_TRUE(eps[1]->RegisterHandler("x", HandlerKind::kNonThreaded, [&](Rsr&) { ++ones; }).ok());
  ASSERT_TRUE(rts[0]->SendRsr(Buffer(), eps[2]->MakeStartpoint(), HandlerId::Of("ping")).ok());
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !events.empty();
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(events[0].peer, rts[2]->id());
    EXPECT_FALSE(events[0].orderly);
  }
  EXPECT_GT(pongs.load(), 3);
  EXPECT_GE(rts[0]->Now().count(), 2000);
  EXPECT_EQ(rts[0]->SendRsr(Buffer(), eps[2]->MakeStartpoint(), HandlerId::Of("ping")).code(),
            StatusCode::kUnavailable);
  ASSERT_TRUE(rts[0]->SendRsr(Buffer(), eps[1]->MakeStartpoint(), HandlerId::Of("x")).ok());
  EXPECT_TRUE(WaitFor([&] { return ones.load() == 1; }));
  for (int i : {0, 1}) EXPECT_TRUE(rts[i]->Finalize().ok()) << i;
  (void)rts[2]->Finalize();
  const sim::PointResult r = NetworkResult(*fabric);
  ASSERT_TRUE(r.gateway.present);
  EXPECT_GT(r.gateway.frames_in, 0);
}

TEST(SimGateway, BadNicConfigsAreRefusedNamingTheKey) {
  struct Case {
    std::string text;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {Group24("enabled = [\"3G0\"]\nmanagement_node = \"9G9\"\nframes = 10\n"),
       "nic.management_node"},
      {Group24("enabled = [\"3G0\", \"3G0\"]\nframes = 10\n"),
       "nic.enabled: node 3G0 listed twice"},
      {Group24("internal_traffic = false\n"),
       "nic.internal_traffic: is not read by a machine for the runtime's sim module"},
      {Group24("frames = 10\nheader_bytes = 8\n"), "SSS-CORE NIC model"},
      {Group24(Nics(0.01) + "ingress_pcap = \"/nonexistent.pcap\"\n"), "/nonexistent.pcap"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    Result<std::shared_ptr<SimFabric>> f = NewSimFabricFromString(c.text, "m.toml", {}, 3);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().ToString().find(c.expect), std::string::npos) << f.status().ToString();
  }
  Result<std::shared_ptr<SimFabric>> torus = NewSimFabricFromString(
      "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[routing]\nalgorithm = \"dor-detour\"\n"
      "[nic]\nframes = 10\n",
      "m.toml", {}, 2);
  ASSERT_FALSE(torus.ok());
  EXPECT_NE(torus.status().message().find("nic.frames: is not read by a machine"),
            std::string::npos)
      << torus.status().ToString();
  EXPECT_NE(torus.status().message().find("network.topology = \"group\""), std::string::npos);
}

}  // namespace
}  // namespace ukai::rt::testing
