// The workload layer (sim/workload/workload.h): replaying the synthetic generator's own
// messages gives its deliveries cycle for cycle; dependencies, delays and earliest cycles
// are honoured on every delivery; messages are cut into packets and delivered once; a
// source adds messages at run time from its delivery callback; lost messages block their
// dependents; idle stretches are skipped.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "sim/sim_test_util.h"
#include "sim/workload/list_source.h"
#include "sim/workload/workload.h"
#include "workload_test_util.h"

namespace ukai::sim {
namespace {

using testing::DriveEnd;
using testing::DriveWorkload;
using testing::SmallConfig;

using DeliveryKey = std::tuple<int64_t, int32_t, int32_t, int64_t, int64_t, int32_t, int32_t>;
DeliveryKey Key(const Delivery& d) {
  return {d.delivered, d.src, d.dst, d.created, d.injected, d.hops, d.length};
}

// Every delivery of `cycles` cycles of `config`, with the synthetic generator or with the
// layer replaying SyntheticMessageList().
std::vector<DeliveryKey> Deliveries(const SimConfig& config, int64_t cycles, bool layer) {
  Result<std::unique_ptr<Network>> net = Network::Create(config, {}, /*with_traffic=*/!layer);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  std::vector<DeliveryKey> out;
  Workload w(WorkloadOptions{config.router.flit_bytes, 32767, false});
  std::unique_ptr<ListSource> list;
  if (layer) {
    Result<std::vector<WorkMessage>> msgs =
        SyntheticMessageList(config, (*net)->topology(), cycles);
    EXPECT_TRUE(msgs.ok());
    list = std::make_unique<ListSource>(std::move(*msgs));
    w.AddSource(list.get());
    (*net)->SetMessageSource(&w);
  }
  while ((*net)->now() < cycles) {
    (*net)->Step();
    for (const Delivery& d : (*net)->deliveries()) out.push_back(Key(d));
  }
  (*net)->SetMessageSource(nullptr);
  return out;
}

TEST(WorkloadLayer, ReplayOfSyntheticTrafficIsIdenticalCycleForCycle) {
  for (const char* routing : {"dor", "duato"}) {
    for (const char* pattern : {"uniform", "transpose"}) {
      SimConfig c = SmallConfig(TopologyKind::kTorus, {6, 6}, routing);
      c.traffic.pattern = pattern;
      c.traffic.rate = 0.3;
      const std::vector<DeliveryKey> synthetic = Deliveries(c, 4000, false);
      const std::vector<DeliveryKey> replayed = Deliveries(c, 4000, true);
      ASSERT_GT(synthetic.size(), 1000u);
      EXPECT_EQ(synthetic, replayed) << routing << " " << pattern;
    }
  }
}

// A source of a fixed set of messages with dependencies, recording what it hears.
class DagSource final : public WorkloadSource {
 public:
  Status Advance(int64_t, Workload*) override { return Status::Ok(); }
  void Delivered(WorkMessageId id, const WorkMessage&, int64_t cycle, Workload*) override {
    delivered[id] = cycle;
  }
  void Lost(WorkMessageId id, const WorkMessage&, int64_t, Workload*) override {
    lost.push_back(id);
  }
  bool Finished() const override { return true; }
  std::map<WorkMessageId, int64_t> delivered;
  std::vector<WorkMessageId> lost;
};

WorkMessage Msg(int src, int dst, int64_t bytes, int64_t earliest = 0, int64_t delay = 0) {
  WorkMessage m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.earliest = earliest;
  m.delay = delay;
  return m;
}

TEST(WorkloadLayer, DependenciesDelaysAndEarliestCyclesHoldOnEveryDelivery) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  Workload w(WorkloadOptions{4, 32767, /*keep_packet_log=*/true});
  DagSource src;
  w.AddSource(&src);
  // a -> b (delay 50), a -> c; b, c -> d (earliest 400, delay 7); e independent, late.
  const WorkMessageId a = w.Add(&src, Msg(0, 15, 64));
  const WorkMessageId b = w.Add(&src, Msg(15, 3, 8, 0, 50), std::vector<WorkMessageId>{a});
  const WorkMessageId cc = w.Add(&src, Msg(15, 12, 200), std::vector<WorkMessageId>{a});
  const WorkMessageId d = w.Add(&src, Msg(3, 5, 72, 400, 7), std::vector<WorkMessageId>{b, cc});
  const WorkMessageId e = w.Add(&src, Msg(6, 9, 8, 5000));
  EXPECT_EQ(w.Blocked(), 3);
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kDone);
  auto times = testing::TimesOf(w);
  ASSERT_EQ(src.delivered.size(), 5u);
  for (WorkMessageId id : {a, b, cc, d, e}) {
    EXPECT_EQ(times[id].delivered, src.delivered[id]);  // reported once, at the last packet
  }
  EXPECT_GE(times[b].created, src.delivered[a] + 50);
  EXPECT_GE(times[cc].created, src.delivered[a]);
  EXPECT_GE(times[d].created, std::max(src.delivered[b], src.delivered[cc]) + 7);
  EXPECT_GE(times[d].created, 400);
  EXPECT_EQ(times[e].created, 5000);  // nothing else in its way: exactly its earliest cycle
  // Not later than needed either: created in the cycle it became ready.
  EXPECT_EQ(times[b].created, src.delivered[a] + 50);
  EXPECT_EQ(times[d].created,
            std::max<int64_t>(400, std::max(src.delivered[b], src.delivered[cc]) + 7));
  EXPECT_EQ(w.stats().messages_delivered, 5);
  EXPECT_EQ(w.Blocked(), 0);
}

// Another producer's messages in the same network (the gateway's, whose tags count up from
// 0, beside the runtime's sim module): with tag_base above them the layer neither counts
// their deliveries nor takes them for its own slots.
TEST(WorkloadLayer, TagsBelowTheBaseAreAnotherProducers) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  WorkloadOptions o{4, 32767, true};
  o.tag_base = int64_t{1} << 62;
  Workload w(o);
  DagSource src;
  w.AddSource(&src);
  const WorkMessageId a = w.Add(&src, Msg(0, 15, 64));
  const WorkMessageId b = w.Add(&src, Msg(15, 3, 8, 0, 50), std::vector<WorkMessageId>{a});
  for (int tag = 0; tag < 8; ++tag) (*net)->CreateMessage(tag, 15 - tag, 4, {}, tag);
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kDone);
  auto times = testing::TimesOf(w);
  ASSERT_EQ(src.delivered.size(), 2u);
  EXPECT_EQ(times[a].delivered, src.delivered[a]);
  EXPECT_EQ(times[b].delivered, src.delivered[b]);
  EXPECT_EQ(times[b].created, src.delivered[a] + 50);
  EXPECT_EQ(w.stats().packets_delivered, 2);
  EXPECT_EQ(w.stats().messages_delivered, 2);
  EXPECT_EQ(w.stats().flits_delivered, 16 + 2) << "a's 64 bytes and b's 8, not tag 0's 4 flits";
  EXPECT_EQ((*net)->messages_delivered(), 2 + 8) << "the other producer's were delivered too";
}

TEST(WorkloadLayer, LargeMessagesAreCutIntoPacketsAndDeliveredOnce) {
  SimConfig c = SmallConfig(TopologyKind::kTorus, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  Workload w(WorkloadOptions{4, /*packet_flits=*/16, true});
  DagSource src;
  const WorkMessageId big = w.Add(&src, Msg(1, 10, 1000));  // 250 flits: 15 x 16 + 10
  const WorkMessageId empty = w.Add(&src, Msg(2, 2, 0));    // no payload: one flit, to itself
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kDone);
  auto times = testing::TimesOf(w);
  EXPECT_EQ(times[big].packets, 16);
  EXPECT_EQ(times[empty].packets, 1);
  EXPECT_EQ(w.stats().packets_created, 17);
  EXPECT_EQ(w.stats().packets_delivered, 17);
  EXPECT_EQ(w.stats().flits_delivered, 251);
  EXPECT_EQ(src.delivered.size(), 2u);
  EXPECT_EQ(w.stats().bytes_delivered, 1000);
}

// Ping-pong between two nodes: each reply is added from the delivery callback.
class PingPong final : public WorkloadSource {
 public:
  explicit PingPong(int rounds) : rounds_(rounds) {}
  Status Advance(int64_t now, Workload* w) override {
    if (!started_) {
      started_ = true;
      w->Add(this, Msg(0, 7, 64, now));
    }
    return Status::Ok();
  }
  void Delivered(WorkMessageId, const WorkMessage& m, int64_t cycle, Workload* w) override {
    deliveries.push_back(cycle);
    if (static_cast<int>(deliveries.size()) < 2 * rounds_) {
      w->Add(this, Msg(m.dst, m.src, 64, cycle + 10));  // 10 cycles of "compute"
    }
  }
  void Lost(WorkMessageId, const WorkMessage&, int64_t, Workload*) override {}
  // Its first message is added by the first Advance().
  int64_t NextCycle() const override { return started_ ? MessageSource::kNever : 0; }
  bool Finished() const override {
    return started_ && static_cast<int>(deliveries.size()) >= 2 * rounds_;
  }
  std::vector<int64_t> deliveries;

 private:
  int rounds_;
  bool started_ = false;
};

TEST(WorkloadLayer, SourcesAddMessagesAtRunTimeFromTheirDeliveries) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  Workload w(WorkloadOptions{4, 32767, true});
  PingPong pp(10);
  w.AddSource(&pp);
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kDone);
  ASSERT_EQ(pp.deliveries.size(), 20u);
  // A zero-load one-way trip is a constant: every round trip takes the same time.
  const int64_t one_way = pp.deliveries[0];
  for (size_t i = 1; i < pp.deliveries.size(); ++i) {
    EXPECT_EQ(pp.deliveries[i] - pp.deliveries[i - 1], one_way + 10) << i;
  }
}

TEST(WorkloadLayer, LostMessagesBlockTheirDependentsAndTheRunSaysSo) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4}, "updown");
  c.router.vcs = 2;
  c.faults.nodes.push_back(testing::NodeNumber(5));
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  Workload w(WorkloadOptions{4, 32767, true});
  DagSource src;
  w.AddSource(&src);
  const WorkMessageId to_dead = w.Add(&src, Msg(0, 5, 8));
  const WorkMessageId after = w.Add(&src, Msg(1, 2, 8), std::vector<WorkMessageId>{to_dead});
  const WorkMessageId fine = w.Add(&src, Msg(1, 2, 8));
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kStuck);
  EXPECT_EQ(src.lost, std::vector<WorkMessageId>{to_dead});
  EXPECT_EQ(src.delivered.count(fine), 1u);
  EXPECT_EQ(src.delivered.count(after), 0u);
  EXPECT_EQ(w.Blocked(), 1);
  EXPECT_EQ(w.stats().messages_lost, 1);
}

TEST(WorkloadLayer, AddDependencyOnlyBeforeCreation) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  Workload w(WorkloadOptions{4, 32767, true});
  DagSource src;
  const WorkMessageId a = w.Add(&src, Msg(0, 15, 400));
  const WorkMessageId b = w.Add(&src, Msg(3, 12, 8));  // ready at once
  EXPECT_TRUE(w.AddDependency(b, a));                  // now it waits for a
  EXPECT_FALSE(w.AddDependency(b, b));
  EXPECT_EQ(DriveWorkload(**net, w), DriveEnd::kDone);
  auto times = testing::TimesOf(w);
  EXPECT_GE(times[b].created, src.delivered[a]);
  EXPECT_FALSE(w.AddDependency(b, a));  // both delivered
  EXPECT_FALSE(w.Pending(a));
}

TEST(WorkloadLayer, IdleStretchesAreSkipped) {
  SimConfig c = SmallConfig(TopologyKind::kMesh, {4, 4});
  Result<std::unique_ptr<Network>> net = Network::Create(c, {}, false);
  ASSERT_TRUE(net.ok());
  Workload w(WorkloadOptions{4, 32767, true});
  DagSource src;
  const WorkMessageId a = w.Add(&src, Msg(0, 1, 8, 1000000));
  const WorkMessageId b = w.Add(&src, Msg(1, 0, 8, 0, 5000000), std::vector<WorkMessageId>{a});
  int64_t steps = 0;
  EXPECT_EQ(DriveWorkload(**net, w, 100000000, &steps), DriveEnd::kDone);
  auto times = testing::TimesOf(w);
  EXPECT_EQ(times[a].created, 1000000);
  EXPECT_EQ(times[b].created, src.delivered[a] + 5000000);
  EXPECT_LT(steps, 200);  // the clock jumped over the waits
}

}  // namespace
}  // namespace ukai::sim
