// The SSS-CORE network's configs through the front door (src/sim/experiment/front_door.h):
// "graph" and "tree" are topologies of the flit-level model, and the errors only the
// simulator can find (a node name, a file, a combination of keys) name their key and the
// place where it was written (found by the key the simulator's Status carries).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sim/experiment/front_door.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kTree[] =
    "[network]\n"                // 1
    "topology = \"tree\"\n"      // 2
    "tree_arity = 2\n"           // 3
    "tree_levels = 2\n"          // 4
    "[router]\n"                 // 5
    "vcs = 1\n"                  // 6
    "vc_buffer_flits = 2200\n"   // 7
    "switching = \"vct-saf\"\n"  // 8
    "[routing]\n"                // 9
    "algorithm = \"source\"\n"   // 10
    "[traffic]\n"                // 11
    "operation = \"write\"\n";   // 12

Result<LoadedConfig> Load(const std::string& text, std::vector<std::string> sets = {}) {
  return LoadConfigFromString(text, "t.toml", sets);
}

TEST(SssConfigTest, GraphAndTreeAreTopologiesOfTheFlitModel) {
  Result<LoadedConfig> tree = Load(kTree);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(tree->model->name, "flit");
  EXPECT_EQ(tree->topology, "tree");
  Result<LoadedConfig> graph = Load(
      "[network]\ntopology = \"graph\"\nnodes = 2\nswitches = 1\n"
      "links = [[\"n0\", \"s0\"], [\"n1\", \"s0\"]]\n[routing]\nalgorithm = \"source\"\n");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(graph->model->name, "flit");
  EXPECT_EQ(graph->topology, "graph");
}

TEST(SssConfigTest, ErrorsFoundByTheSimulatorNameKeyAndPlace) {
  struct Case {
    std::string text;
    std::string key;
    std::string message;
  };
  const Case cases[] = {
      {std::string(kTree) + "sources = [\"s1.0\"]\n", "traffic.sources",
       "traffic.sources: 's1.0' is not an end node of the graph of 4 end nodes and 3 switches "
       "(tree of 2 levels of arity 2) at t.toml:13:11"},
      {std::string(kTree) + "multicast = \"hierarchical\"\nmulticast_group_size = 4\n",
       "traffic.multicast_group_size",
       "traffic.multicast_group_size: 4 members, but a source has only 3 other end nodes at "
       "t.toml:14:24"},
      {"[network]\ntopology = \"graph\"\nfile = \"no_such.anynet\"\n[routing]\n"
       "algorithm = \"source\"\n",
       "network.file", "is not a readable file at t.toml:3:8"},
      {"[network]\ntopology = \"tree\"\ntree_arity = 4\ntree_upper_bandwidth = 30\n[routing]\n"
       "algorithm = \"source\"\n",
       "network.tree_upper_bandwidth", "at t.toml:4:24"},
  };
  for (const Case& c : cases) {
    Result<LoadedConfig> r = Load(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.status().message(), HasSubstr(c.key));
    EXPECT_THAT(r.status().message(), HasSubstr(c.message));
  }
  Result<LoadedConfig> wormhole = Load(kTree, {"router.switching=\"wormhole\""});
  ASSERT_FALSE(wormhole.ok());
  EXPECT_THAT(wormhole.status().message(),
              HasSubstr("not 'wormhole' in --set router.switching=\"wormhole\""));
}

}  // namespace
}  // namespace ukai::sim
