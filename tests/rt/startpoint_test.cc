#include "ukai/rt/startpoint.hpp"

#include <gtest/gtest.h>

namespace ukai::rt {
namespace {

Startpoint Sample() {
  auto t = std::make_shared<DescriptorTable>();
  t->runtime = 0x1122334455667788ull;
  t->entries.push_back({"inproc", {9, 9, 9, 9, 9, 9, 9, 9}});
  t->entries.push_back({"tcp", {0x39, 0x30, 1, 'h', 1, 'h'}});
  return Startpoint(t, 5, 6);
}

TEST(Startpoint, SerializeRoundTrip) {
  Startpoint sp = Sample().WithAddress(0xfeed);
  std::vector<uint8_t> bytes = sp.Serialize();
  size_t used = 0;
  Result<Startpoint> back = Startpoint::Deserialize(bytes, &used);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(used, bytes.size());
  EXPECT_EQ(*back, sp);
  EXPECT_EQ(back->descriptors().entries.size(), 2u);
  EXPECT_EQ(back->descriptors().Find("tcp")->bytes, sp.descriptors().Find("tcp")->bytes);
}

TEST(Startpoint, TextRoundTrip) {
  Startpoint sp = Sample();
  std::string text = sp.ToString();
  EXPECT_EQ(text.rfind("ukai-sp1:", 0), 0u);
  Result<Startpoint> back = Startpoint::FromString("  " + text + "\n");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, sp);
  EXPECT_FALSE(back->address().has_value());
}

TEST(Startpoint, BadTextIsError) {
  EXPECT_FALSE(Startpoint::FromString("").ok());
  EXPECT_FALSE(Startpoint::FromString("ukai-sp1:0").ok());
  EXPECT_FALSE(Startpoint::FromString("ukai-sp1:zz").ok());
  std::string text = Sample().ToString();
  EXPECT_FALSE(Startpoint::FromString(text + "00").ok());
  EXPECT_FALSE(Startpoint::FromString(text.substr(0, text.size() - 2)).ok());
}

TEST(Startpoint, EveryTruncationIsError) {
  std::vector<uint8_t> bytes = Sample().Serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(Startpoint::Deserialize({bytes.data(), n}).ok()) << n;
  }
}

TEST(Startpoint, NullStartpoint) {
  Startpoint sp;
  EXPECT_FALSE(sp.valid());
  EXPECT_EQ(sp.runtime(), 0u);
  EXPECT_TRUE(sp.descriptors().entries.empty());
}

}  // namespace
}  // namespace ukai::rt
