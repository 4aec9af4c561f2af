#include "ukai/rt/buffer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

namespace ukai::rt {
namespace {

TEST(Buffer, RoundTripsEveryType) {
  Buffer b;
  b.PutU8(0xab);
  b.PutU16(0xbeef);
  b.PutU32(0xdeadbeef);
  b.PutU64(0x0123456789abcdefull);
  b.PutI8(-5);
  b.PutI16(-300);
  b.PutI32(std::numeric_limits<int32_t>::min());
  b.PutI64(-1234567890123ll);
  b.PutF32(1.5f);
  b.PutF64(-2.25e300);
  b.PutBool(true);
  b.PutBool(false);
  b.PutString("héllo");
  b.PutString("");
  const uint8_t bytes[] = {0, 1, 2, 255};
  b.PutBytes(bytes);
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = 42;
  table->entries.push_back({"tcp", {1, 2, 3}});
  b.PutStartpoint(Startpoint(table, 3, 4, 99));

  Reader r(b.payload());
  EXPECT_EQ(*r.GetU8(), 0xab);
  EXPECT_EQ(*r.GetU16(), 0xbeef);
  EXPECT_EQ(*r.GetU32(), 0xdeadbeefu);
  EXPECT_EQ(*r.GetU64(), 0x0123456789abcdefull);
  EXPECT_EQ(*r.GetI8(), -5);
  EXPECT_EQ(*r.GetI16(), -300);
  EXPECT_EQ(*r.GetI32(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(*r.GetI64(), -1234567890123ll);
  EXPECT_EQ(*r.GetF32(), 1.5f);
  EXPECT_EQ(*r.GetF64(), -2.25e300);
  EXPECT_TRUE(*r.GetBool());
  EXPECT_FALSE(*r.GetBool());
  EXPECT_EQ(*r.GetString(), "héllo");
  EXPECT_EQ(*r.GetStringView(), "");
  Result<std::span<const uint8_t>> got = r.GetBytes();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::vector<uint8_t>(got->begin(), got->end()), std::vector<uint8_t>(bytes, bytes + 4));
  Result<Startpoint> sp = r.GetStartpoint();
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ(sp->runtime(), 42u);
  EXPECT_EQ(sp->context(), 3u);
  EXPECT_EQ(sp->endpoint(), 4u);
  EXPECT_EQ(sp->address(), 99u);
  ASSERT_NE(sp->descriptors().Find("tcp"), nullptr);
  EXPECT_EQ(sp->descriptors().Find("tcp")->bytes, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_TRUE(r.AtEnd());
  EXPECT_FALSE(r.GetU8().ok());
}

TEST(Buffer, LittleEndianOnTheWire) {
  Buffer b;
  b.PutU32(0x01020304);
  b.PutF64(1.0);
  const std::vector<uint8_t> want = {3, 4, 3, 2, 1, 10, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
  EXPECT_EQ(std::vector<uint8_t>(b.payload().begin(), b.payload().end()), want);
}

TEST(Buffer, WrongTypeIsAnErrorAndDoesNotAdvance) {
  Buffer b;
  b.PutU32(7);
  Reader r(b.payload());
  Result<uint64_t> wrong = r.GetU64();
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expected u64, found u32"), std::string::npos)
      << wrong.status().ToString();
  EXPECT_EQ(r.offset(), 0u);
  EXPECT_EQ(*r.GetU32(), 7u);
}

TEST(Buffer, TruncationsAreErrors) {
  Buffer b;
  b.PutU64(1);
  b.PutString("abcdef");
  std::span<const uint8_t> all = b.payload();
  for (size_t n = 0; n < all.size(); ++n) {
    Reader r(all.first(n));
    Result<uint64_t> a = r.GetU64();
    if (!a.ok()) continue;
    EXPECT_FALSE(r.GetString().ok()) << n;
  }
}

TEST(Buffer, StringLengthPastEndIsError) {
  const uint8_t evil[] = {12, 0xff, 0xff, 0xff, 0x7f, 'a'};
  Reader r(evil);
  Result<std::string> s = r.GetString();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kOutOfRange);
}

TEST(Buffer, BadBoolAndUnknownTag) {
  const uint8_t bad_bool[] = {11, 2};
  Reader r1(bad_bool);
  EXPECT_FALSE(r1.GetBool().ok());
  const uint8_t unknown[] = {0x63, 0};
  Reader r2(unknown);
  Result<uint8_t> v = r2.GetU8();
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("tag 0x63"), std::string::npos);
}

TEST(Buffer, MalformedStartpointIsError) {
  const uint8_t bad[] = {14, 3, 0, 0, 0, 1, 2, 3};
  Reader r(bad);
  EXPECT_FALSE(r.GetStartpoint().ok());
  EXPECT_EQ(r.offset(), 0u);
}

TEST(Buffer, CopyIsDeepAndClearKeepsHeadroom) {
  Buffer a;
  a.PutU8(1);
  Buffer b = a;
  b.PutU8(2);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(b.size(), 4u);
  b.Clear();
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.block().size(), Buffer::kHeadroom);
}

TEST(Buffer, LargeBytes) {
  std::vector<uint8_t> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 7);
  Buffer b;
  b.PutBytes(big);
  Reader r(b.payload());
  Result<std::span<const uint8_t>> got = r.GetBytes();
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(std::equal(got->begin(), got->end(), big.begin(), big.end()));
}

}  // namespace
}  // namespace ukai::rt
