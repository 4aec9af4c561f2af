// The NIC's per-frame fast path (docs/performance.md, "Gateway NIC path"): the packet
// encoder writing into a reused buffer with the frame passed apart (wire::EncodePacketInto)
// gives the bytes of EncodePacket(); GatewayNic::Receive() into a reused InboundPacket gives
// what a fresh one gets, whatever the previous frame left in it; the steps trace stays
// bounded over a long run.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/nic/frame_source.h"
#include "sim/nic/gateway_nic.h"
#include "wire/gateway_packet.h"

namespace ukai::sim {
namespace {

TEST(GatewayNicReuseTest, EncodeIntoAReusedBufferGivesEncodePacketsBytes) {
  Rng rng = Rng::Stream(13, 1);
  std::vector<uint8_t> reused;
  for (int i = 0; i < 300; ++i) {
    wire::GatewayPacket p;
    p.inbound = rng.NextU64() % 2 == 0;
    p.to_nic = rng.NextU64() % 2 == 0;
    p.broadcast = rng.NextU64() % 5 == 0;
    p.dst = p.broadcast ? wire::kBroadcastNode : static_cast<uint32_t>(rng.NextU64() % 64);
    if (!p.broadcast) {
      for (uint64_t v = rng.NextU64() % 5; v > 0; --v) p.detour.push_back(rng.NextU64() % 64);
    }
    p.has_command = rng.NextU64() % 2 == 0;
    p.command.src = static_cast<uint32_t>(rng.NextU64() % 64);
    p.command.return_detour.assign(rng.NextU64() % 3, 5);
    const int bytes = 14 + static_cast<int>(rng.NextU64() % 1600);  // short and long ones
    const std::vector<uint8_t> frame =
        BuildFrame(0x020000000001ULL, kExternalMacBase | i, static_cast<uint64_t>(i), bytes, false);
    p.frame = frame;
    const std::vector<uint8_t> want = wire::EncodePacket(p).value();
    p.frame.clear();  // EncodePacketInto() reads the frame it is given only
    ASSERT_TRUE(wire::EncodePacketInto(p, frame, &reused).ok()) << i;
    ASSERT_EQ(reused, want) << "packet " << i << ", frame of " << bytes << " bytes";
  }
  // An error leaves the buffer as it was.
  const std::vector<uint8_t> before = reused;
  wire::GatewayPacket bad;
  bad.dst = 3;
  EXPECT_FALSE(wire::EncodePacketInto(bad, std::vector<uint8_t>(10, 0), &reused).ok());
  EXPECT_EQ(reused, before);
}

TEST(GatewayNicReuseTest, ReceiveIntoAReusedPacketEqualsAFreshOne) {
  GatewayNic fresh(8, true), reusing(8, true);
  const Mac known = 0x020000000015ULL, unknown = 0x020000000003ULL;
  for (GatewayNic* nic : {&fresh, &reusing}) nic->Set({known, 21, {9, 4}});
  std::vector<uint8_t> bad = BuildFrame(known, kExternalMacBase, 9, 300, true);
  bad[40] ^= 1;
  // Unicast with a detour, then a broadcast, a discarded frame, a runt, a unicast again:
  // each leaves fields the next must not inherit.
  const std::vector<std::pair<std::vector<uint8_t>, bool>> frames = {
      {BuildFrame(known, kExternalMacBase, 1, 1500, true), true},
      {BuildFrame(unknown, kExternalMacBase, 2, 200, false), false},
      {bad, true},
      {std::vector<uint8_t>(10, 0), false},
      {BuildFrame(known, kExternalMacBase, 3, 64, false), false},
      {BuildFrame(unknown, kExternalMacBase, 4, 1500, true), true},
  };
  InboundPacket reused;
  for (size_t i = 0; i < frames.size(); ++i) {
    const InboundPacket want = fresh.Receive(frames[i].first, frames[i].second);
    reusing.Receive(frames[i].first, frames[i].second, &reused);
    EXPECT_EQ(reused.discarded, want.discarded) << i;
    EXPECT_EQ(reused.broadcast, want.broadcast) << i;
    EXPECT_EQ(reused.node, want.node) << i;
    EXPECT_EQ(reused.detour, want.detour) << i;
    EXPECT_EQ(reused.bytes, want.bytes) << i;
  }
  EXPECT_EQ(reusing.trace(), fresh.trace());
  EXPECT_EQ(reusing.fcs_discarded(), 2);
  EXPECT_EQ(reusing.broadcasts(), 2);
}

TEST(GatewayNicReuseTest, TheTraceStaysBoundedAndKeepsTheLastCall) {
  GatewayNic nic(8, true);
  const Mac known = 0x020000000015ULL;
  nic.Set({known, 21, {}});
  const std::vector<uint8_t> frame = BuildFrame(known, kExternalMacBase, 1, 100, false);
  for (int i = 0; i < 5000; ++i) {
    (void)nic.Receive(frame, false);
    ASSERT_LE(nic.trace().size(), GatewayNic::kTraceLimit + 8) << i;  // 8 steps per call
  }
  EXPECT_EQ(nic.frames_received(), 5000);
  const std::vector<std::string> trace = nic.trace();
  const std::vector<std::string> last = {"S21", "S34", "S35:yes", "S36", "S23", "S24"};
  ASSERT_GE(trace.size(), last.size());
  EXPECT_EQ(std::vector<std::string>(trace.end() - 6, trace.end()), last);
}

}  // namespace
}  // namespace ukai::sim
