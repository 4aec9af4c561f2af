// `ukai link`, in-process: the calculator's text and JSON output, the 8b/10b table, errors.
#include "cli/link_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

TEST(LinkCommand, PaperExampleAsJson) {
  CliRun r = Cli({"link", "--raw-gbps", "1.0625", "--code", "8b10b", "--payload-bytes", "4",
                  "--switches", "1", "--format", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["data_rate_mbps"].get<double>(), 850);
  EXPECT_DOUBLE_EQ(j["efficiency"].get<double>(), 1.0 / 9);
  EXPECT_NEAR(j["packets_per_second"].get<double>(), 2.951e6, 1e3);
  EXPECT_EQ(j["wire_bytes"].get<int>(), 36);
}

TEST(LinkCommand, TextOutput) {
  CliRun r = Cli({"link", "--code", "none", "--raw-gbps", "2", "--payload-bytes", "64"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("data rate        2000 Mb/s"));
  EXPECT_THAT(r.out, HasSubstr("bytes per packet 96 B"));
  EXPECT_THAT(r.out, HasSubstr("efficiency       0.666667 (64/96)"));
}

TEST(LinkCommand, BadArgumentsAreUsageErrors) {
  for (std::vector<const char*> args :
       std::vector<std::vector<const char*>>{{"link", "--code", "4b5b"},
                                             {"link", "--raw-gbps", "0"},
                                             {"link", "--raw-gbps", "fast"},
                                             {"link", "--payload-bytes", "5000"},
                                             {"link", "--payload-bytes", "-1"},
                                             {"link", "--format", "xml"},
                                             {"link", "8b10b"}}) {
    CliRun r = Cli(args);
    EXPECT_EQ(r.code, kExitUsage) << args[1] << " " << args.back();
    EXPECT_FALSE(r.err.empty());
    EXPECT_EQ(r.out, "");
  }
  EXPECT_THAT(Cli({"link", "--code", "4b5b"}).err, HasSubstr("--code: unknown line code '4b5b'"));
}

TEST(LinkCommand, CodeTableHasEveryGroupInBothDisparities) {
  CliRun r = Cli({"link", "8b10b", "--table"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::set<std::string> names;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    std::istringstream f(line);
    std::string before, name, byte, bits, after, extra;
    ASSERT_TRUE(f >> before >> name >> byte >> bits >> after) << line;
    EXPECT_FALSE(f >> extra) << line;
    EXPECT_TRUE(before == "-" || before == "+");
    EXPECT_TRUE(after == "-" || after == "+");
    EXPECT_EQ(bits.size(), 10u);
    EXPECT_EQ(bits.find_first_not_of("01"), std::string::npos);
    names.insert(before + name);
  }
  EXPECT_EQ(lines, 2 * 268);
  EXPECT_EQ(names.size(), 2u * 268u);
  EXPECT_THAT(r.out, HasSubstr("\n- K.28.5 188 0011111010 +\n"));
  EXPECT_THAT(r.out, HasSubstr("\n+ K.28.5 188 1100000101 -\n"));
  EXPECT_THAT(r.out, HasSubstr("- D.0.0 0 1001110100 -\n"));
}

}  // namespace
}  // namespace ukai::cli
