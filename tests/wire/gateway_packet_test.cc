// The gateway packet codec (wire/gateway_packet.h) and the Ethernet FCS (wire/crc32.h):
// known CRC values, round trips of every variant, a byte-exact layout check, and a
// specific error for every kind of malformed input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/crc32.h"
#include "wire/gateway_packet.h"

namespace ukai::wire {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> Frame(size_t payload) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 0x05, 0x52, 0x54, 0, 0x12, 0x34, 0x56, 0x08, 0};
  for (size_t i = 0; i < payload; ++i) f.push_back(static_cast<uint8_t>(i * 7));
  return f;
}

TEST(Crc32Test, KnownValuesAndFcs) {
  EXPECT_EQ(Crc32(Bytes("123456789")), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(Crc32({}), 0u);
  EXPECT_EQ(Crc32(Bytes("The quick brown fox jumps over the lazy dog")), 0x414FA339u);
  // Incremental = one shot, at every split (the 4-byte loop and the tail).
  const std::vector<uint8_t> data = Frame(100);
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    std::span<const uint8_t> all(data);
    EXPECT_EQ(Crc32(all.subspan(cut), Crc32(all.first(cut))), Crc32(all)) << cut;
  }
  std::vector<uint8_t> f = Frame(46);
  AppendFcs(&f);
  ASSERT_EQ(f.size(), 64u);  // the minimum Ethernet frame
  EXPECT_TRUE(FcsOk(f));
  EXPECT_EQ(StoredFcs(f), Crc32(std::span<const uint8_t>(f).first(60)));
  EXPECT_EQ(f[60], static_cast<uint8_t>(StoredFcs(f)));  // least significant byte first
  for (size_t i = 0; i < f.size(); ++i) {
    std::vector<uint8_t> g = f;
    g[i] ^= 0x10;
    EXPECT_FALSE(FcsOk(g)) << "flip at " << i;
  }
  EXPECT_FALSE(FcsOk(std::vector<uint8_t>{1, 2, 3}));
}

GatewayPacket Outbound() {
  GatewayPacket p;
  p.to_nic = true;
  p.dst = 8;
  p.has_command = true;
  p.command.return_detour = {9, 13};
  p.command.src = 21;
  p.command.dst = 8;
  p.command.cmd = kCmdChecksum;
  p.frame = Frame(46);
  return p;
}

TEST(GatewayPacketTest, ByteExactLayout) {
  GatewayPacket p = Outbound();
  p.detour = {0x01020304};
  Result<std::vector<uint8_t>> b = EncodePacket(p);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  // flags, n=1, via, dst, length | m=2, via, via, src, dst, cmd | frame_len, frame | pad | crc
  const std::vector<uint8_t> head = {0x05, 1, 1, 2, 3, 4, 0, 0, 0, 8};
  EXPECT_EQ(std::vector<uint8_t>(b->begin(), b->begin() + 10), head);
  const size_t size = 12 + 1 + 8 + 4 + 4 + 1 + 2 + 60;  // 92: already a multiple of 4
  ASSERT_EQ(b->size(), size + 4);
  EXPECT_EQ(EncodedSize(p), b->size());
  EXPECT_EQ(((*b)[10] << 8) | (*b)[11], static_cast<int>(b->size()));
  const std::vector<uint8_t> cmd = {2, 0, 0, 0, 9, 0, 0, 0, 13, 0, 0, 0, 21, 0, 0, 0, 8, 1, 0, 60};
  EXPECT_EQ(std::vector<uint8_t>(b->begin() + 12, b->begin() + 32), cmd);
  EXPECT_EQ(std::vector<uint8_t>(b->begin() + 32, b->begin() + 92), p.frame);
  const uint32_t crc = Crc32(std::span<const uint8_t>(*b).first(92));
  EXPECT_EQ((*b)[92], crc >> 24);
  EXPECT_EQ((*b)[95], crc & 0xFF);
}

TEST(GatewayPacketTest, RoundTripsEveryVariant) {
  std::vector<GatewayPacket> cases;
  cases.push_back(Outbound());
  GatewayPacket in;
  in.inbound = true;
  in.detour = {14, 22, 3, 0};
  in.dst = 21;
  in.frame = Frame(1486);
  cases.push_back(in);
  GatewayPacket bc;
  bc.broadcast = true;
  bc.dst = kBroadcastNode;
  for (size_t payload : {0, 1, 2, 3, 4, 5}) {
    bc.frame = Frame(payload);  // every padding length
    cases.push_back(bc);
  }
  for (const GatewayPacket& p : cases) {
    Result<std::vector<uint8_t>> b = EncodePacket(p);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(b->size() % 4, 0u);
    Result<GatewayPacket> back = DecodePacket(*b);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == p);
  }
}

TEST(GatewayPacketTest, EncoderRefusesWhatCannotBeEncoded) {
  auto error = [](GatewayPacket p) { return EncodePacket(p).status().message(); };
  GatewayPacket p = Outbound();
  p.detour = {1, 2, 3, 4, 5};
  EXPECT_THAT(error(p), HasSubstr("more than 4 via"));
  p = Outbound();
  p.frame.resize(13);
  EXPECT_THAT(error(p), HasSubstr("frame of 13 bytes"));
  p.frame.resize(kMaxFrameBytes + 1);
  EXPECT_THAT(error(p), HasSubstr("frame of 9019 bytes"));
  p = Outbound();
  p.broadcast = true;
  EXPECT_THAT(error(p), HasSubstr("broadcast"));
  p = Outbound();
  p.command.cmd = 0x40;
  EXPECT_THAT(error(p), HasSubstr("unknown cmd bits 0x40"));
}

// Each malformation gives its own message naming the field.
TEST(GatewayPacketTest, DecoderNamesEveryMalformation) {
  // Offsets: flags 0, n 1, dst 2-5, length 6-7, m 8, vias 9-16, src 17-20, dst 21-24,
  // cmd 25, frame_len 26-27, frame 28-87, crc 88-91.
  const std::vector<uint8_t> good = EncodePacket(Outbound()).value();
  ASSERT_EQ(good.size(), 92u);
  struct Case {
    const char* what;
    size_t at;
    uint8_t value;
    const char* expect;
  };
  for (const Case& c :
       {Case{"flags", 0, 0x25, "flags 0x25"}, Case{"broadcast", 0, 0x07, "broadcast must carry"},
        Case{"via count", 1, 9, "detour count = 9"}, Case{"length", 7, 0, "length field"},
        Case{"cmd", 25, 0x81, "cmd 0x81"}, Case{"command detour", 8, 5, "command detour count = 5"},
        Case{"frame length", 27, 2, "frame length"}, Case{"frame byte", 40, 0xEE, "CRC mismatch"},
        Case{"crc", 91, 0x00, "CRC mismatch"}}) {
    std::vector<uint8_t> b = good;
    b[c.at] = c.value;
    if (b == good) b[c.at] ^= 1;
    Result<GatewayPacket> r = DecodePacket(b);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_THAT(r.status().message(), HasSubstr(c.expect)) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kParseError) << c.what;
  }
  // Every truncation is refused; before the length field it names the field cut short.
  for (size_t n = 0; n < good.size(); ++n) {
    Result<GatewayPacket> r = DecodePacket(std::span<const uint8_t>(good).first(n));
    ASSERT_FALSE(r.ok()) << n;
    if (n < 8) {
      EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << n;
      EXPECT_THAT(r.status().message(), HasSubstr("truncated")) << n;
    }
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_THAT(DecodePacket(longer).status().message(), HasSubstr("length field 92"));
  // Non-zero padding: a frame of 61 bytes leaves 3 bytes of padding.
  GatewayPacket p = Outbound();
  p.frame = Frame(47);
  std::vector<uint8_t> padded = EncodePacket(p).value();
  padded[padded.size() - 5] = 1;
  EXPECT_THAT(DecodePacket(padded).status().message(), HasSubstr("non-zero padding"));
}

}  // namespace
}  // namespace ukai::wire
