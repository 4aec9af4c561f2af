// `ukai sim run` with a trace workload (workload.kind = "netrace" | "otf2"; docs/workloads.md):
// the result fields in JSON, CSV and the table, the config rules between the workload.* keys
// and the rest (errors naming the key and where it was written), and a trace that turns out
// bad part-way (exit status 3, the file named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/sim_run.h"
#include "scratch_path.h"
#include "sim/workload/netrace_writer.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& rel) { return std::string(UKAI_SOURCE_DIR) + "/" + rel; }

class WorkloadCliTest : public ::testing::Test {
 protected:
  void SetUp() override { config_ = ukai::testing_util::ScratchPath("workload_cli.toml"); }
  void TearDown() override { std::remove(config_.c_str()); }

  int Run(const std::string& toml, const std::string& format, std::vector<std::string> sets = {}) {
    std::ofstream(config_) << toml;
    out_.str("");
    err_.str("");
    SimRunOptions o;
    o.config_path = config_;
    o.format = format;
    o.sets = std::move(sets);
    PointRunner run = [](const sim::SimConfig& c, const sim::ProgressFn& p) {
      return sim::RunPoint(c, p);
    };
    return RunSimPoints(o, run, CliIo{&out_, &err_, false});
  }

  std::string config_;
  std::ostringstream out_, err_;
};

std::string Netrace(const std::string& file, const std::string& extra = "") {
  return "[network]\ntopology = \"mesh\"\nk = 8\n[workload]\nkind = \"netrace\"\nfile = \"" + file +
         "\"\n" + extra;
}
std::string Otf2(const std::string& extra = "") {
  return "[network]\nk = 4\n[router]\nclock_mhz = 1000\n[workload]\nkind = \"otf2\"\nfile = \"" +
         Data("tests/data/otf2/ring4/traces.otf2") + "\"\n" + extra;
}

TEST_F(WorkloadCliTest, NetraceJsonHasTheTraceFieldsAndLatencyByType) {
  ASSERT_EQ(Run(Netrace(Data("tests/data/netrace/example.tra.bz2")), "json"), kExitOk)
      << err_.str();
  const nlohmann::json j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["pattern"], "netrace");
  EXPECT_TRUE(j["rate"].is_null());
  EXPECT_EQ(j["workload"], "netrace");
  EXPECT_EQ(j["trace_packets"], 175);
  EXPECT_EQ(j["workload_messages"], 175);
  EXPECT_EQ(j["messages_measured"], 175);
  EXPECT_EQ(j["trace_cycles"], 6820);
  EXPECT_GE(j["runtime_cycles"].get<int64_t>(), 6820);
  EXPECT_DOUBLE_EQ(j["slowdown"].get<double>(), j["runtime_cycles"].get<double>() / 6820.0);
  ASSERT_TRUE(j["latency_by_type"].is_object());
  int64_t packets = 0;
  for (const auto& [type, figures] : j["latency_by_type"].items()) {
    packets += figures["packets"].get<int64_t>();
    EXPECT_GE(figures["avg_latency_cycles"].get<double>(), 1.0) << type;
  }
  EXPECT_EQ(packets, 175);
  EXPECT_TRUE(j["latency_by_type"].contains("ReadReq"));
  EXPECT_EQ(j["note"], "");

  // Without measure.max_cycles the trace runs to its end; with it, it stops there.
  ASSERT_EQ(
      Run(Netrace(Data("tests/data/netrace/example.tra.bz2")), "json", {"measure.max_cycles=1000"}),
      kExitOk);
  const nlohmann::json capped = nlohmann::json::parse(out_.str());
  EXPECT_EQ(capped["cycles"], 1000);
  EXPECT_LT(capped["trace_packets"].get<int64_t>(), 175);
  EXPECT_THAT(capped["note"].get<std::string>(),
              HasSubstr("measure.max_cycles = 1000 reached before the trace finished"));

  ASSERT_EQ(Run(Netrace(Data("tests/data/netrace/shrtex.tra.bz2")), "table"), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("trace_packets"));
  EXPECT_THAT(out_.str(), HasSubstr("slowdown"));
}

TEST_F(WorkloadCliTest, Otf2JsonAndCsvHaveProgramTimeAndPerRankLists) {
  ASSERT_EQ(Run(Otf2(), "json"), kExitOk) << err_.str();
  const nlohmann::json j = nlohmann::json::parse(out_.str());
  EXPECT_EQ(j["workload"], "otf2");
  EXPECT_EQ(j["ranks"], 4);
  ASSERT_TRUE(j["rank_finish_us"].is_array());
  EXPECT_EQ(j["rank_finish_us"].size(), 4u);
  EXPECT_EQ(j["rank_communication_us"].size(), 4u);
  double last = 0;
  for (const auto& t : j["rank_finish_us"]) last = std::max(last, t.get<double>());
  EXPECT_DOUBLE_EQ(j["program_time_us"].get<double>(), last);
  EXPECT_GT(j["replayed_messages"].get<int64_t>(), 32);
  EXPECT_GT(j["replayed_bytes"].get<int64_t>(), 32 * 4096);
  EXPECT_EQ(j["p2p_messages"], 32);
  EXPECT_EQ(j["collectives"], 8);
  EXPECT_TRUE(j["unmodelled_events"].is_object());
  EXPECT_TRUE(j["unmodelled_events"].empty());

  ASSERT_EQ(Run(Otf2(), "csv"), kExitOk) << err_.str();
  std::istringstream csv(out_.str());
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_THAT(header, HasSubstr("program_time_us,communication_time_us,replayed_messages"));
  EXPECT_THAT(row, HasSubstr(";"));  // the per-rank lists
  ASSERT_EQ(Run(Otf2(), "table"), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("program_us"));
}

TEST_F(WorkloadCliTest, KeyRulesNameTheKeyAndWhereItWasWritten) {
  struct Case {
    std::string toml, expect;
  };
  const std::string trace = Data("tests/data/netrace/example.tra.bz2");
  const std::vector<Case> cases = {
      {"[workload]\nkind = \"netrace\"\n", "workload.file: is needed with workload.kind"},
      {Netrace(trace, "eager_bytes = 10\n"),
       "workload.eager_bytes: needs workload.kind = \"otf2\""},
      {Otf2("region = 1\n"), "workload.region: needs workload.kind = \"netrace\""},
      {Netrace(trace) + "[traffic]\nrate = 0.1\n", "traffic.rate: is not used with workload.kind"},
      {Netrace(trace, "node_map = [0, 1, 1]\n"), "workload.node_map: node 1 is listed twice"},
      {Otf2("rank_map = \"zigzag\"\n"), "workload.rank_map: expected \"linear\", \"random\""},
      {"[workload]\nfile = \"x.tra.bz2\"\n", "workload.file: needs a trace workload"},
      {Netrace("no_such_trace.tra.bz2"), "no_such_trace.tra.bz2"},
      {Netrace(trace, "region = 4\n"), "workload.region: "},
      {Otf2("rank_map = [0, 1]\n"), "workload.rank_map: lists 2 nodes but the archive"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.toml);
    EXPECT_EQ(Run(c.toml, "json"), kExitUsage);
    EXPECT_THAT(err_.str(), HasSubstr(c.expect));
    EXPECT_EQ(out_.str(), "");
  }
  // Keys written in the file are located by line and column.
  Run(Otf2("region = 1\n"), "json");
  EXPECT_THAT(err_.str(), HasSubstr("workload_cli.toml:8:10"));
}

TEST_F(WorkloadCliTest, ATraceCorruptPartWayExitsWithStatus3NamingTheFile) {
  // A trace of two bzip2 blocks (900 kB each), cut inside the second: the header reads (the
  // config check passes), the replay fails when it reaches the cut.
  const std::string full = ukai::testing_util::ScratchPath("full.tra.bz2");
  ukai::testing::TraceHeader h;
  constexpr uint32_t kPackets = 60000;  // 21 bytes each: 1.26 MB decompressed
  {
    ukai::testing::StreamingTraceWriter w(full, h, kPackets, 4 * (kPackets - 1));
    for (uint32_t i = 0; i < kPackets; ++i) {
      ukai::testing::TracePacket p;
      p.id = i;
      p.cycle = 4 * i;
      p.src = static_cast<uint8_t>(i % 64);
      p.dst = static_cast<uint8_t>((i * 7 + 1) % 64);
      w.Add(p);
    }
    ASSERT_TRUE(w.Close());
  }
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = ukai::testing_util::ScratchPath("cut.tra.bz2");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() * 9 / 10);
  EXPECT_EQ(Run(Netrace(full), "json"), kExitOk) << err_.str();
  EXPECT_EQ(Run(Netrace(cut), "json"), kExitRunFailed) << err_.str();
  EXPECT_THAT(err_.str(), HasSubstr(cut));
  EXPECT_THAT(err_.str(), HasSubstr("packet "));
  std::remove(cut.c_str());
  std::remove(full.c_str());
}

}  // namespace
}  // namespace ukai::cli
