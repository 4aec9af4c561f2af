// The SSS-CORE switches and NIC (docs/sss.md): virtual cut-through falling back to
// store-and-forward (router.switching = vct-saf) and plain store-and-forward (saf) against
// the latency formulas; per-link latencies; no packet dropped or stopped midway under
// saturation (invariants every cycle); the split of transfers at 4 KiB and at page
// boundaries; the wire accounting of the paper's 4-byte remote write; FIFO order between a
// pair with routing.in_order.
#include <gtest/gtest.h>

#include <map>

#include "sim/engine/network.h"
#include "sim/nic/sss_nic.h"
#include "sim/nic/sss_packet.h"
#include "sim/sss_test_util.h"

namespace ukai::sim {
namespace {

using testing::RunUntilDone;
using testing::SssTree;

// The tree of SssTree() as a plain network (no NIC model): messages of the engine.
std::unique_ptr<Network> PlainTree(Switching switching, int arity = 4, int levels = 2) {
  SimConfig c = SssTree(arity, levels);
  c.sss.operation = RmaOperation::kMessage;
  c.router.switching = switching;
  Result<std::unique_ptr<Network>> net = Network::Create(c, nullptr, /*with_traffic=*/false);
  EXPECT_TRUE(net.ok()) << net.status().ToString();
  return std::move(net).value();
}

Delivery SendOne(Network& net, int src, int dst, int flits) {
  net.CreateMessage(src, dst, flits);
  for (int i = 0; i < 100000; ++i) {
    net.Step();
    if (!net.deliveries().empty()) return net.deliveries()[0];
  }
  ADD_FAILURE() << "not delivered";
  return {};
}

// Zero-load latency (docs/simulator.md): (H + 1) hop + H link + L for H channels. With
// store-and-forward each switch waits for the tail: + max(0, L - hop) per switch.
TEST(SssSwitchingTest, ZeroLoadLatencyCutThroughAndStoreAndForward) {
  const int hop = 1, link = 1;
  for (Switching sw :
       {Switching::kVctSaf, Switching::kVirtualCutThrough, Switching::kStoreAndForward}) {
    for (int flits : {1, 3, 18, 100}) {
      for (auto [dst, switches] : {std::pair{1, 1}, std::pair{5, 3}, std::pair{15, 3}}) {
        std::unique_ptr<Network> net = PlainTree(sw);
        const Delivery d = SendOne(*net, 0, dst, flits);
        const int h = switches + 1;
        int64_t expected = (h + 1) * hop + h * link + flits;
        if (sw == Switching::kStoreAndForward) expected += switches * std::max(0, flits - hop);
        EXPECT_EQ(d.delivered - d.created, expected)
            << "switching " << static_cast<int>(sw) << " flits " << flits << " dst " << dst;
        EXPECT_EQ(net->packets_stored(), sw == Switching::kStoreAndForward ? switches : 0);
      }
    }
  }
}

// vct-saf: a packet whose output is busy when its header is ready is stored whole before it
// goes on (counted); plain vct lets it go as soon as the output frees.
TEST(SssSwitchingTest, BusyOutputFallsBackToStoreAndForward) {
  std::map<Switching, int64_t> second;
  for (Switching sw : {Switching::kVctSaf, Switching::kVirtualCutThrough}) {
    std::unique_ptr<Network> net = PlainTree(sw);
    net->CreateMessage(0, 2, 10);  // short, first through s1.0's port to n2
    net->Step();
    net->CreateMessage(1, 2, 200);  // long, finds that port busy
    std::map<int, int64_t> delivered;
    for (int i = 0; i < 5000 && delivered.size() < 2; ++i) {
      net->Step();
      for (const Delivery& d : net->deliveries()) delivered[d.src] = d.delivered;
    }
    ASSERT_EQ(delivered.size(), 2u);
    second[sw] = delivered[1];
    EXPECT_EQ(net->packets_stored(), sw == Switching::kVctSaf ? 1 : 0);
  }
  // Stored: the 200-flit packet leaves s1.0 only once all of it is there (about its length
  // after its head), not ~10 cycles after its head as with cut-through.
  EXPECT_GE(second[Switching::kVctSaf] - second[Switching::kVirtualCutThrough], 150);
}

TEST(SssSwitchingTest, PerLinkLatencies) {
  SimConfig c = SssTree(2, 1);
  c.sss.operation = RmaOperation::kMessage;
  c.network.topology = TopologyKind::kGraph;
  c.network.graph.origin = "two nodes";
  c.network.graph.terminals = {"a", "b"};
  c.network.graph.switches = {"s"};
  c.network.graph.links = {MakeLink("a", "s", 7), MakeLink("s", "b", 4)};
  Result<std::unique_ptr<Network>> net = Network::Create(c, nullptr, false);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  const Delivery d = SendOne(**net, 0, 1, 5);
  EXPECT_EQ(d.delivered - d.created, 3 * 1 + (7 + 4) + 5);
  EXPECT_EQ((*net)->PipelineCycles(), 7 + 1 + 5 + 1);
}

// Saturated mixed traffic through small receive rings: every cycle the router invariants
// hold and no packet that started crossing a channel waits for its next flit; at the end
// every operation completes and none is dropped.
TEST(SssSwitchingTest, SaturatedNoDropNoMidwayStop) {
  for (MulticastKind mc :
       {MulticastKind::kNone, MulticastKind::kHierarchical, MulticastKind::kChained}) {
    SimConfig c = SssTree(4, 2);
    // Rings of a few packets: flow control does the work.
    const int64_t packet = mc == MulticastKind::kNone ? 4200 : 750;
    c.sss.max_payload_bytes = mc == MulticastKind::kNone ? 4096 : 700;
    c.sss.receive_buffer_bytes = 3 * packet;
    c.sss.acks = true;
    Result<std::unique_ptr<SssMachine>> made = SssMachine::Create(c);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    SssMachine& m = **made;
    Rng rng(static_cast<uint64_t>(mc) + 7);
    int submitted = 0, completed = 0;
    for (int cycle = 0; cycle < 400000 && (cycle < 20000 || completed < submitted); ++cycle) {
      if (cycle < 20000 && cycle % 50 == 0) {
        SssOp op;
        op.src = static_cast<int>(rng.Uniform(16));
        op.bytes = 1 + static_cast<int64_t>(rng.Uniform(mc == MulticastKind::kNone ? 2000 : 600));
        op.page_offset = static_cast<int64_t>(rng.Uniform(4096));
        op.ack = rng.Uniform(2) == 0;
        if (mc == MulticastKind::kNone) {
          op.dst = (op.src + 1 + static_cast<int>(rng.Uniform(15))) % 16;
          op.kind = rng.Uniform(4) == 0 ? SssOp::Kind::kRead : SssOp::Kind::kWrite;
        } else {
          op.kind = SssOp::Kind::kMulticast;
          op.multicast = mc;
          for (int n = 0; n < 16; ++n) {
            if (n != op.src && rng.Uniform(3) == 0) op.members.push_back(n);
          }
          if (op.members.empty()) op.members.push_back((op.src + 3) % 16);
        }
        ASSERT_TRUE(m.Submit(op).ok());
        ++submitted;
      }
      m.Step();
      completed += static_cast<int>(m.completions().size());
      Status inv = m.network().CheckInvariants();
      ASSERT_TRUE(inv.ok()) << inv.ToString();
      Status stream = m.network().CheckNoMidwayStop();
      ASSERT_TRUE(stream.ok()) << stream.ToString();
      ASSERT_FALSE(m.network().Stalled(20000));
    }
    EXPECT_EQ(completed, submitted) << "multicast " << static_cast<int>(mc);
    EXPECT_EQ(m.counters().packets_dropped, 0);
    EXPECT_EQ(m.network().messages_undeliverable(), 0);
    EXPECT_LE(m.counters().receive_ring_peak_bytes, c.sss.receive_buffer_bytes);
    EXPECT_GT(m.counters().receive_ring_peak_bytes, packet);  // the rings were really used
  }
}

TEST(SssPacketTest, FieldsAddUpToThePapersHeaderAndTrailer) {
  EXPECT_EQ(SssFieldBytes(), 30);
  EXPECT_EQ(SssFieldBytes(), SssConfig().header_bytes);
  EXPECT_EQ(SssPacketFields().front().name, "packet type");
}

TEST(SssPacketTest, SplitAtFourKibAndPageBoundaries) {
  auto sizes = [](int64_t bytes, int64_t offset, int max, int page) {
    std::vector<int> out;
    for (const Piece& p : SplitTransfer(bytes, offset, max, page)) out.push_back(p.bytes);
    return out;
  };
  EXPECT_EQ(sizes(4096, 0, 4096, 4096), std::vector<int>({4096}));
  EXPECT_EQ(sizes(4097, 0, 4096, 4096), std::vector<int>({4096, 1}));
  EXPECT_EQ(sizes(4096, 100, 4096, 4096), std::vector<int>({3996, 100}));
  EXPECT_EQ(sizes(10000, 1000, 4096, 4096), std::vector<int>({3096, 4096, 2808}));
  EXPECT_EQ(sizes(3000, 3000, 1000, 4096), std::vector<int>({1000, 96, 1000, 904}));
  EXPECT_EQ(sizes(8192, 0, 4096, 2048), std::vector<int>({2048, 2048, 2048, 2048}));
  EXPECT_EQ(sizes(0, 0, 4096, 4096), std::vector<int>({0}));
  // Offsets within each page: no piece crosses a page boundary.
  for (int64_t off : {0, 1, 4095, 2048}) {
    int64_t at = off;
    for (const Piece& p : SplitTransfer(20000, off, 4096, 4096)) {
      EXPECT_LE(at % 4096 + p.bytes, 4096);
      at += p.bytes;
    }
  }
}

TEST(SssPacketTest, MachineSplitsAWrite) {
  SimConfig c = SssTree(4, 2);
  auto machine = std::move(SssMachine::Create(c)).value();
  SssOp op;
  op.src = 0;
  op.dst = 5;
  op.bytes = 10000;
  op.page_offset = 1000;
  op.measured = true;
  const int64_t id = machine->Submit(op).value();
  RunUntilDone(*machine, id);
  EXPECT_EQ(machine->counters().packets_sent, 3);
  EXPECT_EQ(machine->counters().payload_bytes, 10000);
  EXPECT_EQ(machine->counters().wire_bytes, 10000 + 3 * (30 + 2 * 3));
  // Nodes 0 and 5 hang under different leaf switches: 4 hops (node, leaf, top, leaf, node),
  // the figures behind a run's avg_hops and avg_network_latency_cycles.
  EXPECT_EQ(machine->counters().measured_packets_delivered, 3);
  EXPECT_EQ(machine->counters().measured_packet_hops, 3 * 4);
  // Each packet takes at least one cycle per 2-byte flit.
  EXPECT_GE(machine->counters().measured_packet_network_cycles, (10000 + 3 * (30 + 2 * 3)) / 2);
}

// The paper's example: a 4-byte remote write through one switch puts 30 + 2 = 32 bytes of
// header and trailer on the wire: 36 bytes, efficiency 4/36; at 850 Mb/s of data that is
// 850e6 / (36 x 8) = 2.95 M packets/s, which a stream of them reaches.
TEST(SssPacketTest, FourByteWriteEfficiencyAndPacketRate) {
  SimConfig c = SssTree(4, 2);
  auto m = std::move(SssMachine::Create(c)).value();
  EXPECT_DOUBLE_EQ(m->clock_mhz(), 53.125);  // 1.0625 Gb/s x 8/10 / 16 bits
  std::vector<int64_t> ids;
  for (int i = 0; i < 400; ++i) {
    SssOp op;
    op.src = 0;
    op.dst = 1;
    op.bytes = 4;
    op.measured = true;
    ids.push_back(m->Submit(op).value());
  }
  int64_t first = -1, last = 0, done = 0;
  for (int i = 0; i < 100000 && done < 400; ++i) {
    m->Step();
    for (const SssCompletion& c : m->completions()) {
      ++done;
      if (first < 0) first = c.completed;
      last = c.completed;
    }
  }
  ASSERT_EQ(done, 400);
  EXPECT_EQ(m->counters().wire_bytes, 400 * 36);
  EXPECT_DOUBLE_EQ(static_cast<double>(m->counters().payload_bytes) /
                       static_cast<double>(m->counters().wire_bytes),
                   4.0 / 36);
  // One packet of 18 flits every 18 cycles once the stream runs.
  EXPECT_NEAR(static_cast<double>(last - first), 399 * 18, 4);
  const double pps = 399 / (static_cast<double>(last - first) / (m->clock_mhz() * 1e6));
  EXPECT_NEAR(pps, 850e6 / (36 * 8), 3e3);
}

// routing.in_order: a pair's packets arrive in the order they were sent, though the tree's
// wider upper links give the pair several routes; without it they take those routes in turn.
TEST(SssSwitchingTest, InOrderKeepsFifoBetweenAPair) {
  for (bool in_order : {true, false}) {
    SimConfig c = SssTree(4, 2);
    c.sss.operation = RmaOperation::kMessage;
    c.network.tree_upper_bandwidth = 2;
    c.router.vcs = 2;
    c.router.pe_vcs = 2;
    c.routing.in_order = in_order;
    Result<std::unique_ptr<Network>> made = Network::Create(c, nullptr, false);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Network& net = **made;
    std::map<int, int> up_channel;  // upper channels leaving s1.0 used by n0's packets
    const auto& g = static_cast<const GraphTopology&>(net.topology());
    const int leaf = g.Find("s1.0");
    net.SetHopObserver([&](const HopEvent& e) {
      if (e.node == leaf && net.message(e.msg).src == 0) ++up_channel[e.out_port];
    });
    Rng rng(3);
    std::vector<int64_t> order;
    int64_t next_tag = 0;
    for (int i = 0; i < 100000 && order.size() < 300; ++i) {
      if (i % 25 == 0 && next_tag < 300) {
        net.CreateMessage(0, 15, 1 + static_cast<int>(rng.Uniform(40)), {}, next_tag++);
      }
      if (i % 20 == 0) {  // cross traffic from n1 and n2 over the same upper links
        net.CreateMessage(1 + static_cast<int>(rng.Uniform(2)),
                          8 + static_cast<int>(rng.Uniform(8)),
                          1 + static_cast<int>(rng.Uniform(30)));
      }
      net.Step();
      for (const Delivery& d : net.deliveries()) {
        if (d.tag >= 0) order.push_back(d.tag);
      }
    }
    ASSERT_EQ(order.size(), 300u);
    if (in_order) {
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
      EXPECT_EQ(up_channel.size(), 1u);
    } else {
      EXPECT_EQ(up_channel.size(), 2u);  // both parallel channels up
    }
  }
}

}  // namespace
}  // namespace ukai::sim
