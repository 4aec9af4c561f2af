// `ukai sim run` with network.topology = "fullmesh" (through the front door): the result
// fields (CSV and JSON), both workload forms, errors naming the key, other configs untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/sim_run.h"
#include "scratch_path.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

class FullMeshCliTest : public ::testing::Test {
 protected:
  void SetUp() override { config_ = ukai::testing_util::ScratchPath("fullmesh_cli.toml"); }
  void TearDown() override { std::remove(config_.c_str()); }

  int Run(const std::string& toml, const std::string& format, std::vector<std::string> sets = {}) {
    std::ofstream(config_) << toml;
    out_.str("");
    err_.str("");
    SimRunOptions o;
    o.config_path = config_;
    o.format = format;
    o.sets = std::move(sets);
    PointRunner never = [](const sim::SimConfig&,
                           const sim::ProgressFn&) -> Result<sim::PointResult> {
      return Status::Internal("the k-ary n-cube path must not run");
    };
    return RunSimPoints(o, never, CliIo{&out_, &err_, false});
  }

  std::string config_;
  std::ostringstream out_, err_;
};

constexpr char kSweep[] =
    "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 8\nrelay = \"memory\"\n"
    "policy = \"variable-k\"\n[workload]\noperation = \"p2p\"\nbytes = [100, 1000000]\n";

TEST_F(FullMeshCliTest, SweepWritesTheNamedFieldsInCsv) {
  ASSERT_EQ(Run(kSweep, "csv"), kExitOk) << err_.str();
  std::istringstream in(out_.str());
  std::string header, small, large;
  std::getline(in, header);
  std::getline(in, small);
  std::getline(in, large);
  EXPECT_THAT(header, HasSubstr("operation,nodes,bytes,policy,relays,direct,relay_mode,time_us,"
                                "baseline_us,speedup"));
  EXPECT_THAT(small, HasSubstr("p2p,8,100,variable-k,0,1,pipelined,"));  // small: direct only
  EXPECT_THAT(large, HasSubstr("p2p,8,1000000,variable-k,6,1,pipelined,"));
}

TEST_F(FullMeshCliTest, OperationListInJsonHasTheFieldsAndWaits) {
  const std::string toml =
      "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 4\n"
      "[workload]\nops = [\"at=0 op=p2p root=0 dest=1 bytes=20000\", "
      "\"at=0 op=scatter root=1 bytes=20000\", \"op=broadcast root=2 bytes=200\"]\n";
  ASSERT_EQ(Run(toml, "json"), kExitOk) << err_.str();
  std::istringstream in(out_.str());
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(in, line)) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 3u);
  for (const char* f : {"operation", "nodes", "bytes", "policy", "relays", "direct", "relay_mode",
                        "time_us", "baseline_us", "speedup"}) {
    EXPECT_TRUE(rows[0].contains(f)) << f;
  }
  EXPECT_EQ(rows[0]["relays"], 2);
  EXPECT_EQ(rows[2]["operation"], "broadcast");
  EXPECT_GT(rows[2]["wait_us"].get<double>(), 0);  // C waits for A (ABC4)
  EXPECT_NEAR(rows[0]["speedup"].get<double>(),
              rows[0]["baseline_us"].get<double>() / rows[0]["time_us"].get<double>(), 1e-12);
  EXPECT_EQ(rows[1]["data_ok"], 1);
  EXPECT_EQ(rows[1]["fibres"], 0);
  ASSERT_EQ(Run(toml, "json", {"fullmesh.awg=true", "fullmesh.planes=2"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"fibres\":16"));
}

// The relay kind is per operation type: a reduce never sums in a plain switch relay unit.
TEST_F(FullMeshCliTest, ReductionsTakeTheReduceRelay) {
  const std::string toml =
      "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 4\nrelay = \"switch\"\n"
      "decision = \"always\"\n[workload]\nops = [\"op=multicast root=0 bytes=40000\", "
      "\"at=100 op=reduce root=0 bytes=40000\"]\n";
  auto rows = [&](std::vector<std::string> sets) {
    EXPECT_EQ(Run(toml, "json", std::move(sets)), kExitOk) << err_.str();
    std::istringstream in(out_.str());
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
  };
  std::vector<nlohmann::json> automatic = rows({});
  ASSERT_EQ(automatic.size(), 2u);
  EXPECT_EQ(automatic[0]["relay"], "switch");
  EXPECT_EQ(automatic[0]["t1_us"], 2.1);
  EXPECT_EQ(automatic[1]["relay"], "memory");  // auto: the switch relay unit has no adder
  EXPECT_EQ(automatic[1]["t1_us"], 4.0);
  EXPECT_EQ(automatic[0]["relay_nodes"], "0 1 2 3");  // fixed-k multicast: K = N with the sender
  std::vector<nlohmann::json> in_switch = rows({"fullmesh.reduce_relay=\"switch-reduce\""});
  ASSERT_EQ(in_switch.size(), 2u);
  EXPECT_EQ(in_switch[1]["relay"], "switch-reduce");
  EXPECT_EQ(in_switch[1]["t1_us"], 2.4);
  EXPECT_LT(in_switch[1]["time_us"].get<double>(), automatic[1]["time_us"].get<double>());
  EXPECT_EQ(in_switch[0]["time_us"], automatic[0]["time_us"]);  // the multicast is unchanged
}

TEST_F(FullMeshCliTest, BadSettingsAreErrorsNamingTheKey) {
  const struct {
    std::vector<std::string> sets;
    const char* want;
  } cases[] = {
      {{"fullmesh.k_max=9"}, "fullmesh.k_max: 9 is out of range"},
      {{"fullmesh.policy=\"variable-k\"", "fullmesh.k_min=7"}, "fullmesh.k_min: 7 is out of range"},
      {{"fullmesh.groups=[\"A=3\"]"}, "fullmesh.groups: group 'A' has 1 node(s)"},
      {{"fullmesh.groups=[\"A:3\"]"}, "fullmesh.groups: item 1 (\"A:3\")"},
      {{"workload.root=9"}, "workload.operation: at workload.bytes item 1: root node 9"},
      {{"router.vcs=4"}, "router.vcs: is not used by network.topology = \"fullmesh\""},
      {{"seed=[1, 2]"}, "seed: expected a single int, got a list in --set seed=[1, 2]"},
      {{"fullmesh.nods=3"}, "fullmesh.nods: unknown key (did you mean 'fullmesh.nodes'?)"},
      // A K an operation cannot have is an error for k_max as for k_min, never clamped.
      {{"fullmesh.k_max=7"},
       "fullmesh.k_max: 7 is out of range for operation 1 (p2p over 8 "
       "nodes has at most 6 relays)"},
      {{"workload.operation=\"multicast\"", "workload.dest=3"},
       "workload.dest: only a p2p has a receiver; a multicast goes to its communicator"},
      {{"fullmesh.reduce_relay=\"switch\""}, "fullmesh.reduce_relay"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Run(kSweep, "csv", c.sets), kExitUsage) << c.want;
    EXPECT_THAT(err_.str(), HasSubstr(c.want));
  }
  const std::string list =
      "[network]\ntopology = \"fullmesh\"\n[workload]\nops = [\"op=p2p root=0 dest=1 bytes=4\"]\n";
  EXPECT_EQ(Run(list, "csv", {"workload.ops=[\"op=p2p root=0 dest=1 byts=4\"]"}), kExitUsage);
  EXPECT_THAT(
      err_.str(),
      HasSubstr("workload.ops: item 1 (\"op=p2p root=0 dest=1 byts=4\"): unknown field 'byts'"));
  EXPECT_EQ(Run(list, "csv", {"workload.ops=[\"op=reduce bytes=6\"]"}), kExitUsage);
  EXPECT_THAT(err_.str(),
              HasSubstr("workload.ops: operation 1: reduce bytes = 6 is not a multiple of 4"));
  EXPECT_EQ(Run(list, "csv", {"workload.ops=[\"op=scatter root=0 dest=1 bytes=4\"]"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("dest: only a p2p has a receiver; a scatter goes to its "
                                    "communicator"));
  EXPECT_EQ(Run(kSweep, "csv", {"workload.ops=[\"op=p2p root=0 dest=1 bytes=4\"]"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("not both"));
  // A torus config with a full-mesh key.
  EXPECT_EQ(Run("[network]\nk = 4\n[fullmesh]\nnodes = 4\n", "csv"), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("fullmesh.nodes: needs network.topology = \"fullmesh\""));
}

TEST_F(FullMeshCliTest, OtherConfigsGoToTheKaryNCubePathUnchanged) {
  EXPECT_EQ(Run("[network]\nk = 4\n", "csv"), kExitRunFailed);  // the fake runner's error
  EXPECT_THAT(err_.str(), HasSubstr("the k-ary n-cube path must not run"));
  EXPECT_EQ(Run("[router]\nvcss = 4\n", "csv"), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("router.vcss: unknown key (did you mean 'router.vcs'?)"));
}

}  // namespace
}  // namespace ukai::cli
