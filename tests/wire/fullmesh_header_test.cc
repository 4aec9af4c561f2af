// The full-mesh control header: bit-exact layout, round trips for random headers and node
// counts, and every malformed frame rejected with the field named.
#include "wire/fullmesh_header.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "wire/crc32.h"

namespace ukai::wire {
namespace {

TEST(FullMeshHeaderTest, LayoutIsBitExact) {
  // N = 4: number 0x3FF, step 1, links 1,0,1, pid 0x80000001: 46 bits + 2 padding bits = 6 bytes.
  ControlHeader h{0x3FF, true, {true, false, true}, 0x80000001u};
  Result<std::vector<uint8_t>> f = EncodeControlFrame(h, 4, {});
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(ControlHeaderBytes(4), 6u);
  ASSERT_EQ(f->size(), 10u);
  // 11111111 | 11 1 101 10 | 0x00 | 0x00 | 0x00 | 000001 00
  const std::vector<uint8_t> want = {0xFF, 0xF6, 0x00, 0x00, 0x00, 0x04};
  EXPECT_EQ(std::vector<uint8_t>(f->begin(), f->begin() + 6), want);
  EXPECT_EQ(Crc32(std::vector<uint8_t>{'1', '2', '3', '4', '5', '6', '7', '8', '9'}),
            0xCBF43926u);                  // the CRC-32 check value
  EXPECT_EQ(ControlHeaderBytes(32), 10u);  // 74 bits
}

TEST(FullMeshHeaderTest, RandomRoundTrips) {
  Rng rng(4);
  for (int trial = 0; trial < 500; ++trial) {
    const int nodes = 2 + static_cast<int>(rng.Uniform(200));
    ControlHeader h;
    h.number = static_cast<uint16_t>(rng.Uniform(1024));
    h.after_hop = rng.Bernoulli(0.5);
    for (int j = 0; j < nodes - 1; ++j) h.links.push_back(rng.Bernoulli(0.5));
    h.process_id = static_cast<uint32_t>(rng.NextU64());
    std::vector<uint8_t> payload(rng.Uniform(100));
    for (uint8_t& b : payload) b = static_cast<uint8_t>(rng.NextU64());
    Result<std::vector<uint8_t>> f = EncodeControlFrame(h, nodes, payload);
    ASSERT_TRUE(f.ok());
    Result<ControlFrameView> v = DecodeControlFrame(*f, nodes);
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(v->header.number, h.number);
    EXPECT_EQ(v->header.after_hop, h.after_hop);
    EXPECT_EQ(v->header.links, h.links);
    EXPECT_EQ(v->header.process_id, h.process_id);
    EXPECT_EQ(std::vector<uint8_t>(v->payload.begin(), v->payload.end()), payload);
    // Any single flipped bit is caught by the FCS.
    std::vector<uint8_t> bad = *f;
    bad[rng.Uniform(bad.size())] ^= static_cast<uint8_t>(1u << rng.Uniform(8));
    EXPECT_FALSE(DecodeControlFrame(bad, nodes).ok());
  }
}

TEST(FullMeshHeaderTest, MalformedInputNamesTheProblem) {
  ControlHeader h{5, false, {false, true}, 7};
  EXPECT_NE(EncodeControlFrame(h, 4, {}).status().message().find("link bitmap has 2 bits"),
            std::string::npos);
  h.links = {false, true, true};
  h.number = 1024;
  EXPECT_NE(EncodeControlFrame(h, 4, {}).status().message().find("10 bits"), std::string::npos);
  h.number = 5;
  EXPECT_EQ(EncodeControlFrame(h, 1, {}).status().code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> f = *EncodeControlFrame(h, 4, {});
  EXPECT_EQ(DecodeControlFrame(std::span<const uint8_t>(f.data(), 9), 4).status().code(),
            StatusCode::kOutOfRange);
  // Nonzero padding with a matching FCS.
  f[5] |= 1;
  const uint32_t crc = Crc32(std::span<const uint8_t>(f.data(), 6));
  for (int i = 0; i < 4; ++i) f[6 + i] = static_cast<uint8_t>(crc >> (8 * i));
  Result<ControlFrameView> v = DecodeControlFrame(f, 4);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("padding"), std::string::npos);
}

}  // namespace
}  // namespace ukai::wire

namespace ukai::wire {
namespace {

TEST(FullMeshHeaderTest, RandomBytesNeverCrash) {
  Rng rng(9);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> in(rng.Uniform(40));
    for (uint8_t& b : in) b = static_cast<uint8_t>(rng.NextU64());
    const int nodes = static_cast<int>(rng.Uniform(70));
    Result<ControlFrameView> v = DecodeControlFrame(in, nodes);
    if (v.ok()) {
      EXPECT_EQ(v->header.links.size(), static_cast<size_t>(nodes - 1));
    }
  }
}

}  // namespace
}  // namespace ukai::wire
