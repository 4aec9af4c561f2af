// Real captures in and out of the gateway model: a synthetic capture read back as ingress
// (frames counted, FCS errors discarded), egress written with correct FCSs that tshark
// reads and checks, and malformed captures as errors naming the frame.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "scratch_path.h"
#include "sim/nic/frame_source.h"
#include "sim/nic/pcap_io.h"
#include "sim/nic/pcap_library.h"
#include "sim/nic/run_gateway.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;
using testing_util::ScratchPath;

SimConfig Group24() {
  SimConfig c;
  c.network.topology = TopologyKind::kGroup;
  c.routing.algorithm = "dor-detour";
  c.nic.internal_traffic = false;
  c.router.flit_bytes = 32;  // 1500-byte frames in 47 flits: quick under ASan
  return c;
}

std::vector<Mac> NodeMacs(int n) {
  std::vector<Mac> m;
  for (int i = 0; i < n; ++i) m.push_back(0x020000000000ULL | i);
  return m;
}

TEST(PcapIoTest, SyntheticCaptureIsTheIngress) {
  const std::string path = ScratchPath("in.pcap");
  ASSERT_TRUE(WriteSyntheticPcap(path, NodeMacs(24), 300, 600, 0.002, true, 0.1, 1e9, 5).ok());
  SimConfig c = Group24();
  c.nic.ingress_pcap = path;
  c.nic.ingress_fcs = true;
  Result<PointResult> r = RunGatewayPoint(c, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const GatewayFigures& g = r->gateway;
  EXPECT_EQ(g.frames_in, 300);
  EXPECT_GT(g.frames_fcs_discarded, 10);
  EXPECT_LT(g.frames_fcs_discarded, 60);
  EXPECT_EQ(g.frames_delivered + g.frames_fcs_discarded, 300);
  EXPECT_EQ(g.frames_lost, 0);
  // Without FCS in the capture every frame is taken as good.
  ASSERT_TRUE(WriteSyntheticPcap(path, NodeMacs(24), 50, 100, 0.002, false, 0, 1e9, 5).ok());
  c.nic.ingress_fcs = false;
  r = RunGatewayPoint(c, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->gateway.frames_delivered, 50);
  std::remove(path.c_str());
}

std::string Shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(PcapIoTest, EgressCaptureHasGoodFcsForTshark) {
  if (Shell("command -v tshark").empty()) GTEST_SKIP() << "tshark is not installed (make deps)";
  const std::string path = ScratchPath("out.pcap");
  SimConfig c = Group24();
  c.nic.egress_rate = 0.001;
  c.nic.egress_frames = 200;
  c.nic.egress_frame_bytes = 700;
  c.nic.egress_pcap = path;
  Result<PointResult> r = RunGatewayPoint(c, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->gateway.egress_frames, 200);
  EXPECT_EQ(r->gateway.egress_bytes, 200 * 704);
  const std::string out = Shell("tshark -o eth.check_fcs:TRUE -o eth.fcs:Always -r " + path +
                                " -T fields -e frame.len -e eth.fcs.status 2>&1");
  int frames = 0, good = 0;
  int64_t bytes = 0;
  size_t at = 0;
  while (at < out.size()) {
    const size_t eol = out.find('\n', at);
    const std::string line = out.substr(at, eol - at);
    at = eol == std::string::npos ? out.size() : eol + 1;
    if (line.empty() || line.find("Running as") != std::string::npos) continue;
    ++frames;
    bytes += std::stoll(line);
    // eth.fcs.status: 1 = good, 0 = bad (tshark 4.0).
    if (line.substr(line.find('\t') + 1) == "1") ++good;
  }
  EXPECT_EQ(frames, 200) << out.substr(0, 400);
  EXPECT_EQ(good, 200) << out.substr(0, 400);
  EXPECT_EQ(bytes, r->gateway.egress_bytes);
  std::remove(path.c_str());
}

TEST(PcapIoTest, MalformedCapturesNameTheFrame) {
  const std::string path = ScratchPath("bad.pcap");
  {
    std::ofstream f(path, std::ios::binary);
    f << "this is not a capture file at all";
  }
  Result<std::unique_ptr<FrameSource>> s = OpenPcapSource(path, 1e9, false);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("nic.ingress_pcap: " + path));
  // A capture cut inside its third frame.
  ASSERT_TRUE(WriteSyntheticPcap(path, NodeMacs(4), 3, 200, 0.01, false, 0, 1e9, 1).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes.substr(0, bytes.size() - 50);
  }
  s = OpenPcapSource(path, 1e9, false);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  IngressFrame f;
  EXPECT_TRUE((*s)->Next(&f).value());
  EXPECT_TRUE((*s)->Next(&f).value());
  Result<bool> third = (*s)->Next(&f);
  ASSERT_FALSE(third.ok());
  EXPECT_THAT(third.status().message(), HasSubstr("frame 3"));
  EXPECT_THAT(third.status().message(), HasSubstr("truncated"));
  // The run reports it too.
  SimConfig c = Group24();
  c.nic.ingress_pcap = path;
  EXPECT_THAT(RunGatewayPoint(c, {}).status().message(), HasSubstr("frame 3"));
  c.nic.ingress_pcap = path + ".missing";
  EXPECT_THAT(RunGatewayPoint(c, {}).status().message(), HasSubstr(".missing"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ukai::sim

namespace ukai::sim {
namespace {

// libpcap is loaded on demand (not linked): the loader finds it and every function.
TEST(PcapLibraryTest, LoadsEveryFunction) {
  Result<std::unique_ptr<PcapLibrary>> lib = PcapLibrary::Load("nic.ingress_pcap");
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  const PcapLibrary& l = **lib;
  EXPECT_NE(l.fopen_offline, nullptr);
  EXPECT_NE(l.open_dead, nullptr);
  EXPECT_NE(l.next_ex, nullptr);
  EXPECT_NE(l.geterr, nullptr);
  EXPECT_NE(l.datalink, nullptr);
  EXPECT_NE(l.datalink_val_to_name, nullptr);
  EXPECT_NE(l.close, nullptr);
  EXPECT_NE(l.dump_open, nullptr);
  EXPECT_NE(l.dump, nullptr);
  EXPECT_NE(l.dump_close, nullptr);
  // Two loads share the library (the loader counts references).
  EXPECT_TRUE(PcapLibrary::Load("nic.egress_pcap").ok());
}

}  // namespace
}  // namespace ukai::sim
