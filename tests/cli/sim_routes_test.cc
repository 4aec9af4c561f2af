// `ukai sim routes` and `ukai sim check` on source routing, in-process: the route table of a
// tree, the formats, and the errors.
#include "cli/sim_routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cli_run.h"
#include "scratch_path.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kTree[] =
    "[network]\ntopology = \"tree\"\ntree_arity = 2\ntree_levels = 2\n"
    "[router]\nvcs = 1\n[routing]\nalgorithm = \"source\"\n";

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ukai::testing_util::ScratchPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(SimRoutesTest, PrintsTheTreesTable) {
  const std::string path = Write("sim_routes_tree.toml", kTree);
  CliRun r = Cli({"sim", "routes", path.c_str()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# routing.source_routes = shortest (auto), root s2.0;"));
  // n0 and n1 under s1.0; n2, n3 under s1.1: ports children first, then up.
  EXPECT_THAT(r.out, HasSubstr("\nn0 n1 0 1 s1.0:1\n"));
  EXPECT_THAT(r.out, HasSubstr("\nn0 n3 0 3 s1.0:2 s2.0:1 s1.1:1\n"));
  EXPECT_THAT(r.out, HasSubstr("\nn3 n0 0 3 s1.1:2 s2.0:0 s1.0:0\n"));
  CliRun from = Cli({"sim", "routes", path.c_str(), "--from", "n2", "--format", "csv"});
  EXPECT_EQ(from.code, kExitOk) << from.err;
  EXPECT_THAT(from.out, HasSubstr("source,destination,route,switches,ports\n"));
  EXPECT_THAT(from.out, HasSubstr("n2,n3,0,1,s1.1:1\n"));
  EXPECT_THAT(from.out, ::testing::Not(HasSubstr("\nn0,")));  // only rows from n2
  CliRun check = Cli({"sim", "check", path.c_str()});
  EXPECT_EQ(check.code, kExitOk) << check.err;
  EXPECT_THAT(check.out, HasSubstr("source routes (shortest paths, root s2.0, 4 route(s) per "
                                   "pair): 12 routes"));
  std::remove(path.c_str());
}

TEST(SimRoutesTest, Errors) {
  const std::string path = Write("sim_routes_dor.toml", "[network]\nk = 4\n");
  CliRun dor = Cli({"sim", "routes", path.c_str()});
  EXPECT_EQ(dor.code, kExitUsage);
  EXPECT_THAT(dor.err, HasSubstr("route tables are printed for 'source' routing, got 'dor'"));
  std::remove(path.c_str());
  const std::string tree = Write("sim_routes_tree2.toml", kTree);
  CliRun bad = Cli({"sim", "routes", tree.c_str(), "--from", "s1.0"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--from: 's1.0' is not an end node"));
  std::remove(tree.c_str());
}

}  // namespace
}  // namespace ukai::cli
