// The graph and tree topologies (topology/graph.h, topology/anynet.h): BookSim2's own anynet
// example files parsed unchanged, the TOML list of links, the tree generator, and clear
// errors for bad files (unknown node, duplicate link, disconnected graph, ...).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/topology/anynet.h"
#include "sim/topology/factory.h"
#include "sim/topology/graph.h"

namespace ukai::sim {
namespace {

// BookSim2's src/examples/anynet/anynet_file, byte for byte.
constexpr char kBookSimExample[] =
    "router 0 node 0 node 1 node 2 router 1\n"
    "router 1 node 3 node 4 node 5\n"
    "router 2 node 6 node 7 node 8 router 1 router 0\n";

std::unique_ptr<GraphTopology> Build(const std::string& text) {
  Result<GraphSpec> spec = ParseAnynet(text, "test.anynet");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  if (!spec.ok()) return nullptr;
  Result<std::unique_ptr<GraphTopology>> g = GraphTopology::Create(*spec);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : nullptr;
}

std::string AnynetError(const std::string& text) {
  Result<GraphSpec> spec = ParseAnynet(text, "bad.anynet");
  if (!spec.ok()) return spec.status().message();
  Result<std::unique_ptr<GraphTopology>> g = GraphTopology::Create(*spec);
  return g.ok() ? "" : g.status().message();
}

TEST(AnynetTest, BookSimExampleFile) {
  std::unique_ptr<GraphTopology> g = Build(kBookSimExample);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->NumTerminals(), 9);
  EXPECT_EQ(g->NumSwitches(), 3);
  EXPECT_EQ(g->NodeName(0), "n0");
  EXPECT_EQ(g->NodeName(9), "r0");
  // BookSim's port order: a router's nodes, then its routers, by number.
  const int r0 = g->Find("r0"), r1 = g->Find("r1"), r2 = g->Find("r2");
  EXPECT_EQ(g->Degree(r0), 5);
  EXPECT_EQ(g->Neighbor(r0, 0).node, g->Find("n0"));
  EXPECT_EQ(g->Neighbor(r0, 2).node, g->Find("n2"));
  EXPECT_EQ(g->Neighbor(r0, 3).node, r1);
  EXPECT_EQ(g->Neighbor(r0, 4).node, r2);
  EXPECT_EQ(g->Neighbor(r1, 3).node, r0);  // declared on router 0's line only
  EXPECT_EQ(g->Neighbor(r1, 4).node, r2);
  EXPECT_EQ(g->Neighbor(g->Find("n7"), 0).node, r2);
  EXPECT_FALSE(g->Forwards(g->Find("n7")));
  EXPECT_TRUE(g->Forwards(r2));
  EXPECT_TRUE(g->UpperChannel(r0, 3));
  EXPECT_FALSE(g->UpperChannel(r0, 0));
  // Channels back and forth are one link: far ends agree.
  for (int v = 0; v < g->NumNodes(); ++v) {
    for (int p = 0; p < g->Degree(v); ++p) {
      const PortRef far = g->Neighbor(v, p);
      EXPECT_EQ(g->Neighbor(far.node, far.port).node, v);
      EXPECT_EQ(g->Neighbor(far.node, far.port).port, p);
    }
  }
  EXPECT_EQ(g->LinkCycles(r0, 3), -1);  // router.link_cycles
}

// The two formats of BookSim2's anynet README and anynet.cpp comment.
TEST(AnynetTest, LatenciesAsBookSimDocumentsThem) {
  std::unique_ptr<GraphTopology> g = Build(
      "router 0 router 1 15 router 2\nrouter 0 node 0 node 1 5 node 2 5\n"
      "router 1 node 3\nrouter 2 node 4\n");
  ASSERT_NE(g, nullptr);
  const int r0 = g->Find("r0"), r1 = g->Find("r1");
  int to_r1 = -1;
  for (int p = 0; p < g->Degree(r0); ++p) {
    if (g->Neighbor(r0, p).node == r1) to_r1 = p;
  }
  ASSERT_GE(to_r1, 0);
  EXPECT_EQ(g->LinkCycles(r0, to_r1), 15);  // one way...
  const PortRef back = g->Neighbor(r0, to_r1);
  EXPECT_EQ(g->LinkCycles(back.node, back.port), -1);  // ...the other keeps the default
  const int n1 = g->Find("n1");
  EXPECT_EQ(g->LinkCycles(n1, 0), 5);  // a node's latency applies both ways
  const PortRef at = g->Neighbor(n1, 0);
  EXPECT_EQ(g->LinkCycles(at.node, at.port), 5);
  EXPECT_EQ(g->LinkCycles(g->Find("n0"), 0), -1);
}

TEST(AnynetTest, AcceptsWhitespaceCaseAndComments) {
  std::unique_ptr<GraphTopology> g =
      Build("// a comment\n\tRouter 0  node 0\tnode 1 router 1 // trailing\n\nROUTER 1 NODE 2\r\n");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->NumTerminals(), 3);
}

TEST(AnynetTest, ErrorsNameFileLineAndWhat) {
  EXPECT_EQ(AnynetError("router 0 node 0 node 1\nrouter 0 node 2 node 0\n"),
            "bad.anynet:2: duplicate link node 0 - router 0 (declared at line 1)");
  EXPECT_EQ(AnynetError("router 0 router 1 node 0\nrouter 1 node 1\nrouter 0 router 1\n"),
            "bad.anynet:3: duplicate link router 0 -> router 1 (declared at line 1)");
  EXPECT_EQ(AnynetError("router 0 node 0\nrouter 1 node 0\n"),
            "bad.anynet:2: node 0 is attached to router 0 and router 1 (a node attaches to "
            "exactly one router)");
  EXPECT_EQ(AnynetError("node 0 node 1\n"),
            "bad.anynet:1: cannot connect node 0 to node 1 (a node attaches to a router)");
  EXPECT_EQ(AnynetError("router 0 node 0 node 2\n"),
            "bad.anynet: node 1 is missing: nodes must be numbered 0..1 without gaps (found "
            "node 2)");
  EXPECT_EQ(AnynetError("router 0 node x\n"),
            "bad.anynet:1: expected a node or router number (an integer >= 0), got 'x'");
  EXPECT_EQ(AnynetError("switch 0 node 1\n"),
            "bad.anynet:1: expected 'router' or 'node' for the line's head, got 'switch'");
  EXPECT_EQ(AnynetError("router 0 node 0 lat\n"),
            "bad.anynet:1: expected a latency (an integer >= 0), got 'lat'");
  EXPECT_EQ(AnynetError("router 0 node 0 node 1\nrouter 1 node 2 node 3\n"),
            "anynet file bad.anynet: the network is disconnected: node 'n2' cannot be reached "
            "from 'n0'");
  EXPECT_EQ(AnynetError(""), "bad.anynet: no node is declared");
}

TEST(AnynetTest, ReadsAFileAndNamesAMissingOne) {
  const std::string path = ::testing::TempDir() + "booksim_example.anynet";
  std::ofstream(path) << kBookSimExample;
  Result<GraphSpec> spec = ReadAnynetFile(path);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->terminals.size(), 9u);
  std::remove(path.c_str());
  Result<GraphSpec> missing = ReadAnynetFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

// The config path: network.file relative to the config's folder, TOML links and their
// errors with positions.
TEST(GraphConfigTest, TomlLinksAndFile) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "g.anynet") << kBookSimExample;
  const std::string file_cfg =
      "[network]\ntopology = \"graph\"\nfile = \"g.anynet\"\n[routing]\nalgorithm = \"source\"\n";
  std::ofstream(dir + "g.toml") << file_cfg;
  Result<std::vector<SimConfig>> points = LoadSimConfigs(dir + "g.toml", {});
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  Result<std::unique_ptr<Topology>> t = MakeTopology(points->front().network);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->NumTerminals(), 9);

  const std::string links =
      "[network]\ntopology = \"graph\"\nnodes = [\"a\", \"b\", \"c\"]\nswitches = 2\n"
      "links = [[\"a\", \"s0\"], [\"b\", \"s0\", 3], {a = \"s0\", b = \"s1\", channels = 2},\n"
      "         [\"c\", \"s1\"]]\n[routing]\nalgorithm = \"source\"\n";
  Result<std::vector<SimConfig>> lp = LoadSimConfigsFromString(links, "l.toml", {});
  ASSERT_TRUE(lp.ok()) << lp.status().ToString();
  Result<std::unique_ptr<Topology>> lt = MakeTopology(lp->front().network);
  ASSERT_TRUE(lt.ok()) << lt.status().ToString();
  const auto& g = static_cast<const GraphTopology&>(**lt);
  EXPECT_EQ(g.NumTerminals(), 3);
  EXPECT_EQ(g.Degree(g.Find("s0")), 4);  // a, b and two channels to s1
  EXPECT_EQ(g.LinkCycles(g.Find("b"), 0), 3);

  auto error = [](const std::string& text) {
    Result<std::vector<SimConfig>> p = LoadSimConfigsFromString(text, "e.toml", {});
    return p.ok() ? std::string() : p.status().message();
  };
  const std::string head = "[network]\ntopology = \"graph\"\nnodes = 2\nswitches = 1\n";
  EXPECT_NE(
      error(head + "links = [[\"n0\", \"s0\"], [\"n1\", \"s9\"]]\n").find("unknown node 's9'"),
      std::string::npos);
  const std::string dup =
      error(head + "links = [[\"n0\", \"s0\"], [\"n1\", \"s0\"], [\"s0\", \"n1\"]]\n");
  EXPECT_NE(dup.find("duplicate link s0 - n1 at e.toml:5:"), std::string::npos) << dup;
  EXPECT_NE(error(head + "links = [[\"n0\", \"s0\"]]\n").find("node 'n1' has no link"),
            std::string::npos);
  EXPECT_NE(error(head + "links = [[\"n0\", \"s0\", -1]]\n").find("network.links: a latency"),
            std::string::npos);
  EXPECT_NE(
      error(head + "links = [{a = \"n0\", b = \"s0\", speed = 2}]\n").find("unknown field 'speed'"),
      std::string::npos);
  EXPECT_NE(error("[network]\ntopology = \"graph\"\n").find("needs network.file"),
            std::string::npos);
  const std::string two =
      "[network]\ntopology = \"graph\"\nnodes = 4\nswitches = 2\n"
      "links = [[\"n0\", \"s0\"], [\"n1\", \"s0\"], [\"n2\", \"s1\"], "
      "[\"n3\", \"s1\"]]\n";
  EXPECT_NE(error(two).find("the network is disconnected: node 'n2' cannot be reached from 'n0'"),
            std::string::npos);
  // Reachable only through an end node, which never forwards.
  const std::string through =
      "[network]\ntopology = \"graph\"\nnodes = 3\nswitches = 2\n"
      "links = [[\"n0\", \"s0\"], [\"n1\", \"s0\"], [\"n1\", \"s1\"], "
      "[\"n2\", \"s1\"]]\n";
  EXPECT_NE(error(through).find("only through end nodes"), std::string::npos);
}

TEST(TreeTest, ShapeNamesAndUpperChannels) {
  Result<GraphSpec> spec = TreeSpec(4, 3, 2);
  ASSERT_TRUE(spec.ok());
  Result<std::unique_ptr<GraphTopology>> made = GraphTopology::Create(*spec);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const GraphTopology& g = **made;
  EXPECT_EQ(g.NumTerminals(), 64);
  EXPECT_EQ(g.NumSwitches(), 16 + 4 + 1);
  const int leaf = g.Find("s1.1"), mid = g.Find("s2.0"), top = g.Find("s3.0");
  EXPECT_EQ(g.Degree(leaf), 4 + 2);  // 4 end nodes, 2 channels up
  EXPECT_EQ(g.Degree(mid), 4 * 2 + 2);
  EXPECT_EQ(g.Degree(top), 4 * 2);
  EXPECT_EQ(g.Neighbor(leaf, 0).node, g.Find("n4"));
  EXPECT_EQ(g.Neighbor(leaf, 4).node, mid);
  EXPECT_EQ(g.Neighbor(leaf, 5).node, mid);
  EXPECT_FALSE(g.UpperChannel(leaf, 0));
  EXPECT_TRUE(g.UpperChannel(leaf, 4));
  EXPECT_EQ(g.Neighbor(g.Find("n63"), 0).node, g.Find("s1.15"));
  EXPECT_FALSE(TreeSpec(1, 3, 1).ok());
  EXPECT_FALSE(TreeSpec(4, 0, 1).ok());
  EXPECT_FALSE(TreeSpec(16, 2, 16).ok());  // 32 ports
  EXPECT_EQ(TreeSpec(4, 3, 40).status().message().rfind("network.tree_upper_bandwidth", 0), 0u);
}

}  // namespace
}  // namespace ukai::sim
