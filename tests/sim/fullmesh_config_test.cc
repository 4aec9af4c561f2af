// Full-mesh workload parsing: operation items and groups, good and malformed (every malformed
// input is an error naming the field, never a crash: random garbage included).
#include <gtest/gtest.h>

#include <string>

#include "core/rng.h"
#include "sim/fullmesh/fullmesh_config.h"

namespace ukai::sim::fullmesh {
namespace {

FullMeshConfig WithGroup() {
  FullMeshConfig c;
  c.Normalize();
  c.comms.push_back({"A", {0, 1, 2, 3}});
  return c;
}

TEST(FullMeshConfigTest, ParsesEveryField) {
  Result<Operation> op =
      ParseOperation("at=1.5 op=broadcast root=2 bytes=4096 comm=A tag=7", WithGroup());
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_EQ(op->type, OpType::kMulticast);
  EXPECT_TRUE(op->broadcast_name);
  EXPECT_DOUBLE_EQ(op->at_us, 1.5);
  EXPECT_EQ(op->root, 2);
  EXPECT_EQ(op->bytes, 4096);
  EXPECT_EQ(op->comm, 1);
  EXPECT_EQ(op->tag, 7u);
}

TEST(FullMeshConfigTest, MalformedItemsNameTheField) {
  const struct {
    const char* text;
    const char* want;
  } cases[] = {
      {"op=p2p root=0 dest=1", "missing field 'bytes'"},
      {"root=0 bytes=4", "missing field 'op'"},
      {"op=p2q bytes=4", "unknown operation 'p2q'"},
      {"op=p2p root=0 bytes=4", "a p2p needs dest=NODE"},
      {"op=scatter bytes=4 comm=B", "unknown communicator 'B'"},
      {"op=scatter bytes=-4", "bytes = '-4' is not an integer >= 0"},
      {"op=scatter bytes=4x", "bytes = '4x' is not an integer >= 0"},
      {"op=scatter bytes=4 at=soon", "at = 'soon' is not a time >= 0"},
      {"op=scatter bytes=4 at=-1", "at = '-1' is not a time >= 0"},
      {"op=scatter bytes=4 size", "'size' is not field=value"},
      {"op=scatter bytes=4 colour=red", "unknown field 'colour'"},
  };
  for (const auto& c : cases) {
    Result<Operation> op = ParseOperation(c.text, WithGroup());
    ASSERT_FALSE(op.ok()) << c.text;
    EXPECT_NE(op.status().message().find(c.want), std::string::npos)
        << c.text << ": " << op.status().message();
  }
}

TEST(FullMeshConfigTest, RandomGarbageNeverCrashes) {
  Rng rng(5);
  const std::string alphabet = "op=p2ptrotdesbyc01234567890.-= \t,xAW";
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int len = static_cast<int>(rng.Uniform(40));
    for (int j = 0; j < len; ++j) text += alphabet[rng.Uniform(alphabet.size())];
    (void)ParseOperation(text, WithGroup());
  }
}

}  // namespace
}  // namespace ukai::sim::fullmesh
