// Config errors of `ukai sim run`: each kind of bad input gives its own message naming the
// key and the place (file:line:column or the --set argument). Table-driven.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/config/toml_reader.h"
#include "scratch_path.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

struct BadConfig {
  const char* name;
  const char* toml;
  std::vector<std::string> sets;
  const char* expected;   // substring of the error message
  const char* also = "";  // a second one (for messages worded by the simulator)
};

class SimConfigErrorTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(SimConfigErrorTest, SpecificMessageWithKeyAndPlace) {
  const BadConfig& c = GetParam();
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(c.toml, "exp.toml", c.sets);
  ASSERT_FALSE(r.ok()) << c.name << " was accepted";
  EXPECT_THAT(r.status().message(), HasSubstr(c.expected)) << r.status().ToString();
  EXPECT_THAT(r.status().message(), HasSubstr(c.also)) << r.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimConfigErrorTest,
    ::testing::Values(
        BadConfig{"UnknownKey",
                  "[router]\nvcs = 4\nspeed = 3\n",
                  {},
                  "router.speed: unknown key at exp.toml:3:1"},
        BadConfig{"TypoWithSuggestion",
                  "[router]\nvc_bufer_flits = 8\n",
                  {},
                  "router.vc_bufer_flits: unknown key (did you mean 'router.vc_buffer_flits'?) "
                  "at exp.toml:2:1"},
        BadConfig{"TableTypo",
                  "[trafic]\nrate = 0.1\n",
                  {},
                  "trafic.rate: unknown key (did you mean 'traffic.rate'?) at exp.toml:2:1"},
        BadConfig{"KeyInWrongTable",
                  "[network]\nvcs = 4\n",
                  {},
                  "network.vcs: unknown key (did you mean 'router.vcs'?) at exp.toml:2:1"},
        BadConfig{"WrongType",
                  "[router]\nvcs = \"4\"\n",
                  {},
                  "router.vcs: expected an integer, got a string (\"4\") at exp.toml:2:7"},
        BadConfig{"WrongTypeFloat",
                  "[traffic]\nrate = \"high\"\n",
                  {},
                  "traffic.rate: expected a number, got a string (\"high\") at exp.toml:2:8"},
        BadConfig{"OutOfRange",
                  "[router]\nvcs = 0\n",
                  {},
                  "router.vcs: value 0 out of range [1, 32] at exp.toml:2:7"},
        BadConfig{"RateOutOfRange",
                  "[traffic]\nrate = 1.5\n",
                  {},
                  "traffic.rate: value 1.5 out of range (0, 1] at exp.toml:2:8"},
        BadConfig{"RateZero",
                  "[traffic]\nrate = 0\n",
                  {},
                  "traffic.rate: value 0.0 out of range (0, 1] at exp.toml:2:8"},
        BadConfig{"SweepItemOutOfRange",
                  "[traffic]\nmessage_bytes = [64, 0]\n",
                  {},
                  "traffic.message_bytes: value 0 out of range [1, 1073741824] at exp.toml:2:17"},
        BadConfig{"BadEnum",
                  "[network]\ntopology = \"ring\"\n",
                  {},
                  "network.topology: 'ring' is not one of mesh, torus, group, graph, tree, "
                  "cmesh, flatfly, fattree, dragonfly, fullmesh at exp.toml:2:12"},
        BadConfig{
            "BadEnumSuggestion",
            "[router]\nswitching = \"wormhol\"\n",
            {},
            "router.switching: 'wormhol' is not one of wormhole, vct, vct-saf, saf (did you mean "
            "'wormhole'?) at exp.toml:2:13"},
        BadConfig{"UnknownRouting",
                  "[routing]\nalgorithm = \"dorr\"\n",
                  {},
                  "routing.algorithm: 'dorr' is not one of dor, duato"},
        BadConfig{"UnknownPattern",
                  "[traffic]\npattern = [\"uniform\", \"transpos\"]\n",
                  {},
                  "traffic.pattern: 'transpos' is not one of uniform, uniform_self, transpose"},
        BadConfig{"KListLength",
                  "[network]\nn = 2\nk = [4, 4, 4]\n",
                  {},
                  "network.k: has 3 radices but network.n = 2 (give one int for every "
                  "dimension, or a list of network.n ints) at exp.toml:3:5"},
        BadConfig{"KListLengthDefaultN",
                  "[network]\nk = [4]\n",
                  {},
                  "network.k: has 1 radices but network.n = 2 (the default)"},
        BadConfig{"KTooSmall",
                  "[network]\nk = [4, 1]\n",
                  {},
                  "network.k: value 1 out of range [2, 65536] at exp.toml:2:5"},
        BadConfig{"TooManyNodes",
                  "[network]\nn = 3\nk = 1024\n",
                  {},
                  "network.k: the network would have more than 67108864 nodes"},
        BadConfig{"HotspotNode",
                  "[traffic]\nhotspot_nodes = [3, 100]\n",
                  {},
                  "traffic.hotspot_nodes: node 100 does not exist (the network has nodes "
                  "0..99) at exp.toml:2:17"},
        // Rules of the simulator, checked for every point before any runs.
        BadConfig{"RoutingNeedsMoreVcs",
                  "[router]\nvcs = 2\n[routing]\nalgorithm = [\"dor\", \"duato\"]\n",
                  {},
                  "at exp.toml:4:13 (point 2 of 2: routing.algorithm = duato, traffic.pattern = "
                  "uniform)",
                  "needs router.vcs >= 3"},
        BadConfig{"PatternNeedsEqualRadices",
                  "[network]\nk = [4, 8]\n[traffic]\npattern = \"transpose\"\n",
                  {},
                  "traffic.pattern: 'transpose'",
                  "at exp.toml:4:11"},
        BadConfig{"PatternNeedsPowerOfTwo",
                  "[network]\nk = 3\n",
                  {"traffic.pattern=bitcomp"},
                  "traffic.pattern: 'bitcomp'",
                  "in --set traffic.pattern=bitcomp"},
        BadConfig{"VctNeedsWholeMessage",
                  "[router]\nswitching = \"vct\"\n[traffic]\n"
                  "message_bytes = 64\n",
                  {},
                  "router.switching",
                  "at exp.toml:2:13"},
        BadConfig{"ScalarGivenList",
                  "[router]\nvcs = [2, 4]\n",
                  {},
                  "router.vcs: expected a single int, got a list at exp.toml:2:7"},
        BadConfig{"UnusedSweep",
                  "[traffic]\ninjection = \"interval\"\nrate = [0.1, 0.2]\n",
                  {},
                  "traffic.rate: is swept but traffic.injection = \"interval\" does not use it"},
        BadConfig{"NegativeSeed", "seed = -1\n", {}, "seed: value -1 out of range >= 0"},
        BadConfig{"TomlSyntax",
                  "[router]\nvcs = 4\n[traffic\nrate = 0.1\n",
                  {},
                  "TOML syntax error at exp.toml:3:"},
        BadConfig{
            "TomlSyntaxValue", "[router]\nvcs = 4x\n", {}, "TOML syntax error at exp.toml:2:"},
        BadConfig{"SetWithoutEquals",
                  "",
                  {"router.vcs"},
                  "bad argument '--set router.vcs': expected --set key=value"},
        BadConfig{"SetUnknownKey",
                  "",
                  {"router.vc=4"},
                  "router.vc: unknown key (did you mean 'router.vcs'?) in --set router.vc=4"},
        BadConfig{"SetOutOfRange",
                  "",
                  {"router.vcs=100"},
                  "router.vcs: value 100 out of range [1, 32] in --set router.vcs=100"},
        BadConfig{"SetWrongType",
                  "",
                  {"measure.max_cycles=lots"},
                  "measure.max_cycles: expected an integer, got a string (\"lots\") in --set "
                  "measure.max_cycles=lots"},
        BadConfig{"SetBadEnum",
                  "",
                  {"measure.mode=time"},
                  "measure.mode: 'time' is not one of messages, cycles, booksim, "
                  "booksim_throughput in --set "
                  "measure.mode=time"},
        BadConfig{"SetKLength",
                  "[network]\nn = 3\nk = 4\n",
                  {"network.k=[4,4]"},
                  "network.k: has 2 radices but network.n = 3 (give one int for every "
                  "dimension, or a list of network.n ints) in --set network.k=[4,4]"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SimConfigErrorTest, MissingFileIsAnIoError) {
  Result<std::vector<SimConfig>> r = LoadSimConfigs("/nonexistent/exp.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/exp.toml"));
}

TEST(SimConfigErrorTest, NotARegularFileIsRefused) {
  for (const char* path : {"/dev/zero", "/"}) {
    Result<std::vector<SimConfig>> r = LoadSimConfigs(path, {});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), StatusCode::kIoError);
    EXPECT_THAT(r.status().message(), HasSubstr("not a regular file")) << path;
  }
  EXPECT_THAT(LoadSimConfigs("/", {}).status().message(), HasSubstr("is a directory"));
}

TEST(SimConfigErrorTest, ConfigLargerThanTheCapIsRefused) {
  const std::string path = ukai::testing_util::ScratchPath("config_errors_big.toml");
  {
    std::ofstream f(path);
    f << "seed = 1\n" << std::string(config::kMaxConfigBytes, '#') << "\n";
  }
  Result<std::vector<SimConfig>> r = LoadSimConfigs(path, {});
  std::remove(path.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("is larger than 1048576 bytes"));
  EXPECT_TRUE(LoadSimConfigsFromString("seed = 1\n" + std::string(1000, '#'), "x", {}).ok());
}

// The examples of networks too large for the machine: refused before anything is
// built, at once, naming the keys that drive the size.
TEST(SimConfigErrorTest, NetworkTooLargeForMemoryIsRefusedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(
      "", "exp.toml", {"network.k=1024", "router.vcs=32", "router.vc_buffer_flits=4096"});
  ASSERT_FALSE(r.ok());
  for (const char* s :
       {"run.memory_limit: the network needs about 8.03 TiB", "network.k", "router.vcs = 32",
        "router.vc_buffer_flits = 4096", "in --set network.k=1024"}) {
    EXPECT_THAT(r.status().message(), HasSubstr(s));
  }
  // 2^26 nodes, the most ukai simulates.
  r = LoadSimConfigsFromString("[network]\nk = 8192\n", "exp.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("67108864 nodes"));
  EXPECT_THAT(r.status().message(), HasSubstr("at exp.toml:2:5"));
  // With the limit raised, a 2^26-node network with 32 VCs overflows the router state index;
  // also found without building anything.
  r = LoadSimConfigsFromString("[network]\nk = 8192\n[router]\nvcs = 32\n", "exp.toml",
                               {"run.memory_limit=1000000000000000"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("67108864 nodes are too many for the router state "
                                              "index with router.vcs = 32"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

TEST(SimConfigErrorTest, IntervalShorterThanTheMessageIsRefusedNamingBothKeys) {
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(
      "[traffic]\ninjection = \"interval\"\ninterval = [100, 1]\n", "exp.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("traffic.interval = 1 cycles between messages of 16 flits "
                        "(traffic.message_bytes = 64, router.flit_bytes = 4) offers 16 "
                        "flits/node/cycle, but a node injects at most 1 flit per cycle: set "
                        "traffic.interval >= 16, send shorter messages, or bound the sender with "
                        "traffic.source_queue at exp.toml:3:12 "
                        "(point 2 of 2"));
  EXPECT_TRUE(LoadSimConfigsFromString("[traffic]\ninjection = \"interval\"\ninterval = 16\n",
                                       "exp.toml", {})
                  .ok());
}

TEST(SimConfigErrorTest, LaterSetWinsOverAnInvalidEarlierOne) {
  Result<std::vector<SimConfig>> r =
      LoadSimConfigsFromString("", "exp.toml", {"router.vcs=0", "router.vcs=4"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].router.vcs, 4);
  r = LoadSimConfigsFromString("", "exp.toml", {"traffic.rate=[0.1, 0.2"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("is the closing ']' missing?"));
}

TEST(SimConfigErrorTest, EveryProblemIsReported) {
  Result<std::vector<SimConfig>> r =
      LoadSimConfigsFromString("[router]\nvcs = 0\nhop = 5\n[traffic]\nrate = 2\n", "e.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("router.vcs: value 0"));
  EXPECT_THAT(r.status().message(), HasSubstr("router.hop: unknown key"));
  EXPECT_THAT(r.status().message(), HasSubstr("traffic.rate: value 2.0"));
}

}  // namespace
}  // namespace ukai::sim
