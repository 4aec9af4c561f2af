// `ukai sim tables`: the full-mesh controller's communication and link management tables
// after every event, through the front door (the A/B/C walk-through of the document), in
// text and JSON; models without such tables and bad options are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "scratch_path.h"

namespace ukai::cli {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

// The document's A/B/C example (ABC1-ABC7): A p2p 0 -> 1, B scatter from 1, C multicast
// from 2 that waits for A's link.
constexpr char kAbc[] =
    "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 4\npolicy = \"fixed-k\"\n"
    "relay = \"switch\"\n[workload]\nops = [\"at=0 op=p2p root=0 dest=1 bytes=20000\", "
    "\"at=0 op=scatter root=1 bytes=20000\", \"at=0 op=multicast root=2 bytes=200\"]\n";

class SimTablesTest : public ::testing::Test {
 protected:
  void SetUp() override { config_ = ukai::testing_util::ScratchPath("sim_tables.toml"); }
  void TearDown() override { std::remove(config_.c_str()); }

  CliRun Tables(const std::string& toml, std::vector<const char*> extra = {}) {
    std::ofstream(config_) << toml;
    std::vector<const char*> args = {"sim", "tables", config_.c_str()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  }

  static std::vector<Json> Lines(const std::string& text) {
    std::vector<Json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  }

  std::string config_;
};

// Every snapshot: a busy link's usage is the number of a communicating row, the waiting
// rows are the table's tail, the 1-hop via column is every node but the link's two ends.
void ExpectConsistent(const Json& s, int nodes) {
  std::set<int> communicating;
  bool waiting_seen = false;
  for (const Json& row : s["communication_table"]) {
    const bool waiting = row["state"] == "waiting";
    EXPECT_FALSE(waiting_seen && !waiting) << s.dump();
    waiting_seen = waiting_seen || waiting;
    if (!waiting) communicating.insert(row["number"].get<int>());
  }
  int busy = 0;
  for (const Json& link : s["link_table"]) {
    const int usage = link["usage"];
    if (usage >= 0) {
      ++busy;
      EXPECT_TRUE(communicating.count(usage)) << s.dump();
      EXPECT_NE(link["hop"], "");
    }
    std::set<int> via(link["one_hop_via"].begin(), link["one_hop_via"].end());
    EXPECT_EQ(via.size(), static_cast<size_t>(nodes - 2));
    EXPECT_FALSE(via.count(link["sender"].get<int>()));
    EXPECT_FALSE(via.count(link["receiver"].get<int>()));
  }
  EXPECT_EQ(s["links_in_use"], busy);
}

TEST_F(SimTablesTest, AbcWalkthroughInJsonFollowsTheDocument) {
  const CliRun r = Tables(kAbc, {"--format", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<Json> snaps = Lines(r.out);
  ASSERT_EQ(snaps.size(), 6u);  // three arrivals, three finishes
  for (const Json& s : snaps) ExpectConsistent(s, 4);

  // ABC1-ABC2: A appended as row 0 and started at once with both relays (K = N - 2 = 2).
  const Json& a = snaps[0];
  EXPECT_EQ(a["event"], "new");
  EXPECT_EQ(a["index"], 0);
  ASSERT_EQ(a["communication_table"].size(), 1u);
  const Json& row = a["communication_table"][0];
  EXPECT_EQ(row["number"], 0);
  EXPECT_EQ(row["type"], "p2p");
  EXPECT_EQ(row["sender"], 0);
  EXPECT_EQ(row["receiver"], 1);
  EXPECT_EQ(row["communicator"], "WORLD");
  EXPECT_EQ(row["count"], 20000);
  EXPECT_EQ(row["precision"], 1);
  EXPECT_EQ(row["state"], "communicating");
  std::set<std::string> held;
  for (const Json& l : a["link_table"]) {
    held.insert(std::to_string(l["sender"].get<int>()) + ">" +
                std::to_string(l["receiver"].get<int>()) + " " + l["hop"].get<std::string>());
  }
  EXPECT_EQ(held, (std::set<std::string>{"0>1 direct", "0>2 1-hop first", "0>3 1-hop first",
                                         "2>1 1-hop second", "3>1 1-hop second"}));

  // ABC3-ABC4: B (scatter, receiver = the communicator) starts; C needs 2 -> 1, held by A,
  // and waits as the last row.
  EXPECT_EQ(snaps[1]["communication_table"][1]["receiver"], -1);
  EXPECT_EQ(snaps[1]["communication_table"][1]["state"], "communicating");
  ASSERT_EQ(snaps[2]["communication_table"].size(), 3u);
  EXPECT_EQ(snaps[2]["communication_table"][2]["type"], "multicast");
  EXPECT_EQ(snaps[2]["communication_table"][2]["state"], "waiting");

  // ABC5-ABC7: A finishes first; its row is deleted, C moves up and starts.
  EXPECT_EQ(snaps[3]["event"], "finish");
  EXPECT_EQ(snaps[3]["number"], 0);
  ASSERT_EQ(snaps[3]["communication_table"].size(), 2u);
  EXPECT_EQ(snaps[3]["communication_table"][0]["number"], 1);
  EXPECT_EQ(snaps[3]["communication_table"][1]["state"], "communicating");
  EXPECT_GT(snaps[3]["time_us"].get<double>(), 0);
  EXPECT_EQ(snaps.back()["communication_table"].size(), 0u);
  EXPECT_EQ(snaps.back()["links_in_use"], 0);
}

TEST_F(SimTablesTest, AllLinksListsEveryLinkOfEveryPlane) {
  const CliRun r = Tables(kAbc, {"--format", "json", "--all-links", "--set", "fullmesh.planes=2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const Json& s : Lines(r.out)) {
    EXPECT_EQ(s["links"], 24);  // 2 planes x N(N-1)
    EXPECT_EQ(s["link_table"].size(), 24u);
    ExpectConsistent(s, 4);
  }
}

TEST_F(SimTablesTest, TextNamesTheTablesAndTheirColumns) {
  const CliRun r = Tables(kAbc);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("== t = 0 us: index 0 (p2p, 20000 bytes) arrives"));
  EXPECT_THAT(r.out, HasSubstr("communication management table: 3 row(s)"));
  EXPECT_THAT(r.out, HasSubstr("number  type       sender  receiver  communicator  send_address  "
                               "receive_address  count  precision  id  state"));
  EXPECT_THAT(r.out, HasSubstr("link management table: 5 of 12 link(s) in use"));
  EXPECT_THAT(r.out, HasSubstr("0 (1-hop second)"));
  EXPECT_THAT(r.out, HasSubstr("finished (communication 0)"));
  EXPECT_THAT(r.out, HasSubstr("waiting"));
}

TEST_F(SimTablesTest, SweepRunsEachSizeAlone) {
  const std::string sweep =
      "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 8\npolicy = \"variable-k\"\n"
      "[workload]\noperation = \"p2p\"\nbytes = [100, 1000000]\n";
  const CliRun r = Tables(sweep, {"--format", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<Json> snaps = Lines(r.out);
  ASSERT_EQ(snaps.size(), 4u);
  EXPECT_EQ(snaps[0]["run"], 0);
  EXPECT_EQ(snaps[0]["links_in_use"], 1);  // 100 bytes: the direct link only
  EXPECT_EQ(snaps[2]["run"], 1);
  EXPECT_EQ(snaps[2]["index"], 1);
  EXPECT_EQ(snaps[2]["links_in_use"], 1 + 2 * 6);  // 1 MB: direct and K = 6 relays
  for (const Json& s : snaps) ExpectConsistent(s, 8);
}

TEST_F(SimTablesTest, ModelWithoutTablesAndBadOptionsAreRefused) {
  CliRun r = Tables("[network]\ntopology = \"mesh\"\n");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("network.topology = \"mesh\" (the flit model)"));
  EXPECT_THAT(r.err, HasSubstr("no communication or link management tables"));
  r = Tables(kAbc, {"--format", "csv"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--format: expected text or json"));
  r = Tables(kAbc, {"--set", "fullmesh.k_max=9"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("fullmesh.k_max"));
}

}  // namespace
}  // namespace ukai::cli
