// `mpirun -n 2 ukai sim run` (docs/simulator.md, "Parallel simulation"): the network split
// across two MPI ranks gives results identical to the serial run's, field by field, over a
// matrix of configs (routings, patterns, switching, both measurement modes, static and
// timed faults with the reconfiguration protocol, the gateway NIC with pcap in and out,
// 2 and 3 threads within the ranks, slabs and blocks); rank 0 alone writes; a rank that
// dies makes the job stop with a clear error instead of hanging. The tests start mpirun
// themselves. The same matrix on ranks played by threads of one process (no mpirun, the
// watchdog's report included) is tests/sim/parallel_ranks_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scratch_path.h"

namespace {

using ::testing::HasSubstr;
using ukai::testing_util::ScratchPath;

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

// Runs `cmd` through the shell, stdout and stderr captured.
Outcome Shell(const std::string& cmd) {
  const std::string out = ScratchPath("mpi.out"), err = ScratchPath("mpi.err");
  const int status = std::system((cmd + " >" + out + " 2>" + err + " </dev/null").c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = ReadFile(out);
  o.err = ReadFile(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return o;
}

// mpirun as root on a machine with fewer cores than ranks.
std::string Mpirun(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 mpirun -n " +
         std::to_string(ranks) + " --oversubscribe --bind-to none ";
}

bool HaveMpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

// JSON lines without wall_seconds (the one field allowed to differ between runs).
std::vector<std::string> Comparable(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    j.erase("wall_seconds");
    lines.push_back(j.dump());
  }
  return lines;
}

const std::string kUkai = UKAI_BINARY;
// Every partition allowed, however small (appended last: a TOML table).
const std::string kRun = "[run]\npartition_min_nodes = 1\n";

class SimMpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed (make deps)";
  }
  // Serial, then under `mpirun -n 2` (with `extra` arguments): identical JSON.
  void ExpectSameUnderMpirun(const std::string& toml, const std::string& extra = "") {
    const std::string cfg = ScratchPath("mpi.toml");
    Write(cfg, toml + kRun);
    const Outcome serial = Shell(kUkai + " sim run " + cfg + " --format json");
    ASSERT_EQ(serial.exit_code, 0) << serial.err;
    const Outcome mpi = Shell(Mpirun(2) + kUkai + " sim run " + cfg + " --format json " + extra);
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    const std::vector<std::string> a = Comparable(serial.out), b = Comparable(mpi.out);
    ASSERT_FALSE(a.empty());
    ASSERT_EQ(a.size(), b.size()) << "rank 0 alone writes the records";
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "point " << i << "\n" << toml;
    std::remove(cfg.c_str());
  }
};

TEST_F(SimMpiTest, DorDuatoUniformTransposeAndVct) {
  ExpectSameUnderMpirun(
      "seed = 3\n[network]\ntopology = \"torus\"\nk = 8\n[routing]\n"
      "algorithm = [\"dor\", \"duato\"]\n[traffic]\n"
      "pattern = [\"uniform\", \"transpose\"]\nrate = [0.1, 0.4]\n"
      "[measure]\nwarmup_messages = 300\nmeasure_messages = 1200\n");
  ExpectSameUnderMpirun(
      "[network]\ntopology = \"torus\"\nk = 6\n[router]\nswitching = \"vct\"\n"
      "[routing]\nalgorithm = \"duato\"\n[traffic]\nmessage_bytes = 32\n"
      "rate = 0.9\n[measure]\nwarmup_messages = 300\nmeasure_messages = "
      "1200\nmax_cycles = 5000\n",
      "--threads 3 --set run.partition=\"block\"");
}

TEST_F(SimMpiTest, TimedFaultsWithTheReconfigurationProtocol) {
  ExpectSameUnderMpirun(
      "[network]\ntopology = \"torus\"\nk = 8\n[router]\nvcs = 2\n"
      "[routing]\nalgorithm = \"detour-ud\"\ntimeout_cycles = 16\n"
      "[traffic]\nrate = 0.35\n[faults]\nevents = [{cycle = 1200, fail_node "
      "= [2, 2]}, {cycle = 1300, fail_node = [5, 5]}, {cycle = 5000, "
      "repair_node = [2, 2]}]\n[reconfig]\ndiscard = \"recovering\"\n"
      "[measure]\nwarmup_messages = 500\nmeasure_messages = 4000\n");
}

TEST_F(SimMpiTest, StaticFaultsCyclesModeAndThreadsInsideRanks) {
  ExpectSameUnderMpirun(
      "[network]\ntopology = \"mesh\"\nn = 3\nk = 4\n[routing]\n"
      "algorithm = \"updown\"\n[faults]\nnodes = [[1, 1, 1], [2, 3, 0]]\n"
      "[traffic]\npattern = \"hotspot\"\nhotspot_nodes = [5]\nrate = 0.15\n"
      "[measure]\nmode = \"cycles\"\nwarmup_cycles = 500\nsample_cycles = "
      "500\nmax_cycles = 1500\n",
      "--threads 2");
}

TEST_F(SimMpiTest, GatewayWithPcapInAndOut) {
  const std::string in = ScratchPath("mpi_in.pcap");
  ASSERT_EQ(Shell(kUkai + " sim gen-pcap " + in +
                  " --nodes 24 --frames 100 --bytes 600 --rate "
                  "0.002 --fcs --bad-fcs 0.05")
                .exit_code,
            0);
  const std::string out_serial = ScratchPath("mpi_out_serial.pcap");
  const std::string out_mpi = ScratchPath("mpi_out_ranks.pcap");
  const std::string cfg = ScratchPath("mpi_gw.toml");
  auto toml = [&](const std::string& out) {
    return std::string(
               "[network]\ntopology = \"group\"\n[routing]\nalgorithm = \"dor-detour\"\n"
               "[router]\nflit_bytes = 32\n[nic]\ningress_pcap = \"") +
           in +
           "\"\ningress_fcs = true\negress_rate = 0.001\negress_frames = 50\n"
           "egress_frame_bytes = 300\negress_pcap = \"" +
           out + "\"\n" + kRun;
  };
  Write(cfg, toml(out_serial));
  const Outcome serial = Shell(kUkai + " sim run " + cfg + " --format json");
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  Write(cfg, toml(out_mpi));
  const Outcome mpi = Shell(Mpirun(2) + kUkai + " sim run " + cfg + " --format json");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  std::vector<std::string> a = Comparable(serial.out), b = Comparable(mpi.out);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  // The records name their own egress file; everything else must match.
  EXPECT_EQ(a, b);
  const std::string sa = ReadFile(out_serial), sb = ReadFile(out_mpi);
  EXPECT_FALSE(sa.empty());
  EXPECT_TRUE(sa == sb) << "egress captures differ";
  for (const std::string& f : {in, out_serial, out_mpi, cfg}) std::remove(f.c_str());
}

// --out is written by rank 0 alone; a config error is reported once, every rank exits with
// the usage status.
TEST_F(SimMpiTest, RankZeroWritesAndConfigErrorsAreReportedOnce) {
  const std::string cfg = ScratchPath("mpi_out.toml"), out = ScratchPath("mpi_records.json");
  Write(cfg, "[network]\nk = 6\n[measure]\nwarmup_messages = 100\nmeasure_messages = 300\n" + kRun);
  Outcome o = Shell(Mpirun(2) + kUkai + " sim run " + cfg + " --format json --out " + out);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(Comparable(ReadFile(out)).size(), 1u);
  Write(cfg, "[network]\nk = 1\n");
  o = Shell(Mpirun(2) + kUkai + " sim run " + cfg);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  size_t count = 0;
  for (size_t at = o.err.find("network.k"); at != std::string::npos;
       at = o.err.find("network.k", at + 1)) {
    ++count;
  }
  EXPECT_GE(count, 1u);
  EXPECT_EQ(o.err.find("ukai sim run:"), o.err.rfind("ukai sim run:")) << o.err;
  for (const std::string& f : {cfg, out}) std::remove(f.c_str());
}

// The full-mesh model is not partitioned: --threads is refused naming the key and the
// topologies that take it; under mpirun every rank runs it whole, rank 0 alone writes, and
// the run says so.
TEST_F(SimMpiTest, FullMeshIsNotPartitionedAndSaysSo) {
  const std::string cfg = ScratchPath("mpi_fullmesh.toml");
  Write(cfg,
        "[network]\ntopology = \"fullmesh\"\n[fullmesh]\nnodes = 4\n[workload]\n"
        "ops = [\"at=0 op=p2p root=0 dest=1 bytes=20000\", \"at=0 op=scatter root=1 "
        "bytes=20000\"]\n");
  Outcome o = Shell(kUkai + " sim run " + cfg + " --format json --threads 2");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("run.threads: is not used by network.topology = \"fullmesh\""));
  const Outcome serial = Shell(kUkai + " sim run " + cfg + " --format json");
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  o = Shell(Mpirun(2) + kUkai + " sim run " + cfg + " --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, serial.out);
  EXPECT_THAT(o.err, HasSubstr("the fullmesh model is not split across MPI ranks"));
  std::remove(cfg.c_str());
}

// Rank 1 is killed (SIGKILL) during a long run: the job ends with an error naming what
// happened, well before the run would have finished. The kill waits until rank 1 caught
// SIGTERM (bit 15 of SigCgt: its rank group exists, so rank 0 has passed the same collective
// MPI_Comm_dup and installs its handler too), plus a second; a fixed delay raced with a slow
// start under load.
TEST_F(SimMpiTest, ADyingRankStopsTheOthers) {
  const std::string cfg = ScratchPath("mpi_die.toml");
  Write(cfg,
        "[network]\ntopology = \"torus\"\nn = 3\nk = 12\n[traffic]\nrate = 0.1\n[measure]\n"
        "mode = \"cycles\"\nwarmup_cycles = 10000000\nmax_cycles = 10000000\n");
  const std::string script = ScratchPath("mpi_die.sh");
  Write(script,
        "#!/bin/sh\nif [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (i=0; while [ $i -lt 1200 ]; do "
        "m=$(awk '/^SigCgt/ {print $2}' /proc/$$/status); [ $(( 0x$m & 0x4000 )) -ne 0 ] && "
        "break; i=$((i+1)); sleep 0.1; done; sleep 1; kill -9 $$) & fi\n"
        "exec " +
            kUkai + " sim run " + cfg + "\n");
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = Shell(Mpirun(2) + "sh " + script);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(o.exit_code, 0);
  EXPECT_LT(seconds, 300) << "the job hung after a rank died";
  EXPECT_THAT(o.err, HasSubstr("signal 9")) << o.err;                   // mpirun's report
  EXPECT_THAT(o.err, HasSubstr("rank 0: stopped by mpirun")) << o.err;  // ours
  for (const std::string& f : {cfg, script}) std::remove(f.c_str());
}

}  // namespace
