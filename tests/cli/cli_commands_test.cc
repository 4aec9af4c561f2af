// The command table and RunCli's parsing, in-process (no simulation is run).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "cli/commands.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

TEST(CliCommandsTest, TableHasSimWithARegistrar) {
  bool found = false;
  for (const CommandEntry& e : Commands()) {
    EXPECT_NE(e.register_fn, nullptr) << e.name;
    EXPECT_FALSE(e.description.empty()) << e.name;
    found = found || e.name == "sim";
  }
  EXPECT_TRUE(found);
}

TEST(CliCommandsTest, DescribeWritesToOut) {
  CliRun r = Cli({"sim", "describe"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("\nrouter.vcs\n"));
  EXPECT_EQ(r.err, "");
  CliRun md = Cli({"sim", "describe", "--markdown"});
  EXPECT_EQ(md.code, kExitOk);
  EXPECT_THAT(md.out, HasSubstr("| `router.vcs` |"));
}

TEST(CliCommandsTest, HelpIsSuccess) {
  CliRun r = Cli({"--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("sim"));
  CliRun run = Cli({"sim", "run", "--help"});
  EXPECT_EQ(run.code, kExitOk);
  EXPECT_THAT(run.out, HasSubstr("--set"));
  EXPECT_THAT(run.out, HasSubstr("--format"));
  EXPECT_THAT(run.out, HasSubstr("--out"));
}

TEST(CliCommandsTest, UsageErrorsExit2) {
  EXPECT_EQ(Cli({}).code, kExitUsage);
  CliRun unknown = Cli({"simulate"});
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr("unknown command 'simulate' (known: sim"));
  EXPECT_EQ(Cli({"sim"}).code, kExitUsage);
  EXPECT_EQ(Cli({"sim", "run"}).code, kExitUsage);
  EXPECT_EQ(Cli({"sim", "describe", "--bogus"}).code, kExitUsage);
}

TEST(CliCommandsTest, ConfigErrorThroughTheParser) {
  CliRun r = Cli({"sim", "run", "/nonexistent/x.toml", "--set", "router.vcs=4"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("cannot read config file '/nonexistent/x.toml'"));
}

}  // namespace
}  // namespace ukai::cli
