#include "wire/link_rate.h"

#include <gtest/gtest.h>

namespace ukai::wire {
namespace {

TEST(LinkRate, PaperExampleOneSwitchFourByteWrite) {
  LinkParams p;  // defaults: 1.0625 Gb/s, 8b10b, 4 B, 1 switch
  Result<LinkRates> r = ComputeLinkRates(p);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->data_rate_bps, 850e6);
  EXPECT_EQ(r->overhead_bytes, 32u);
  EXPECT_EQ(r->wire_bytes, 36u);
  EXPECT_DOUBLE_EQ(r->efficiency, 1.0 / 9.0);
  EXPECT_DOUBLE_EQ(r->packets_per_second, 850e6 / (36 * 8));
  EXPECT_NEAR(r->packets_per_second, 2.951e6, 1e3);
  // The paper's printed 24 M packets/s is 850e6 / 36: bits taken for bytes.
  EXPECT_NEAR(r->packets_per_second * 8, 850e6 / 36, 1);
}

TEST(LinkRate, NoCodeAndMoreSwitches) {
  LinkParams p;
  p.code = LineCode::kNone;
  p.raw_gbps = 10;
  p.payload_bytes = 4096;
  p.switches = 3;
  Result<LinkRates> r = ComputeLinkRates(p);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->data_rate_bps, 10e9);
  EXPECT_EQ(r->wire_bytes, 4096u + 36u);
  EXPECT_DOUBLE_EQ(r->efficiency, 4096.0 / 4132.0);
  EXPECT_DOUBLE_EQ(r->payload_rate_bps, 10e9 * 4096.0 / 4132.0);
}

TEST(LinkRate, BadParametersAreErrors) {
  LinkParams p;
  p.raw_gbps = 0;
  EXPECT_EQ(ComputeLinkRates(p).status().code(), StatusCode::kInvalidArgument);
  p.raw_gbps = -1;
  EXPECT_NE(ComputeLinkRates(p).status().message().find("--raw-gbps"), std::string::npos);
  p = LinkParams{};
  p.payload_bytes = 4097;
  EXPECT_NE(ComputeLinkRates(p).status().message().find("--payload-bytes"), std::string::npos);
  EXPECT_FALSE(ParseLineCode("4b5b").ok());
  EXPECT_EQ(*ParseLineCode("none"), LineCode::kNone);
}

}  // namespace
}  // namespace ukai::wire
