// `ukai sim run` in-process with a fake point runner: formats, --out, progress, exit
// statuses, and that results before a failing point are kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "cli/json_fields.h"
#include "cli/sim_run.h"
#include "scratch_path.h"
#include "sim/experiment/flit_fields.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class SimRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir();
    config_ = ukai::testing_util::ScratchPath("sim_run_test.toml");
    WriteConfig(
        "[network]\nk = 4\n[routing]\nalgorithm = [\"dor\", \"duato\"]\n"
        "[traffic]\nrate = [0.1, 0.2]\n");
  }
  void TearDown() override { std::remove(config_.c_str()); }

  void WriteConfig(const std::string& text) {
    std::ofstream f(config_);
    f << text;
  }

  // A runner whose figures encode the point; it fails at call `fail_at` with `fail`.
  PointRunner FakeRunner(int fail_at = -1, Status fail = Status::Deadlock("stuck at 3->4")) {
    return [this, fail_at, fail](const sim::SimConfig& c,
                                 const sim::ProgressFn& p) -> Result<sim::PointResult> {
      if (p) p(123, 45);
      if (calls_++ == fail_at) return fail;
      sim::PointResult r;
      r.offered_flits_per_node_cycle = c.traffic.rate;
      r.accepted_flits_per_node_cycle = c.traffic.rate * 0.99;
      r.avg_latency_cycles = c.routing.algorithm == "dor" ? 40 : 35;
      r.p99_latency_cycles = 90;
      r.avg_hops = 2.0;
      r.messages_measured = 4000;
      r.cycles = 10000;
      r.clock_mhz = 79;
      r.wall_seconds = 0.5;
      return r;
    };
  }

  int Run(const SimRunOptions& o, const PointRunner& runner, bool terminal = false) {
    out_.str("");
    err_.str("");
    return RunSimPoints(o, runner, CliIo{&out_, &err_, terminal});
  }

  SimRunOptions Options(const std::string& format) {
    SimRunOptions o;
    o.config_path = config_;
    o.format = format;
    return o;
  }

  std::string dir_, config_;
  std::ostringstream out_, err_;
  int calls_ = 0;
};

TEST_F(SimRunTest, JsonOneObjectPerPointWithFields) {
  ASSERT_EQ(Run(Options("json"), FakeRunner()), kExitOk) << err_.str();
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 4u);
  const char* routing[] = {"dor", "dor", "duato", "duato"};
  const double rate[] = {0.1, 0.2, 0.1, 0.2};
  for (size_t i = 0; i < 4; ++i) {
    auto j = nlohmann::json::parse(lines[i]);
    for (const char* key : ukai::testing_util::kRequiredJsonFields) {
      EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["point"], i);
    EXPECT_EQ(j["topology"], "torus");
    EXPECT_EQ(j["k"], nlohmann::json::array({4, 4}));
    EXPECT_EQ(j["n"], 2);
    EXPECT_EQ(j["routing"], routing[i]);
    EXPECT_EQ(j["rate"], rate[i]);
    EXPECT_EQ(j["offered_flits_per_node_cycle"], rate[i]);
    EXPECT_EQ(j["messages_measured"], 4000);
    EXPECT_EQ(j["clock_mhz"], 79.0);
    EXPECT_EQ(j["saturated"], false);
  }
  EXPECT_EQ(err_.str(), "");  // not a terminal: no progress line
}

TEST_F(SimRunTest, CsvHeaderAndRows) {
  ASSERT_EQ(Run(Options("csv"), FakeRunner()), kExitOk) << err_.str();
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[0], HasSubstr("point,topology,k,n,routing,pattern,message_bytes"));
  EXPECT_THAT(lines[1], HasSubstr("0,torus,4x4,2,dor,uniform,64"));
  EXPECT_THAT(lines[4], HasSubstr("3,torus,4x4,2,duato,uniform,64"));
}

TEST_F(SimRunTest, TableShowsTheSweptLoad) {
  ASSERT_EQ(Run(Options("table"), FakeRunner()), kExitOk) << err_.str();
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[0], HasSubstr("routing"));
  EXPECT_THAT(lines[0], HasSubstr("rate"));
  EXPECT_THAT(lines[0], HasSubstr("latency"));
  EXPECT_THAT(lines[0], Not(HasSubstr("interval")));
  EXPECT_THAT(lines[3], HasSubstr("duato"));
  EXPECT_EQ(lines[1].find("offered"), std::string::npos);
}

TEST_F(SimRunTest, ProgressOnlyOnATerminal) {
  ASSERT_EQ(Run(Options("json"), FakeRunner(), /*terminal=*/true), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("\r[1/4] routing=dor pattern=uniform"));
  EXPECT_THAT(err_.str(), HasSubstr("[4/4] routing=duato"));
  EXPECT_EQ(Lines(out_.str()).size(), 4u);  // progress never goes to the results
  EXPECT_THAT(out_.str(), Not(HasSubstr("\r")));
}

TEST_F(SimRunTest, DeadlockExits3AndKeepsEarlierPoints) {
  ASSERT_EQ(Run(Options("json"), FakeRunner(/*fail_at=*/2)), kExitRunFailed);
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["point"], 1);
  EXPECT_THAT(err_.str(),
              HasSubstr("point 3 of 4 (routing=duato pattern=uniform message_bytes=64 rate=0.1 "
                        "seed=1): deadlock: stuck at 3->4 (2 earlier points written)"));
}

TEST_F(SimRunTest, OutOfMemoryEndsThePointAndKeepsEarlierPoints) {
  PointRunner throwing = [this](const sim::SimConfig& c, const sim::ProgressFn& p) {
    if (calls_ == 1) {
      ++calls_;
      throw std::bad_alloc();
    }
    return FakeRunner()(c, p);
  };
  ASSERT_EQ(Run(Options("json"), throwing), kExitRunFailed);
  auto lines = Lines(out_.str());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["point"], 0);
  EXPECT_THAT(err_.str(), HasSubstr("point 2 of 4"));
  EXPECT_THAT(err_.str(), HasSubstr("out of memory while simulating the point (1 earlier "
                                    "points written)"));
}

TEST_F(SimRunTest, NoteSaysWhyAPointStopped) {
  PointRunner stopped = [](const sim::SimConfig&, const sim::ProgressFn&) {
    sim::PointResult r;
    r.saturated = true;
    r.note = "stopped at cycle 9: backlog";
    return Result<sim::PointResult>(r);
  };
  ASSERT_EQ(Run(Options("json"), stopped), kExitOk);
  EXPECT_EQ(nlohmann::json::parse(Lines(out_.str())[0])["note"], "stopped at cycle 9: backlog");
  ASSERT_EQ(Run(Options("table"), stopped), kExitOk);
  EXPECT_THAT(Lines(out_.str())[0], ::testing::EndsWith("note"));
  EXPECT_THAT(Lines(out_.str())[1], ::testing::EndsWith("stopped at cycle 9: backlog"));
}

TEST_F(SimRunTest, NoMessageMeasuredPrintsNoLatency) {
  PointRunner none = [](const sim::SimConfig&, const sim::ProgressFn&) {
    sim::PointResult r;
    r.cycles = 100;
    r.note = "no message was measured";
    return Result<sim::PointResult>(r);
  };
  ASSERT_EQ(Run(Options("json"), none), kExitOk);
  auto j = nlohmann::json::parse(Lines(out_.str())[0]);
  for (const char* f : {"avg_latency_cycles", "p50_latency_cycles", "p99_latency_cycles",
                        "max_latency_cycles", "avg_network_latency_cycles", "avg_hops"}) {
    EXPECT_TRUE(j[f].is_null()) << f;
  }
  EXPECT_EQ(j["messages_measured"], 0);
  EXPECT_EQ(j["note"], "no message was measured");
  ASSERT_EQ(Run(Options("csv"), none), kExitOk);
  EXPECT_THAT(Lines(out_.str())[1], HasSubstr(",,,,,,0,100,"));  // six empty cells
  ASSERT_EQ(Run(Options("table"), none), kExitOk);
  EXPECT_THAT(Lines(out_.str())[1], ::testing::ContainsRegex(" - +- +- +0 +100 "));
}

TEST_F(SimRunTest, SimulatorConfigRejectionExits2) {
  Status bad = Status::InvalidArgument("routing.algorithm = 'duato' on a torus needs vcs >= 3");
  ASSERT_EQ(Run(Options("json"), FakeRunner(0, bad)), kExitUsage);
  EXPECT_EQ(out_.str(), "");
  EXPECT_THAT(err_.str(), HasSubstr("needs vcs >= 3"));
}

TEST_F(SimRunTest, ConfigErrorExits2NamingKeyAndLine) {
  WriteConfig("[router]\nvcs = 0\n");
  ASSERT_EQ(Run(Options("json"), FakeRunner()), kExitUsage);
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(out_.str(), "");
  EXPECT_THAT(err_.str(),
              HasSubstr("router.vcs: value 0 out of range [1, 32] at " + config_ + ":2:7"));
}

TEST_F(SimRunTest, SetErrorExits2) {
  SimRunOptions o = Options("json");
  o.sets = {"router.vcs=4", "router.vsc=4"};
  ASSERT_EQ(Run(o, FakeRunner()), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("router.vsc: unknown key (did you mean 'router.vcs'?) in "
                                    "--set router.vsc=4"));
}

TEST_F(SimRunTest, BadFormatExits2) {
  ASSERT_EQ(Run(Options("yaml"), FakeRunner()), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--format: unknown output format 'yaml'"));
  EXPECT_EQ(calls_, 0);
}

TEST_F(SimRunTest, OutWritesTheFile) {
  SimRunOptions o = Options("csv");
  o.out_path = ukai::testing_util::ScratchPath("sim_run_test_out.csv");
  ASSERT_EQ(Run(o, FakeRunner()), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "");
  std::ifstream f(o.out_path);
  std::ostringstream s;
  s << f.rdbuf();
  EXPECT_EQ(Lines(s.str()).size(), 5u);
  std::remove(o.out_path.c_str());
}

TEST_F(SimRunTest, OutThatCannotBeOpenedExits2BeforeRunning) {
  SimRunOptions o = Options("csv");
  o.out_path = dir_ + "/no/such/dir/out.csv";
  ASSERT_EQ(Run(o, FakeRunner()), kExitUsage);
  EXPECT_EQ(calls_, 0);
  EXPECT_THAT(err_.str(), HasSubstr("--out: cannot open '" + o.out_path + "' for writing"));
}

TEST_F(SimRunTest, RecordHasEveryPointResultField) {
  sim::SimConfig c;
  sim::PointResult r;
  output::Record rec = sim::PointRecord(7, c, r);
  for (const char* f :
       {"offered_flits_per_node_cycle", "accepted_flits_per_node_cycle",
        "accepted_bytes_per_second", "clock_mhz", "avg_latency_cycles", "p50_latency_cycles",
        "p99_latency_cycles", "max_latency_cycles", "avg_network_latency_cycles", "avg_hops",
        "messages_measured", "cycles", "wall_seconds", "saturated", "note", "latency_trend"}) {
    EXPECT_NE(rec.Find(f), nullptr) << f;
  }
  EXPECT_EQ(std::get<int64_t>(*rec.Find("point")), 7);
}

// k and n describe a k-ary n-cube only: the group topology's rows leave them empty and
// give its own parameters after them; a mesh's rows are as before.
TEST_F(SimRunTest, RecordShowsTheTopologysOwnShape) {
  sim::SimConfig c;
  c.network.topology = sim::TopologyKind::kGroup;
  c.network.groups = 5;
  c.network.group_size = 3;
  output::Record rec = sim::PointRecord(0, c, sim::PointResult());
  EXPECT_TRUE(std::holds_alternative<output::NoValue>(*rec.Find("k")));
  EXPECT_TRUE(std::holds_alternative<output::NoValue>(*rec.Find("n")));
  EXPECT_EQ(std::get<int64_t>(*rec.Find("groups")), 5);
  EXPECT_EQ(std::get<int64_t>(*rec.Find("group_size")), 3);
  std::vector<std::string> names;
  for (const auto& [name, value] : rec.fields()) names.push_back(name);
  EXPECT_EQ(
      std::vector<std::string>(names.begin(), names.begin() + 7),
      (std::vector<std::string>{"point", "topology", "k", "n", "groups", "group_size", "routing"}));
  c.network.topology = sim::TopologyKind::kMesh;
  c.network.k = {4, 4};
  c.network.n = 2;
  rec = sim::PointRecord(0, c, sim::PointResult());
  EXPECT_EQ(std::get<std::vector<int64_t>>(*rec.Find("k")), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(std::get<int64_t>(*rec.Find("n")), 2);
  EXPECT_EQ(rec.Find("groups"), nullptr);
  EXPECT_EQ(rec.Find("group_size"), nullptr);
}

TEST_F(SimRunTest, RecordHasTheRouterOptions) {
  sim::SimConfig c;
  c.router.header_units = sim::HeaderUnits::kPerPort;
  c.router.switch_bubble_cycles = 1;
  c.traffic.source_queue = 1;
  c.routing.dor_tie = sim::DorTieRule::kParity;
  output::Record rec = sim::PointRecord(0, c, sim::PointResult());
  EXPECT_EQ(std::get<int64_t>(*rec.Find("eject_flits")), 1);
  EXPECT_EQ(std::get<int64_t>(*rec.Find("switch_bubble_cycles")), 1);
  EXPECT_EQ(std::get<std::string>(*rec.Find("header_units")), "per_port");
  EXPECT_EQ(std::get<int64_t>(*rec.Find("table_read_ports")), 0);
  EXPECT_EQ(std::get<int64_t>(*rec.Find("source_queue")), 1);
  EXPECT_EQ(std::get<std::string>(*rec.Find("dor_tie")), "parity");
  EXPECT_EQ(std::get<std::string>(*rec.Find("dor_dateline")), "shared");
  EXPECT_EQ(std::get<std::string>(*rec.Find("duato_atomic")), "adaptive");
}

}  // namespace
}  // namespace ukai::cli
