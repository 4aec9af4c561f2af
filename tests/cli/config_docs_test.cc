// The config reference stays complete: every schema key is in docs/config.md (with its
// type and default) and in `ukai sim describe`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/experiment/config_schema.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The table row of `key` in Markdown text, or "".
std::string RowOf(const std::string& md, const std::string& key) {
  std::string head = "| `" + key + "` |";
  size_t at = md.find(head);
  if (at == std::string::npos) return "";
  return md.substr(at, md.find('\n', at) - at);
}

TEST(ConfigDocsTest, EveryKeyInDocsConfigMd) {
  const std::string md = ReadFile(std::string(UKAI_SOURCE_DIR) + "/docs/config.md");
  ASSERT_FALSE(md.empty()) << "docs/config.md missing";
  const config::Schema schema = SimConfigSchema();
  for (const config::KeySpec& k : schema.keys()) {
    std::string row = RowOf(md, k.key);
    ASSERT_FALSE(row.empty()) << k.key << " is not in docs/config.md; regenerate the table "
                              << "with `ukai sim describe --markdown`";
    EXPECT_THAT(row, HasSubstr("| " + k.TypeName() + " |")) << k.key;
    EXPECT_THAT(row, HasSubstr("| `" + k.default_text + "` |")) << k.key;
    EXPECT_THAT(row, HasSubstr(k.unit)) << k.key;
  }
}

TEST(ConfigDocsTest, DescribeListsEveryKeyTypeDefaultAndRange) {
  const std::string text = DescribeSimConfig(false);
  const std::string md = DescribeSimConfig(true);
  const config::Schema schema = SimConfigSchema();
  for (const config::KeySpec& k : schema.keys()) {
    EXPECT_THAT(text, HasSubstr("\n" + k.key + "\n    type:    " + k.TypeName())) << k.key;
    EXPECT_THAT(text, HasSubstr("default: " + k.default_text)) << k.key;
    EXPECT_THAT(text, HasSubstr(k.doc)) << k.key;
    EXPECT_FALSE(RowOf(md, k.key).empty()) << k.key;
  }
  EXPECT_THAT(text, HasSubstr("routing.algorithm, traffic.pattern, traffic.message_bytes, "
                              "traffic.interval, traffic.rate, seed"));
  EXPECT_THAT(text, HasSubstr("Routing algorithms (routing.algorithm):\n  dor"));
  EXPECT_THAT(text, HasSubstr("Traffic patterns (traffic.pattern):\n  uniform"));
}

TEST(ConfigDocsTest, DefaultsComeFromSimConfig) {
  config::Schema s = SimConfigSchema();
  EXPECT_EQ(s.Find("router.vcs")->default_text, "4");
  EXPECT_EQ(s.Find("router.hop_cycles")->default_text, "5");
  EXPECT_EQ(s.Find("network.topology")->default_text, "torus");
  EXPECT_EQ(s.Find("network.k")->default_text, "[10, 10]");
  EXPECT_EQ(s.Find("traffic.rate")->default_text, "0.1");
  EXPECT_EQ(s.Find("measure.mode")->default_text, "messages");
  EXPECT_EQ(s.Find("measure.warmup_messages")->default_text, "3000");
}

}  // namespace
}  // namespace ukai::sim
