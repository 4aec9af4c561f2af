// End-to-end tests of the built `ukai` binary: `sim run --format json` on a tiny config
// (fields, determinism, seed sensitivity), the quickstart config, --out, describe, and the
// exit statuses of bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/json_fields.h"
#include "run_binary.h"
#include "scratch_path.h"

namespace {

using ::testing::HasSubstr;
using ukai::testing_util::Outcome;
using ukai::testing_util::Quote;
using ukai::testing_util::ReadFile;
using ukai::testing_util::ScratchPath;
using ukai::testing_util::Ukai;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class SimCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = ScratchPath("itest.toml");
    Write(config_,
          "seed = 7\n[network]\ntopology = \"torus\"\nk = 4\n[routing]\n"
          "algorithm = [\"dor\", \"duato\"]\n[traffic]\npattern = \"uniform\"\n"
          "message_bytes = 32\nrate = [0.05, 0.2]\n[measure]\nwarmup_messages = 200\n"
          "measure_messages = 400\n");
  }
  void TearDown() override { std::remove(config_.c_str()); }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
  }
  // JSON lines with wall_seconds removed (the one field allowed to differ between runs).
  static std::vector<std::string> Comparable(const std::string& out) {
    std::vector<std::string> lines;
    for (const std::string& line : Lines(out)) {
      auto j = nlohmann::json::parse(line);
      j.erase("wall_seconds");
      lines.push_back(j.dump());
    }
    return lines;
  }
  std::string config_;
};

TEST_F(SimCliTest, JsonPointsHaveEveryFieldAndSaneValues) {
  Outcome o = Ukai({"sim", "run", config_, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");  // stderr is not a terminal: no progress line
  std::vector<std::string> lines = Lines(o.out);
  ASSERT_EQ(lines.size(), 4u);
  const char* routing[] = {"dor", "dor", "duato", "duato"};
  const double rate[] = {0.05, 0.2, 0.05, 0.2};
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    auto j = nlohmann::json::parse(lines[i]);
    for (const char* key : ukai::testing_util::kRequiredJsonFields) {
      EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["topology"], "torus");
    EXPECT_EQ(j["k"], nlohmann::json::array({4, 4}));
    EXPECT_EQ(j["n"], 2);
    EXPECT_EQ(j["routing"], routing[i]);
    EXPECT_EQ(j["pattern"], "uniform");
    EXPECT_EQ(j["message_bytes"], 32);
    EXPECT_EQ(j["rate"], rate[i]);
    EXPECT_EQ(j["seed"], 7);
    EXPECT_EQ(j["vcs"], 4);
    EXPECT_EQ(j["messages_measured"], 400);
    EXPECT_DOUBLE_EQ(j["offered_flits_per_node_cycle"].get<double>(), rate[i]);
    // Below saturation, accepted is close to offered.
    EXPECT_NEAR(j["accepted_flits_per_node_cycle"].get<double>(), rate[i], 0.25 * rate[i]);
    EXPECT_EQ(j["saturated"], false);
    EXPECT_GT(j["cycles"].get<int64_t>(), 0);
    // 8-flit messages over >= 1 hop: latency above the zero-load minimum of one hop.
    EXPECT_GE(j["avg_latency_cycles"].get<double>(), j["avg_network_latency_cycles"].get<double>());
    EXPECT_GE(j["p99_latency_cycles"].get<double>(), j["p50_latency_cycles"].get<double>());
    EXPECT_GT(j["avg_network_latency_cycles"].get<double>(), 8.0);
    // Uniform on a 4x4 torus: mean minimal distance 2 (over destinations other than self:
    // 32/15 = 2.133).
    EXPECT_NEAR(j["avg_hops"].get<double>(), 32.0 / 15.0, 0.15);
    EXPECT_GT(j["clock_mhz"].get<double>(), 0.0);
  }
}

TEST_F(SimCliTest, SameSeedGivesIdenticalJsonOtherSeedDiffers) {
  Outcome a = Ukai({"sim", "run", config_, "--format", "json"});
  Outcome b = Ukai({"sim", "run", config_, "--format", "json"});
  Outcome c = Ukai({"sim", "run", config_, "--format", "json", "--set", "seed=8"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(Comparable(a.out), Comparable(b.out));
  std::vector<std::string> ca = Comparable(a.out), cc = Comparable(c.out);
  ASSERT_EQ(ca.size(), cc.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    auto ja = nlohmann::json::parse(ca[i]), jc = nlohmann::json::parse(cc[i]);
    EXPECT_NE(ja["avg_latency_cycles"], jc["avg_latency_cycles"]) << i;
  }
}

TEST_F(SimCliTest, QuickstartConfigIsValid) {
  // The real quickstart with tiny measurement: 2 algorithms x 2 patterns x 1 rate.
  Outcome o = Ukai({"sim", "run", std::string(UKAI_SOURCE_DIR) + "/experiments/quickstart.toml",
                    "--format", "csv", "--set", "traffic.rate=0.05", "--set",
                    "measure.warmup_messages=50", "--set", "measure.measure_messages=100"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::vector<std::string> lines = Lines(o.out);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[1], HasSubstr(",torus,10x10,2,dor,uniform,64,"));
  EXPECT_THAT(lines[4], HasSubstr(",torus,10x10,2,duato,transpose,64,"));
}

TEST_F(SimCliTest, TableAndOut) {
  const std::string out = ScratchPath("itest_table.txt");
  Outcome o = Ukai({"sim", "run", config_, "--out", out});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  std::vector<std::string> lines = Lines(ReadFile(out));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[0], HasSubstr("routing"));
  EXPECT_THAT(lines[0], HasSubstr("latency"));
  EXPECT_THAT(lines[4], HasSubstr("duato"));
  std::remove(out.c_str());
}

TEST_F(SimCliTest, ProgressLineOnATerminalOnly) {
  // `script` (util-linux) runs the command on a pseudo-terminal; the results go to a file.
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  const std::string json = ScratchPath("itest_tty.json");
  std::string inner = Quote(UKAI_BINARY);
  for (const std::string& a :
       {std::string("sim"), std::string("run"), config_, std::string("--format"),
        std::string("json"), std::string("--out"), json}) {
    inner += ' ';
    inner += Quote(a);
  }
  const std::string tty = ScratchPath("itest_tty.txt");
  std::string cmd = "script -qec ";
  cmd += Quote(inner);
  cmd += " /dev/null >";
  cmd += Quote(tty);
  cmd += " 2>&1 </dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_THAT(ReadFile(tty), HasSubstr("\r[1/4] routing=dor pattern=uniform"));
  EXPECT_THAT(ReadFile(tty), HasSubstr("\r[4/4] routing=duato"));
  std::string results = ReadFile(json);
  EXPECT_EQ(Lines(results).size(), 4u);
  EXPECT_EQ(results.find('\r'), std::string::npos);
  std::remove(json.c_str());
  std::remove(tty.c_str());
}

// `ukai sim plot` draws a sweep of this config and a full-mesh sweep; bad input and a
// missing Python are clear errors.
TEST_F(SimCliTest, PlotDrawsResultsAndExplainsFailures) {
  const std::string csv = ScratchPath("plot.csv"), json = ScratchPath("plot.json");
  const std::string png = ScratchPath("plot.png");
  ASSERT_EQ(Ukai({"sim", "run", config_, "--format", "csv", "--out", csv}).exit_code, 0);
  ASSERT_EQ(Ukai({"sim", "run", config_, "--format", "json", "--out", json}).exit_code, 0);
  for (const std::string& results : {csv, json}) {
    std::remove(png.c_str());
    Outcome o = Ukai({"sim", "plot", results, "-o", png});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(ReadFile(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << results;
  }
  const std::string mesh = ScratchPath("plot_mesh.csv");
  ASSERT_EQ(Ukai({"sim", "run",
                  std::string(UKAI_SOURCE_DIR) + "/experiments/fullmesh/fig03_p2p_emb1.toml",
                  "--format", "csv", "--out", mesh, "--set", "workload.bytes=[1000, 100000]"})
                .exit_code,
            0);
  std::remove(png.c_str());
  EXPECT_EQ(Ukai({"sim", "plot", mesh, "-o", png}).exit_code, 0);
  EXPECT_EQ(ReadFile(png).substr(1, 3), "PNG");
  const std::string bad = ScratchPath("plot_bad.csv");
  Write(bad, "point,routing\n0,dor\n");
  Outcome o = Ukai({"sim", "plot", bad, "-o", png});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("not flit-level results of ukai sim run: no field "
                               "'offered_flits_per_node_cycle'"));
  o = Ukai({"sim", "plot", ScratchPath("plot_missing.csv"), "-o", png});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("cannot read"));
  setenv("UKAI_PYTHON", "/nonexistent/python3", 1);
  o = Ukai({"sim", "plot", csv, "-o", png});
  unsetenv("UKAI_PYTHON");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("needs Python 3 with matplotlib"));
  for (const std::string& f : {csv, json, png, mesh, bad}) std::remove(f.c_str());
}

TEST_F(SimCliTest, DescribeListsKeys) {
  Outcome o = Ukai({"sim", "describe"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* key : {"network.topology", "network.k", "router.vcs", "router.switching",
                          "routing.algorithm", "traffic.rate", "measure.mode", "seed"}) {
    std::string line = "\n";
    line += key;
    line += '\n';
    EXPECT_THAT(o.out, HasSubstr(line)) << key;
  }
  Outcome md = Ukai({"sim", "describe", "--markdown"});
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_THAT(md.out, HasSubstr("| `router.vcs` | int |"));
}

#if !defined(__SANITIZE_ADDRESS__)
// An allocation failure inside a point (here: an address-space limit below what the
// network needs, with run.memory_limit raised past it) is reported, exit status 3, no abort.
TEST_F(SimCliTest, OutOfMemoryIsReportedNotAborted) {
  const std::string err = ScratchPath("oom.err");
  const std::string cmd = "ulimit -v 400000; " + Quote(UKAI_BINARY) + " sim run " + Quote(config_) +
                          " --set network.k=128 --set router.vcs=8 --set "
                          "router.vc_buffer_flits=256 --set run.memory_limit=100000000000 "
                          ">/dev/null 2>" +
                          Quote(err);
  const int status = std::system(("sh -c " + Quote(cmd)).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_THAT(ReadFile(err), HasSubstr("out of memory while simulating the point"));
  std::remove(err.c_str());
}
#endif

struct BadRun {
  const char* name;
  std::vector<std::string> args;  // after "sim run CONFIG" unless `whole`
  const char* toml;               // written to the config file (nullptr: keep the good one)
  int exit_code;
  const char* err;  // substring of stderr
  bool whole = false;
};

class SimCliErrorTest : public SimCliTest, public ::testing::WithParamInterface<BadRun> {};

TEST_P(SimCliErrorTest, ExitStatusAndMessage) {
  const BadRun& b = GetParam();
  if (b.toml != nullptr) Write(config_, b.toml);
  std::vector<std::string> args =
      b.whole ? b.args : std::vector<std::string>{"sim", "run", config_};
  if (!b.whole) args.insert(args.end(), b.args.begin(), b.args.end());
  Outcome o = Ukai(args);
  EXPECT_EQ(o.exit_code, b.exit_code) << o.err;
  std::string expected = b.err;
  size_t at = expected.find("CONFIG");
  if (at != std::string::npos) expected.replace(at, 6, config_);
  EXPECT_THAT(o.err, HasSubstr(expected));
  if (b.exit_code != 0) {
    EXPECT_EQ(o.out, "");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SimCliErrorTest,
    ::testing::Values(
        BadRun{"UnknownKey",
               {},
               "[router]\nvcs = 4\nvcss = 4\n",
               2,
               "router.vcss: unknown key (did you mean 'router.vcs'?) at CONFIG:3:1"},
        BadRun{"OutOfRange",
               {},
               "[traffic]\nrate = 1.5\n",
               2,
               "traffic.rate: value 1.5 out of range (0, 1] at CONFIG:2:8"},
        BadRun{"Syntax", {}, "[traffic\n", 2, "TOML syntax error at CONFIG:1:"},
        BadRun{"KLength",
               {},
               "[network]\nk = [4, 4, 4]\n",
               2,
               "network.k: has 3 radices but network.n = 2 (the default)"},
        BadRun{"Unsupported", {"--set", "router.vcs=1"}, nullptr, 2, "needs router.vcs >= 2"},
        BadRun{"BadSet",
               {"--set", "router.vcs"},
               nullptr,
               2,
               "bad argument '--set router.vcs': expected --set key=value"},
        BadRun{"SetUnknownKey",
               {"--set", "traffic.rte=0.1"},
               nullptr,
               2,
               "traffic.rte: unknown key (did you mean 'traffic.rate'?) in --set traffic.rte=0.1"},
        BadRun{"BadFormat", {"--format", "xml"}, nullptr, 2, "unknown output format 'xml'"},
        BadRun{"BadOut",
               {"--out", "/nonexistent-dir/x.json"},
               nullptr,
               2,
               "--out: cannot open '/nonexistent-dir/x.json' for writing"},
        BadRun{"MissingFile",
               {"sim", "run", "/nonexistent/q.toml"},
               nullptr,
               2,
               "cannot read config file '/nonexistent/q.toml'",
               true},
        BadRun{"DevZero",
               {"sim", "run", "/dev/zero"},
               nullptr,
               2,
               "config file '/dev/zero' is a special file, not a regular file",
               true},
        BadRun{"Directory",
               {"sim", "run", "/"},
               nullptr,
               2,
               "config file '/' is a directory, not a regular file",
               true},
        BadRun{"TooLargeForMemory",
               {"--set", "network.k=1024", "--set", "router.vcs=32", "--set",
                "router.vc_buffer_flits=4096"},
               nullptr,
               2,
               "run.memory_limit: the network needs about"},
        BadRun{"NoCommand", {}, nullptr, 2, "Subcommands:", true},
        BadRun{"NoSimCommand", {"sim"}, nullptr, 2, "A subcommand is required", true},
        BadRun{"UnknownCommand",
               {"simulate"},
               nullptr,
               2,
               "ukai: unknown command 'simulate' (known: sim",
               true},
        BadRun{"NoConfig", {"sim", "run"}, nullptr, 2, "config is required", true},
        BadRun{"UnknownOption", {"--colour"}, nullptr, 2, "--colour", false},
        BadRun{"Help", {"sim", "run", "--help"}, nullptr, 0, "", true}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
