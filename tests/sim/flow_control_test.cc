// router.flow_control (docs/sss.md, "Flow control"): advance (credits beside the data)
// against in-band (every flit on a channel costs the reverse channel its next cycle, the
// SSS-CORE paper's reason for announcing room in advance). One way nothing changes; both
// ways the link carries half the data; a lone packet is not slowed; hierarchical multicast (forks)
// still delivers one copy per member; the key is read, checked and refused where the model cannot
// run (partitions).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "sim/engine/network.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/nic/sss_nic.h"
#include "sim/sss_test_util.h"

namespace ukai::sim {
namespace {

using testing::SssTree;

// Two end nodes n0, n1 under one switch (plain messages of the engine, vct-saf, 1 VC).
std::unique_ptr<Network> Pair(FlowControl fc) {
  SimConfig c = SssTree(2, 1);
  c.sss.operation = RmaOperation::kMessage;
  c.router.flow_control = fc;
  Result<std::unique_ptr<Network>> net = Network::Create(c, nullptr, /*with_traffic=*/false);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return std::move(net).value();
}

struct StreamResult {
  std::map<int, int64_t> last;  // per source: the cycle its last message was delivered
  bool stopped_midway = false;  // CheckNoMidwayStop() failed in some cycle
};

// `count` messages of `flits` from each source in `sources` to the other end node, all
// queued at cycle 0; runs until every one is delivered.
StreamResult Stream(FlowControl fc, std::vector<int> sources, int count, int flits) {
  std::unique_ptr<Network> net = Pair(fc);
  for (int i = 0; i < count; ++i) {
    for (int src : sources) net->CreateMessage(src, 1 - src, flits);
  }
  StreamResult out;
  int delivered = 0;
  const int expected = count * static_cast<int>(sources.size());
  for (int cycle = 0; cycle < 1000000 && delivered < expected; ++cycle) {
    net->Step();
    for (const Delivery& d : net->deliveries()) {
      ++delivered;
      out.last[d.src] = std::max(out.last[d.src], d.delivered);
    }
    if (!net->CheckNoMidwayStop().ok()) out.stopped_midway = true;
    EXPECT_TRUE(net->CheckInvariants().ok());
  }
  EXPECT_EQ(delivered, expected);
  return out;
}

TEST(FlowControlTest, OneWayStreamIsUnchanged) {
  const StreamResult advance = Stream(FlowControl::kAdvance, {0}, 100, 40);
  const StreamResult in_band = Stream(FlowControl::kInBand, {0}, 100, 40);
  // The link is busy the whole time (one flit per cycle): 4000 flits.
  EXPECT_GE(advance.last.at(0), 4000);
  EXPECT_LE(advance.last.at(0), 4100);
  EXPECT_EQ(in_band.last.at(0), advance.last.at(0));
  EXPECT_FALSE(advance.stopped_midway);
  EXPECT_FALSE(in_band.stopped_midway);
}

TEST(FlowControlTest, BothWaysTheLinkCarriesHalf) {
  const StreamResult advance = Stream(FlowControl::kAdvance, {0, 1}, 100, 40);
  const StreamResult in_band = Stream(FlowControl::kInBand, {0, 1}, 100, 40);
  for (int src : {0, 1}) {
    // Advance: each direction at full rate, as one way. In-band: each direction in every
    // other cycle, so the same flits take twice as long (within a few packets).
    EXPECT_LE(advance.last.at(src), 4100) << src;
    const double ratio =
        static_cast<double>(in_band.last.at(src)) / static_cast<double>(advance.last.at(src));
    EXPECT_GT(ratio, 1.9) << src;
    EXPECT_LT(ratio, 2.1) << src;
  }
  // Neither direction is shut out: they finish together.
  EXPECT_LE(std::abs(in_band.last.at(0) - in_band.last.at(1)), 100);
  // Announcing room in advance never stops a packet midway. (In-band packets do pause,
  // every other cycle, but upstream: CheckNoMidwayStop() sees only flits on a channel.)
  EXPECT_FALSE(advance.stopped_midway);
}

// A packet alone on the network is not slowed: its own symbols go on the idle reverse
// channels.
TEST(FlowControlTest, LonePacketLatencyIsUnchanged) {
  for (int flits : {1, 18, 200}) {
    std::map<FlowControl, int64_t> latency;
    for (FlowControl fc : {FlowControl::kAdvance, FlowControl::kInBand}) {
      std::unique_ptr<Network> net = Pair(fc);
      net->CreateMessage(0, 1, flits);
      for (int i = 0; i < 10000 && net->deliveries().empty(); ++i) net->Step();
      ASSERT_EQ(net->deliveries().size(), 1u);
      latency[fc] = net->deliveries()[0].delivered - net->deliveries()[0].created;
    }
    EXPECT_EQ(latency[FlowControl::kInBand], latency[FlowControl::kAdvance]) << flits;
  }
}

// The NIC model with hierarchical multicast (switches copy packets: forks) and acks coming
// back over the same links: every member gets its copy, one ack per multicast, under both.
TEST(FlowControlTest, MulticastAndAcksCompleteInBand) {
  std::map<FlowControl, int64_t> cycles;
  for (FlowControl fc : {FlowControl::kAdvance, FlowControl::kInBand}) {
    SimConfig c = SssTree(4, 2);
    c.router.flow_control = fc;
    c.sss.acks = true;
    Result<std::unique_ptr<SssMachine>> made = SssMachine::Create(c);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    SssMachine& m = **made;
    int submitted = 0, completed = 0;
    for (int i = 0; i < 8; ++i) {
      SssOp op;
      op.kind = SssOp::Kind::kMulticast;
      op.multicast = MulticastKind::kHierarchical;
      op.src = (i * 5) % 16;
      op.bytes = 2000;
      op.ack = true;
      op.measured = true;
      for (int n = 0; n < 16; ++n) {
        if (n != op.src && (n + i) % 3 == 0) op.members.push_back(n);
      }
      ASSERT_TRUE(m.Submit(op).ok());
      ++submitted;
    }
    while (completed < submitted && m.now() < 2000000) {
      m.Step();
      completed += static_cast<int>(m.completions().size());
      ASSERT_TRUE(m.network().CheckInvariants().ok());
    }
    EXPECT_EQ(completed, submitted);
    EXPECT_EQ(m.counters().acks_returned, submitted);
    EXPECT_EQ(m.counters().packets_dropped, 0);
    cycles[fc] = m.now();
  }
  // The acks and the copies share links with the data: in-band is slower.
  EXPECT_GT(cycles[FlowControl::kInBand], cycles[FlowControl::kAdvance]);
}

TEST(FlowControlTest, KeyIsReadCheckedAndRefusedWithPartitions) {
  const std::string base =
      "[network]\ntopology = \"tree\"\ntree_arity = 2\ntree_levels = 1\n"
      "[routing]\nalgorithm = \"source\"\n[router]\n";
  Result<std::vector<SimConfig>> in_band =
      LoadSimConfigsFromString(base + "flow_control = \"in-band\"\n", "f.toml", {});
  ASSERT_TRUE(in_band.ok()) << in_band.status().ToString();
  EXPECT_EQ(in_band->front().router.flow_control, FlowControl::kInBand);
  Result<std::vector<SimConfig>> fallback = LoadSimConfigsFromString(base, "f.toml", {});
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->front().router.flow_control, FlowControl::kAdvance);
  Result<std::vector<SimConfig>> bad =
      LoadSimConfigsFromString(base + "flow_control = \"inband\"\n", "f.toml", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().key(), "router.flow_control");

  SimConfig torus;  // a network that partitions: refused with in-band
  torus.network.k = {8, 8};
  torus.run.threads = 2;
  torus.run.partition_min_nodes = 1;
  torus.router.flow_control = FlowControl::kInBand;
  Result<std::unique_ptr<Network>> net = Network::Create(torus);
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("router.flow_control = in-band"), std::string::npos)
      << net.status().ToString();
  torus.router.flow_control = FlowControl::kAdvance;
  EXPECT_TRUE(Network::Create(torus).ok());
}

}  // namespace
}  // namespace ukai::sim
