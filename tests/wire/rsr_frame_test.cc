#include "wire/rsr_frame.h"

#include <gtest/gtest.h>

#include <vector>

namespace ukai::wire {
namespace {

FrameHeader Sample() {
  FrameHeader h;
  h.kind = FrameKind::kRsr;
  h.flags = kFlagHasAddress;
  h.payload_len = 5;
  h.source = 0x0102030405060708ull;
  h.target = 0x1112131415161718ull;
  h.context = 7;
  h.endpoint = 9;
  h.handler = 0xdeadbeef;
  h.address = 0xa1a2a3a4a5a6a7a8ull;
  return h;
}

std::vector<uint8_t> Frame(const FrameHeader& h) {
  std::vector<uint8_t> f(kHeaderSize + h.payload_len, 0x5a);
  EncodeHeader(h, {f.data(), kHeaderSize});
  return f;
}

// The swap behind the helpers on big-endian hosts (compiled, not run, on this one).
static_assert(ByteSwap<uint16_t>(0x1122) == 0x2211);
static_assert(ByteSwap<uint32_t>(0x11223344u) == 0x44332211u);
static_assert(ByteSwap<uint64_t>(0x1122334455667788ull) == 0x8877665544332211ull);

// The little-endian helpers at every alignment: bytes in wire order, values back unchanged,
// the neighbours untouched.
TEST(RsrFrame, LittleEndianHelpersAtEveryOffset) {
  for (size_t at = 0; at < 8; ++at) {
    std::vector<uint8_t> b(24, 0xEE);
    PutLe64(b.data() + at, 0x0102030405060708ull);
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(b[at + i], 8 - i) << "offset " << at;
    EXPECT_EQ(b[at + 8], 0xEE);
    if (at > 0) {
      EXPECT_EQ(b[at - 1], 0xEE);
    }
    EXPECT_EQ(GetLe64(b.data() + at), 0x0102030405060708ull);
    EXPECT_EQ(GetLe32(b.data() + at), 0x05060708u);
    EXPECT_EQ(GetLe16(b.data() + at), 0x0708u);
    PutLe32(b.data() + at, 0xA1B2C3D4u);
    EXPECT_EQ(b[at], 0xD4);
    EXPECT_EQ(b[at + 3], 0xA1);
    EXPECT_EQ(GetLe32(b.data() + at), 0xA1B2C3D4u);
    PutLe16(b.data() + at, 0xBEEF);
    EXPECT_EQ(b[at], 0xEF);
    EXPECT_EQ(b[at + 1], 0xBE);
  }
}

TEST(RsrFrame, ByteExactLayout) {
  std::vector<uint8_t> f = Frame(Sample());
  const std::vector<uint8_t> want = {
      0x55, 0x4b, 0x41, 0x49, 1,    1,    56,   0,      // magic "UKAI", version, kind, header_len
      1,    0,    0,    0,    5,    0,    0,    0,      // flags, payload_len
      8,    7,    6,    5,    4,    3,    2,    1,      // source
      0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,   // target
      7,    0,    0,    0,    9,    0,    0,    0,      // context, endpoint
      0xef, 0xbe, 0xad, 0xde, 0,    0,    0,    0,      // handler, reserved
      0xa8, 0xa7, 0xa6, 0xa5, 0xa4, 0xa3, 0xa2, 0xa1};  // address
  ASSERT_EQ(want.size(), kHeaderSize);
  EXPECT_EQ(std::vector<uint8_t>(f.begin(), f.begin() + kHeaderSize), want);
}

TEST(RsrFrame, RoundTrip) {
  std::vector<uint8_t> f = Frame(Sample());
  Result<FrameView> v = DecodeFrame(f);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->header.kind, FrameKind::kRsr);
  EXPECT_TRUE(v->header.has_address());
  EXPECT_EQ(v->header.source, Sample().source);
  EXPECT_EQ(v->header.target, Sample().target);
  EXPECT_EQ(v->header.context, 7u);
  EXPECT_EQ(v->header.endpoint, 9u);
  EXPECT_EQ(v->header.handler, 0xdeadbeefu);
  EXPECT_EQ(v->header.address, Sample().address);
  EXPECT_EQ(v->payload.size(), 5u);
}

TEST(RsrFrame, EveryTruncationIsAnError) {
  std::vector<uint8_t> f = Frame(Sample());
  for (size_t n = 0; n < f.size(); ++n) {
    Result<FrameView> v = DecodeFrame({f.data(), n});
    ASSERT_FALSE(v.ok()) << n;
    EXPECT_EQ(v.status().code(), StatusCode::kOutOfRange) << n;
  }
}

TEST(RsrFrame, RejectsBadFields) {
  auto expect_bad = [](size_t offset, uint8_t value, const char* needle) {
    std::vector<uint8_t> f = Frame(Sample());
    f[offset] = value;
    Result<FrameView> v = DecodeFrame(f);
    ASSERT_FALSE(v.ok()) << needle;
    EXPECT_NE(v.status().message().find(needle), std::string::npos) << v.status().ToString();
  };
  expect_bad(0, 0x00, "magic");
  expect_bad(4, 2, "version");
  expect_bad(5, 0, "kind");
  expect_bad(5, 77, "kind");
  expect_bad(6, 40, "header_len");
  expect_bad(8, 0x80, "flag");
  expect_bad(15, 0xff, "payload_len");
  expect_bad(44, 1, "reserved");
}

// The frame decoder takes the header's verdict from the same checks as DecodeHeader: for
// every byte of the header set to each of a few values, both accept with the same fields
// or both reject with the same status.
TEST(RsrFrame, FrameAndHeaderDecodersAgreeOnEveryHeaderByte) {
  for (size_t offset = 0; offset < kHeaderSize; ++offset) {
    for (uint8_t value : {0x00, 0x01, 0x02, 0x38, 0x40, 0x80, 0xff}) {
      std::vector<uint8_t> f = Frame(Sample());
      f[offset] = value;
      Result<FrameHeader> h = DecodeHeader(f);
      Result<FrameView> v = DecodeFrame(f);
      if (!h.ok()) {
        ASSERT_FALSE(v.ok()) << offset << " " << int{value};
        EXPECT_EQ(v.status().ToString(), h.status().ToString()) << offset;
        continue;
      }
      if (h->frame_size() != f.size()) {  // a length field changed: the payload no longer fits
        EXPECT_FALSE(v.ok()) << offset << " " << int{value};
        continue;
      }
      ASSERT_TRUE(v.ok()) << offset << " " << int{value} << ": " << v.status().ToString();
      EXPECT_EQ(v->header.source, h->source);
      EXPECT_EQ(v->header.handler, h->handler);
      EXPECT_EQ(v->header.address, h->address);
      EXPECT_EQ(v->payload.size(), h->payload_len);
    }
  }
}

TEST(RsrFrame, TrailingBytesRejected) {
  std::vector<uint8_t> f = Frame(Sample());
  f.push_back(0);
  EXPECT_FALSE(DecodeFrame(f).ok());
}

TEST(RsrFrame, ExtendedHeaderSkipped) {
  FrameHeader h = Sample();
  std::vector<uint8_t> f = Frame(h);
  // Grow the header to 64 bytes: 8 extension bytes before the payload.
  f.insert(f.begin() + kHeaderSize, 8, 0xee);
  PutLe16(f.data() + 6, 64);
  Result<FrameView> v = DecodeFrame(f);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->payload.size(), 5u);
  EXPECT_EQ(v->payload[0], 0x5a);
}

TEST(RsrFrame, HeaderOnlyDecodeForStreams) {
  std::vector<uint8_t> f = Frame(Sample());
  Result<FrameHeader> h = DecodeHeader({f.data(), kHeaderSize});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->frame_size(), f.size());
  EXPECT_FALSE(DecodeHeader({f.data(), kHeaderSize}, /*max_payload=*/4).ok());
}

}  // namespace
}  // namespace ukai::wire
