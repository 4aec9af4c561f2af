// `ukai launch -n N --sim MACHINE.toml` end to end (docs/sim-module.md): the SPMD ping-pong
// example as separate processes on a simulated mesh, communication only (sim.cpu_scale = 0):
// the one-way time is the zero-load latency exactly, the round trip the sum of both ways, the
// results (stdout and --sim-out JSON) are the same on every run, bad machine configs are
// refused before any process starts, and a node failure stops the process on that node.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_binary.h"
#include "scratch_path.h"
#include "sim_zero_load.h"

namespace ukai::testing_util {
namespace {

constexpr int64_t kHeaderBytes = 56;  // wire::kHeaderSize (src/wire/rsr_frame.h)

// A 5x5 mesh, 16-byte flits, 1 GHz (a cycle is a nanosecond), hop 5 / link 1 cycles (the
// defaults), dimension-order routing: process 1 on node 18 is H = 3 + 3 hops from node 0.
constexpr char kMesh[] =
    "[network]\ntopology = \"mesh\"\nk = 5\nn = 2\n"
    "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
    "[routing]\nalgorithm = \"dor\"\n";

// The gateway patent's group machine (examples/rt/sim/group24.toml without its [sim] table).
constexpr char kGroup24[] =
    "seed = 1\n[network]\ntopology = \"group\"\ngroups = 6\ngroup_size = 4\n"
    "[router]\nvcs = 6\nflit_bytes = 32\nvc_buffer_flits = 64\n"
    "[routing]\nalgorithm = \"dor-detour\"\n";

std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = ScratchPath(name);
  std::ofstream(path) << text;
  return path;
}

struct PingLine {
  int64_t payload, pong_payload, one_way, round_trip;
};

std::vector<PingLine> PingLines(const std::string& out) {
  std::vector<PingLine> lines;
  const std::regex re(
      "ping payload_bytes=(\\d+) pong_payload_bytes=(\\d+) one_way_ns=(-?\\d+) "
      "round_trip_ns=(-?\\d+)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
       ++it) {
    lines.push_back(
        {std::stoll((*it)[1]), std::stoll((*it)[2]), std::stoll((*it)[3]), std::stoll((*it)[4])});
  }
  return lines;
}

Outcome LaunchPingPong(const std::string& machine, const std::string& json, int n = 2,
                       const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"launch", "-n",   std::to_string(n), "--timeout", "120",
                                   "--sim",  machine};
  if (!json.empty()) {
    args.push_back("--sim-out");
    args.push_back(json);
  }
  args.insert(args.end(), more.begin(), more.end());
  for (const char* a : {UKAI_EXAMPLE_SPMD_PING_PONG, "3", "0", "100", "1000"}) args.push_back(a);
  return Ukai(args);
}

std::string WithoutWallTime(std::string json) {
  return std::regex_replace(json, std::regex("\"wall_seconds\":[^,}]*"), "\"wall_seconds\":-");
}

TEST(LaunchSim, PingPongOneWayTimeIsTheZeroLoadLatencyExactly) {
  const std::string machine =
      WriteConfig("mesh.toml", std::string(kMesh) + "[sim]\ncpu_scale = 0.0\nnode_map = [0, 18]\n");
  const std::string json = ScratchPath("sim.json");
  const Outcome o = LaunchPingPong(machine, json);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::vector<PingLine> lines = PingLines(o.out);
  ASSERT_EQ(lines.size(), 3u) << o.out;
  int64_t last_round = 0;
  for (const PingLine& l : lines) {
    SCOPED_TRACE(l.payload);
    const int64_t there = ukai::testing::ZeroLoadCycles(6, 5, 1, kHeaderBytes + l.payload, 16);
    const int64_t back = ukai::testing::ZeroLoadCycles(6, 5, 1, kHeaderBytes + l.pong_payload, 16);
    EXPECT_EQ(l.one_way, there);
    EXPECT_EQ(l.round_trip, there + back) << "the pong leaves in the cycle the ping arrived";
    last_round = there + back;
  }
  const std::string record = ReadFile(json);
  EXPECT_EQ(std::count(record.begin(), record.end(), '\n'), 1) << "one JSON object";
  EXPECT_NE(record.find("\"processes\":2,"), std::string::npos) << record;
  EXPECT_NE(record.find("\"processes_failed\":0,"), std::string::npos) << record;
  // 9 pings, 9 pongs, and the two barriers' rounds (one frame each way per barrier).
  EXPECT_NE(record.find("\"frames_sent\":22,"), std::string::npos) << record;
  EXPECT_NE(record.find("\"avg_hops\":6.0,"), std::string::npos) << record;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(record, m, std::regex("\"finish_time_us\":\\[([0-9.]+),([0-9.]+)\\]")))
      << record;
  ASSERT_TRUE(std::regex_search(record, m, std::regex("\"program_time_us\":([0-9.]+)")));
  // The program's time is at least three rounds of the largest ping (rank 0 leaves after).
  EXPECT_GE(std::stod(m[1]) * 1000, 3.0 * double(last_round));
  EXPECT_NE(o.out.find("program_us"), std::string::npos) << "the table summary: " << o.out;
  // The launch's wall-clock time (processes start, exchange 20 frames and exit: not 0, and
  // far less than the test's timeout).
  ASSERT_TRUE(std::regex_search(record, m, std::regex("\"wall_seconds\":([0-9.e+-]+)"))) << record;
  EXPECT_GT(std::stod(m[1]), 0.0) << record;
  EXPECT_LT(std::stod(m[1]), 120.0) << record;
  std::remove(json.c_str());
}

// With sim.cpu_scale > 0 the launcher's welcome tells the processes to report their CPU
// time (with 0 they make no CLOCK_THREAD_CPUTIME_ID calls): the sender's CPU time between
// its Now() and the send is charged, so every one-way time exceeds the zero-load latency.
TEST(LaunchSim, CpuTimeIsChargedWhenTheScaleIsPositive) {
  const std::string machine = WriteConfig(
      "mesh_cpu.toml", std::string(kMesh) + "[sim]\ncpu_scale = 1000.0\nnode_map = [0, 18]\n");
  const Outcome o = LaunchPingPong(machine, "");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::vector<PingLine> lines = PingLines(o.out);
  ASSERT_EQ(lines.size(), 3u) << o.out;
  for (const PingLine& l : lines) {
    SCOPED_TRACE(l.payload);
    EXPECT_GT(l.one_way, ukai::testing::ZeroLoadCycles(6, 5, 1, kHeaderBytes + l.payload, 16));
  }
}

TEST(LaunchSim, SameResultsOnEveryRun) {
  const std::string machine = WriteConfig(
      "mesh2.toml", std::string(kMesh) + "[sim]\ncpu_scale = 0.0\nnode_map = [0, 18]\n");
  const std::string j1 = ScratchPath("run1.json"), j2 = ScratchPath("run2.json");
  const Outcome a = LaunchPingPong(machine, j1, 2, {"--format", "json"});
  const Outcome b = LaunchPingPong(machine, j2, 2, {"--format", "json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string r1 = ReadFile(j1), r2 = ReadFile(j2);
  ASSERT_FALSE(r1.empty());
  EXPECT_EQ(WithoutWallTime(r1), WithoutWallTime(r2));
  EXPECT_EQ(WithoutWallTime(a.out), WithoutWallTime(b.out)) << "printed lines and JSON summary";
  std::remove(j1.c_str());
  std::remove(j2.c_str());
}

// A 4x4 torus (hop 5, link 1 cycles: the defaults; 16-byte flits, 1 GHz), communication
// only: process i on node i, so ranks 0..3 sit in one ring of the torus.
std::string Torus4x4(const std::string& name) {
  return WriteConfig(name,
                     "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n"
                     "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
                     "[routing]\nalgorithm = \"dor\"\n[sim]\ncpu_scale = 0.0\n");
}

std::vector<double> FinishTimes(const std::string& record) {
  std::smatch m;
  std::vector<double> out;
  if (!std::regex_search(record, m, std::regex("\"finish_time_us\":\\[([0-9.,]+)\\]"))) return out;
  std::stringstream list(m[1].str());
  for (std::string v; std::getline(list, v, ',');) out.push_back(std::stod(v));
  return out;
}

// Runtime::Barrier() under sim is a dissemination barrier whose rounds are header-only
// frames (56 bytes, 4 flits) through the simulated network. The ping-pong example with 0
// rounds communicates only through its two barriers, every rank entering the first at time
// 0: with 2 processes each barrier is one round of 1 hop, so the program takes exactly
// twice the zero-load latency of such a frame; with 4, rounds of 1 and 2 hops, at least
// twice their sum.
TEST(LaunchSim, BarrierTakesTheZeroLoadTimeOfItsRounds) {
  const std::string machine = Torus4x4("barrier.toml");
  const int64_t one_hop = ukai::testing::ZeroLoadCycles(1, 5, 1, kHeaderBytes, 16);
  const int64_t two_hops = ukai::testing::ZeroLoadCycles(2, 5, 1, kHeaderBytes, 16);
  for (int n : {2, 4}) {
    SCOPED_TRACE(n);
    const std::string json = ScratchPath("barrier.json");
    const Outcome o = Ukai({"launch", "-n", std::to_string(n), "--timeout", "120", "--sim", machine,
                            "--sim-out", json, UKAI_EXAMPLE_SPMD_PING_PONG, "0", "8"});
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    const std::string record = ReadFile(json);
    const std::vector<double> finish = FinishTimes(record);
    ASSERT_EQ(finish.size(), size_t(n)) << record;
    const int rounds = n == 2 ? 1 : 2;
    EXPECT_NE(record.find("\"frames_sent\":" + std::to_string(2 * n * rounds) + ","),
              std::string::npos)
        << record;
    for (double f : finish) {
      const auto cycles = static_cast<int64_t>(std::llround(f * 1000));
      if (n == 2) {
        EXPECT_EQ(cycles, 2 * one_hop);
      } else {
        EXPECT_GE(cycles, 2 * (one_hop + two_hops));
      }
    }
    std::remove(json.c_str());
  }
}

// Threads that spin on the host's cores while they live (the launched processes lose
// their cores at random points).
class HostNoise {
 public:
  explicit HostNoise(int threads) {
    for (int i = 0; i < threads; ++i) {
      spinners_.emplace_back([this] {
        uint64_t x = 1;
        while (!stop_.load(std::memory_order_relaxed)) x = x * 6364136223846793005ull + 1;
        volatile uint64_t sink = x;
        (void)sink;
      });
    }
  }
  ~HostNoise() {
    stop_ = true;
    for (auto& t : spinners_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

// The collectives example (Group::World, every collective, split, Runtime::Barrier) as 4
// processes: the same simulated times on every run, the second run beside threads that
// spin on the host's cores (the processes lose their cores at random points).
TEST(LaunchSim, CollectivesTakeTheSameSimulatedTimesOnEveryRun) {
  const std::string machine = Torus4x4("coll.toml");
  std::vector<std::string> records;
  for (int noise : {0, 3}) {
    std::optional<HostNoise> spinning;
    if (noise > 0) spinning.emplace(noise);
    const std::string json = ScratchPath("coll.json");
    const Outcome o = Ukai({"launch", "-n", "4", "--timeout", "300", "--sim", machine, "--sim-out",
                            json, UKAI_EXAMPLE_COLLECTIVES});
    spinning.reset();
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("all collectives correct"), std::string::npos) << o.out;
    records.push_back(WithoutWallTime(ReadFile(json)));
    std::remove(json.c_str());
  }
  ASSERT_EQ(FinishTimes(records[0]).size(), 4u) << records[0];
  EXPECT_EQ(records[0], records[1]) << "program_time_us, finish_time_us, frames, network fields";
}

// The ring example (a token passed round the ranks, rank 0 waiting in the runtime) as 16
// processes, one per node of the 4x4 torus: every process's finish time, the frames and the
// network's figures are the same on every run, the second run beside threads that spin on
// the host's cores (with 16 processes and the launcher's threads on a loaded host, their
// calls reach the simulation in a different order on every run).
TEST(LaunchSim, SixteenProcessesTakeTheSameSimulatedTimesOnEveryRun) {
  const std::string machine = Torus4x4("ring16.toml");
  std::vector<std::string> records;
  for (int noise : {0, 2}) {
    std::optional<HostNoise> spinning;
    if (noise > 0) spinning.emplace(noise);
    const std::string json = ScratchPath("ring16.json");
    const Outcome o = Ukai({"launch", "-n", "16", "--timeout", "300", "--sim", machine, "--sim-out",
                            json, UKAI_EXAMPLE_SPMD_RING, "20"});
    spinning.reset();
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("20 laps"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("sums correct"), std::string::npos) << o.out;
    records.push_back(WithoutWallTime(ReadFile(json)));
    std::remove(json.c_str());
  }
  ASSERT_EQ(FinishTimes(records[0]).size(), 16u) << records[0];
  // 20 laps of 16 hops, and the two barriers' rounds (4 rounds of 16 frames each).
  EXPECT_NE(records[0].find("\"frames_sent\":" + std::to_string(20 * 16 + 2 * 4 * 16) + ","),
            std::string::npos)
      << records[0];
  EXPECT_EQ(records[0], records[1]) << "program_time_us, finish_time_us, frames, network fields";
}

// Each bad case: exit 2, the message naming the key, and the program never started (it
// would create the marker file).
TEST(LaunchSim, BadMachineConfigsAreRefusedBeforeAnyProcessStarts) {
  const std::string marker = ScratchPath("started");
  std::remove(marker.c_str());
  struct Case {
    const char* name;
    std::string config;
    int n;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"fewer nodes than processes", "[network]\ntopology = \"mesh\"\nk = 2\nn = 2\n", 5,
       "sim.node_map: 5 processes, but the machine has only 4 nodes"},
      {"unknown key", std::string(kMesh) + "[sim]\ncpu_scael = 0.0\n", 2, "sim.cpu_scael"},
      {"node map out of range", std::string(kMesh) + "[sim]\nnode_map = [0, 25]\n", 2,
       "process 1 is mapped to node 25, but the network has 25 nodes"},
      {"node map too short", std::string(kMesh) + "[sim]\nnode_map = [3]\n", 2,
       "sim.node_map places only 1"},
      // Keys that make or measure traffic: the program is the machine's traffic.
      {"synthetic traffic", std::string(kMesh) + "[traffic]\nrate = 0.3\n", 2,
       "traffic.rate: is not read by a machine for the runtime's sim module"},
      {"a trace workload", std::string(kMesh) + "[workload]\nkind = \"netrace\"\n", 2,
       "workload.kind: is not read by a machine"},
      {"partitions", std::string(kMesh) + "[run]\nthreads = 2\n", 2,
       "run.threads: is not read by a machine for the runtime's sim module (ukai launch --sim): "
       "the machine steps on one thread of the launcher"},
      // The gateway NIC: its keys on the group topology only, its own checks before the run.
      {"gateway NIC on a mesh", std::string(kMesh) + "[nic]\nframes = 10\n", 2,
       "nic.frames: is not read by a machine for the runtime's sim module (ukai launch --sim): "
       "the gateway NIC runs under the sim module on network.topology = \"group\""},
      {"synthetic traffic beside the gateway",
       std::string(kGroup24) + "[nic]\nframes = 10\ninternal_traffic = true\n", 2,
       "nic.internal_traffic: is not read by a machine for the runtime's sim module"},
      {"an SSS-CORE NIC key", std::string(kGroup24) + "[nic]\nack_bytes = 8\n", 2,
       "nic.ack_bytes: is not read by a machine for the runtime's sim module (ukai launch --sim): "
       "it is a key of the SSS-CORE NIC model"},
      {"an I/O node that is no node",
       std::string(kGroup24) + "[nic]\nframes = 10\nenabled = [\"7G0\"]\n", 2, "nic.enabled"},
      {"a capture that is not there",
       std::string(kGroup24) + "[nic]\ningress_pcap = \"/nonexistent/in.pcap\"\n", 2,
       "/nonexistent/in.pcap"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string machine = WriteConfig("bad.toml", c.config);
    const Outcome o = Ukai({"launch", "-n", std::to_string(c.n), "--sim", machine, "sh", "-c",
                            "touch " + Quote(marker)});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << o.err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << "a process started";
  }
  const Outcome no_sim = Ukai({"launch", "-n", "1", "--sim-out", "x.json", "true"});
  EXPECT_EQ(no_sim.exit_code, 2);
  EXPECT_NE(no_sim.err.find("need --sim"), std::string::npos) << no_sim.err;
  const std::string machine = WriteConfig("ok.toml", kMesh);
  const Outcome format = Ukai({"launch", "-n", "1", "--sim", machine, "--format", "yaml", "true"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("--format"), std::string::npos) << format.err;
  const Outcome modules = Ukai({"launch", "-n", "1", "--sim", machine, "--modules", "shm", "true"});
  EXPECT_EQ(modules.exit_code, 2);
  EXPECT_NE(modules.err.find("--modules cannot be given with --sim"), std::string::npos)
      << modules.err;
  const Outcome missing = Ukai({"launch", "-n", "1", "--sim", "/nonexistent.toml", "true"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("/nonexistent.toml"), std::string::npos) << missing.err;
}

// Node 4G1 of the gateway patent's group machine (dor-detour, as examples/rt/sim/group24.toml)
// fails at cycle 1; it runs no process, but the path between the two processes (nodes 9 and
// 21) crosses it and a program frame takes no via node: the ping-pong's first frames are
// lost, and both processes wait in the runtime for what cannot come. The run stops after
// sim.stall_ms (exit status 3, naming the processes) instead of hanging the job.
TEST(LaunchSim, EveryProcessWaitingForALostFrameEndsTheRun) {
  const std::string machine =
      WriteConfig("lost.toml",
                  "[network]\ntopology = \"group\"\ngroups = 6\ngroup_size = 4\n[router]\nvcs = 6\n"
                  "flit_bytes = 32\nvc_buffer_flits = 64\n[routing]\nalgorithm = \"dor-detour\"\n"
                  "[faults]\nevents = [{cycle = 1, fail_node = \"4G1\"}]\n"
                  "[sim]\ncpu_scale = 0.0\nnode_map = [9, 21]\nstall_ms = 300\n");
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = Ukai({"launch", "-n", "2", "--timeout", "120", "--sim", machine,
                          UKAI_EXAMPLE_SPMD_PING_PONG, "10", "8"});
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.err.find("sim: every process waits in the runtime (processes 0, 1) and nothing is "
                       "in flight or due at cycle "),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("unchanged for sim.stall_ms = 300 ms of wall time: the program cannot go "
                       "on ("),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find(" 0 frames lost to faults"), std::string::npos) << o.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

// Node 1 of a 4x4 torus (detour-ud) fails at cycle 5000: the launcher stops the process on
// it (not a failure of the job), rank 0 sees its peer fail (unavailable) and stops pinging.
TEST(LaunchSim, NodeFailureStopsTheProcessOnThatNode) {
  const std::string machine =
      WriteConfig("fail.toml",
                  "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[router]\nflit_bytes = 16\n"
                  "clock_mhz = 1000\n[routing]\nalgorithm = \"detour-ud\"\n[sim]\ncpu_scale = 0.0\n"
                  "[faults]\nevents = [{cycle = 5000, fail_node = 1}]\n");
  const std::string json = ScratchPath("fail.json");
  const Outcome o = Ukai({"launch", "-n", "2", "--timeout", "120", "--sim", machine, "--sim-out",
                          json, UKAI_EXAMPLE_SPMD_PING_PONG, "100000", "0"});
  EXPECT_EQ(o.exit_code, 1) << "rank 0 reports the failed peer: " << o.out << o.err;
  EXPECT_NE(o.err.find("rank 1 stopped by the simulated machine: sim: node 1 failed at cycle "
                       "5000 (faults.events)"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("peer failed: unavailable: sim: node 1 failed"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("rank 1 failed after"), std::string::npos) << o.out;
  const std::string record = ReadFile(json);
  EXPECT_NE(record.find("\"processes_failed\":1,"), std::string::npos) << record;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(record, m, std::regex("\"finish_time_us\":\\[[0-9.]+,([0-9.]+)\\]")));
  EXPECT_EQ(std::stod(m[1]), 5.0) << "rank 1's clock stops at the failure (cycle 5000, 1 GHz)";
  std::remove(json.c_str());
}

// A number field of a --sim-out record (NaN when absent).
double RecordNumber(const std::string& record, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(record, m, std::regex("\"" + name + "\":(-?[0-9.eE+-]+)[,}]"))) {
    return std::nan("");
  }
  return std::stod(m[1]);
}

// The kv_store example's result lines ("rank i of 3: ..."), sorted.
std::vector<std::string> RankLines(const std::string& out) {
  std::vector<std::string> lines;
  std::stringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("rank ", 0) == 0) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// kv_store on the group machine, then on it WITH its gateway NICs and external traffic
// (examples/rt/sim/group24_gateway.toml: node 4G2 fails at cycle 1000): the program's
// results are the same, the gateway's frames are delivered and counted in the record, the
// management node sent its detours round the failed node, and the shared routers make the
// program slower. (kv_store's threaded handlers race: its times may differ between runs.)
TEST(LaunchSim, KvStoreRunsBesideTheGatewayNics) {
  const std::string examples = std::string(UKAI_SOURCE_DIR) + "/examples/rt/sim/";
  std::vector<std::string> records;
  std::vector<std::vector<std::string>> results;
  for (const char* machine : {"group24.toml", "group24_gateway.toml"}) {
    SCOPED_TRACE(machine);
    const std::string json = ScratchPath("kv.json");
    const Outcome o = Ukai({"launch", "-n", "3", "--timeout", "120", "--sim", examples + machine,
                            "--sim-out", json, UKAI_EXAMPLE_KV_STORE, "50"});
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    results.push_back(RankLines(o.out));
    records.push_back(WithoutWallTime(ReadFile(json)));
    std::remove(json.c_str());
  }
  ASSERT_EQ(results[0].size(), 3u);
  EXPECT_EQ(results[1], results[0]);
  const std::string& plain = records[0];
  const std::string& gateway = records[1];
  EXPECT_EQ(plain.find("\"frames_in\""), std::string::npos) << plain;
  EXPECT_GT(RecordNumber(gateway, "frames_in"), 0) << gateway;
  EXPECT_GT(RecordNumber(gateway, "gateway_frames_delivered"), 0) << gateway;
  EXPECT_GT(RecordNumber(gateway, "egress_frames"), 0) << gateway;
  EXPECT_GT(RecordNumber(gateway, "table_updates_sent"), 0) << gateway;
  EXPECT_GT(RecordNumber(gateway, "frames_owner_faulty"), 0) << gateway;
  EXPECT_EQ(RecordNumber(gateway, "frames_sent"), RecordNumber(plain, "frames_sent"));
  EXPECT_EQ(RecordNumber(gateway, "frames_delivered"), RecordNumber(gateway, "frames_sent"));
  EXPECT_GE(RecordNumber(gateway, "program_time_us"), RecordNumber(plain, "program_time_us"));
}

// Ingress frames from a capture (`ukai sim gen-pcap`, nic.ingress_pcap) and egress frames
// to one (nic.egress_pcap) beside kv_store: the frames of the capture reach their owners and
// the egress capture receives a pcap header and every egress frame.
TEST(LaunchSim, KvStoreBesideTheGatewayWithCaptures) {
  const std::string in = ScratchPath("gw_in.pcap"), out = ScratchPath("gw_out.pcap");
  ASSERT_EQ(Ukai({"sim", "gen-pcap", "--frames", "300", "--bytes", "500", "--rate", "0.01", in})
                .exit_code,
            0);
  const std::string json = ScratchPath("gw_pcap.json");
  const Outcome o =
      Ukai({"launch", "-n", "3", "--timeout", "120", "--sim",
            std::string(UKAI_SOURCE_DIR) + "/examples/rt/sim/group24_gateway.toml", "--sim-set",
            "nic.frames=0", "--sim-set", "nic.ingress_pcap=" + in, "--sim-set",
            "nic.egress_pcap=" + out, "--sim-out", json, UKAI_EXAMPLE_KV_STORE, "50"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(RankLines(o.out).size(), 3u) << o.out;
  const std::string record = ReadFile(json);
  EXPECT_GT(RecordNumber(record, "frames_in"), 0) << record;
  EXPECT_LE(RecordNumber(record, "frames_in"), 300) << record;
  EXPECT_GT(RecordNumber(record, "gateway_frames_delivered"), 0) << record;
  const double egress = RecordNumber(record, "egress_frames");
  EXPECT_GT(egress, 0) << record;
  // pcap: a 24-byte file header, then per frame a 16-byte record header and the frame
  // (1000 bytes + 4 FCS: the example's nic.egress_frame_bytes).
  EXPECT_EQ(static_cast<double>(std::filesystem::file_size(out)), 24 + egress * (16 + 1004));
  for (const std::string& f : {in, out, json}) std::remove(f.c_str());
}

// The ping-pong (no races) beside the gateway NICs, communication only: the same record,
// gateway figures included, on every run.
TEST(LaunchSim, SameResultsBesideTheGatewayNicsOnEveryRun) {
  const std::string machine =
      std::string(UKAI_SOURCE_DIR) + "/examples/rt/sim/group24_gateway.toml";
  std::vector<std::string> records, outs;
  for (int run = 0; run < 2; ++run) {
    const std::string json = ScratchPath("gw_pingpong.json");
    const Outcome o = LaunchPingPong(machine, json);
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    outs.push_back(o.out.substr(0, o.out.find(" procs")));  // the table has wall_s
    records.push_back(WithoutWallTime(ReadFile(json)));
    std::remove(json.c_str());
  }
  EXPECT_GT(RecordNumber(records[0], "frames_in"), 0) << records[0];
  EXPECT_EQ(records[0], records[1]);
  EXPECT_EQ(PingLines(outs[0]).size(), 3u) << outs[0];
  EXPECT_EQ(outs[0], outs[1]);
}

}  // namespace
}  // namespace ukai::testing_util
