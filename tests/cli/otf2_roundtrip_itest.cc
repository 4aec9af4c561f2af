// Record-then-replay round trips (issue 18; docs/workloads.md, docs/otf2-recording.md): the
// runtime's examples recorded over shm with `ukai launch --otf2 DIR` replay completely with
// `ukai sim run experiments/workloads/otf2.toml --set workload.file="DIR/traces.otf2"`: every
// recorded MpiSend is replayed (p2p_messages), every recorded barrier once per job
// (collectives = MpiCollectiveEnd records / ranks), nothing lost, nothing left waiting (an
// empty note). The recorded counts come from otf2-print.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "run_binary.h"
#include "scratch_path.h"

namespace {

using ukai::testing_util::Outcome;
using ukai::testing_util::RunBinary;
using ukai::testing_util::ScratchPath;
using ukai::testing_util::Ukai;

constexpr int kRanks = 3;

// What otf2-print shows of an archive.
struct Printed {
  int sends = 0;            // MPI_SEND + MPI_ISEND
  int receives = 0;         // MPI_RECV + MPI_IRECV
  int collective_ends = 0;  // MPI_COLLECTIVE_END (one per rank and collective)
  int unreceived = 0;       // sends without a receive of their envelope (per source,
                            // destination, communicator, tag)
};

// The number after `field` ("Receiver: 2 (...)" -> 2; "Communicator: "X" <1>" -> 1 with
// field "Communicator: ", taken from the <...>).
long long Field(const std::string& line, const std::string& field) {
  size_t at = line.find(field);
  if (at == std::string::npos) return -1;
  at += field.size();
  if (line[at] == '"') at = line.find('<', at) + 1;
  return std::stoll(line.substr(at));
}

Printed Otf2Print(const std::string& anchor) {
  Outcome o = RunBinary("otf2-print", {anchor});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  Printed p;
  using Envelope = std::tuple<long long, long long, long long, long long>;
  std::map<Envelope, int> open;  // sends minus receives
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string event;
    unsigned long long location = 0;
    if (!(words >> event >> location)) continue;
    const long long rank = static_cast<long long>(location & 0xffffffffu);
    const long long comm = Field(line, "Communicator: "), tag = Field(line, "Tag: ");
    if (event == "MPI_SEND" || event == "MPI_ISEND") {
      ++p.sends;
      ++open[{rank, Field(line, "Receiver: "), comm, tag}];
    } else if (event == "MPI_RECV" || event == "MPI_IRECV") {
      ++p.receives;
      --open[{Field(line, "Sender: "), rank, comm, tag}];
    } else if (event == "MPI_COLLECTIVE_END") {
      ++p.collective_ends;
    }
  }
  for (const auto& [envelope, n] : open) {
    EXPECT_GE(n, 0) << "a receive without its send";
    if (n > 0) p.unreceived += n;
  }
  return p;
}

class Otf2RoundTripTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchPath("otf2_roundtrip");
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Records `program args` as kRanks processes over shm; the archive's otf2-print counts.
  Printed Record(const std::string& program, const std::vector<std::string>& args) {
    std::vector<std::string> launch = {
        "launch", "-n", std::to_string(kRanks), "--modules", "shm", "--otf2", dir_, program};
    launch.insert(launch.end(), args.begin(), args.end());
    Outcome o = Ukai(launch);
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.err.find("OTF2 archive " + dir_ + "/traces.otf2: 3 ranks"), std::string::npos)
        << o.err;
    return Otf2Print(dir_ + "/traces.otf2");
  }
  // Replays the archive on the 4x4 torus of experiments/workloads/otf2.toml (dor).
  nlohmann::json Replay() {
    Outcome o =
        Ukai({"sim", "run", std::string(UKAI_SOURCE_DIR) + "/experiments/workloads/otf2.toml",
              "--set", "workload.file=\"" + dir_ + "/traces.otf2\"", "--set",
              "routing.algorithm=\"dor\"", "--format", "json"});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    std::istringstream in(o.out);
    std::string line;
    std::getline(in, line);
    return nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  }
  // The equalities of a complete replay.
  static void ExpectComplete(const Printed& p, const nlohmann::json& r) {
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r["ranks"], kRanks);
    EXPECT_EQ(r["p2p_messages"], p.sends);
    EXPECT_EQ(r["collectives"], p.collective_ends / kRanks);
    EXPECT_EQ(r["workload_lost_messages"], 0);
    EXPECT_EQ(r["workload_blocked_messages"], 0);
    for (const auto& finish : r["rank_finish_us"]) EXPECT_TRUE(finish.is_number()) << r.dump();
  }

  std::string dir_;
};

TEST_F(Otf2RoundTripTest, KvStoreReplaysEveryRequestAnswerAndBarrier) {
  const Printed p = Record(UKAI_EXAMPLE_KV_STORE, {"30"});
  // 30 puts, gets, 15 deletes, a get and a typo per rank, each a request and its answer.
  EXPECT_EQ(p.sends, kRanks * 2 * (30 + 30 + 15 + 2));
  EXPECT_EQ(p.receives, p.sends);
  EXPECT_EQ(p.unreceived, 0);
  EXPECT_EQ(p.collective_ends, kRanks * 2);
  const nlohmann::json r = Replay();
  ExpectComplete(p, r);
  EXPECT_EQ(r["note"], "");
}

TEST_F(Otf2RoundTripTest, SpmdRingReplaysEveryHopAndBarrier) {
  const Printed p = Record(UKAI_EXAMPLE_SPMD_RING, {"20"});
  EXPECT_EQ(p.sends, kRanks * 20);
  EXPECT_EQ(p.receives, p.sends);
  EXPECT_GT(p.collective_ends, 0);
  const nlohmann::json r = Replay();
  ExpectComplete(p, r);
  EXPECT_EQ(r["note"], "");
}

// The collectives example: its Group collectives are RSRs (point-to-point records); it ends
// with a "done" request to every member after the Group's goodbyes, then a barrier, so that
// no goodbye reaches a member that has finalized (it would be a send never received).
TEST_F(Otf2RoundTripTest, CollectivesExampleReplaysEveryMessage) {
  const Printed p = Record(UKAI_EXAMPLE_COLLECTIVES, {});
  EXPECT_GT(p.sends, 100);
  EXPECT_EQ(p.receives, p.sends);
  EXPECT_EQ(p.unreceived, 0);
  EXPECT_EQ(p.collective_ends, kRanks);
  const nlohmann::json r = Replay();
  ExpectComplete(p, r);
  EXPECT_EQ(r["note"], "");
}

}  // namespace
