// The netrace reader and replay (sim/workload/netrace_format.h, netrace_source.h): the two
// public traces replay every packet exactly once and never before its cycle or its
// dependencies' deliveries (checked on every delivery); traces written by the test check
// regions, the 255-node limit, node maps, cycle scaling, missing dependencies, bounded
// memory on a long trace, and every error (wrong magic, version, truncation, corruption,
// more nodes than the network).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "netrace_writer.h"
#include "scratch_path.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/run.h"
#include "sim/sim_test_util.h"
#include "sim/workload/netrace_source.h"
#include "sim/workload/run_workload.h"
#include "workload_test_util.h"

namespace ukai::sim {
namespace {

using testing::DriveEnd;
using testing::DriveWorkload;
using ukai::testing::TraceHeader;
using ukai::testing::TracePacket;
using ukai::testing_util::ScratchPath;

std::string DataFile(const std::string& name) {
  return std::string(UKAI_SOURCE_DIR) + "/tests/data/netrace/" + name;
}

SimConfig TraceConfig(const std::string& file, std::vector<int> k = {8, 8}) {
  SimConfig c = testing::SmallConfig(TopologyKind::kMesh, std::move(k));
  c.workload.kind = WorkloadKind::kNetrace;
  c.workload.file = file;
  return c;
}

struct Replay {
  std::unique_ptr<Network> net;
  std::unique_ptr<NetraceSource> source;
  std::unique_ptr<Workload> workload;
  DriveEnd end = DriveEnd::kError;
};

Replay RunReplay(const SimConfig& c) {
  Replay r;
  r.net = std::move(Network::Create(c, {}, false)).value();
  Result<std::unique_ptr<NetraceSource>> s = NetraceSource::Open(c.workload, r.net->topology());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return r;
  r.source = std::move(*s);
  r.source->KeepAddLog(true);
  WorkloadOptions o = WorkloadOptionsFor(c);
  o.keep_packet_log = true;
  r.workload = std::make_unique<Workload>(o);
  r.workload->AddSource(r.source.get());
  r.end = DriveWorkload(*r.net, *r.workload);
  return r;
}

// Every packet of the trace: its cycle and the packets it lets start.
std::map<uint32_t, NetracePacket> ReadAll(const std::string& path) {
  std::map<uint32_t, NetracePacket> out;
  auto reader = std::move(NetraceReader::Open(path)).value();
  NetracePacket p;
  while (std::move(reader->Next(&p)).value()) out[p.id] = p;
  return out;
}

// Each packet delivered once, created not before its cycle, nor before each packet that
// lists it has been delivered.
void CheckReplay(const Replay& r, const std::map<uint32_t, NetracePacket>& trace,
                 bool dependencies = true) {
  ASSERT_EQ(r.end, DriveEnd::kDone);
  const auto times = testing::TimesOf(*r.workload);
  std::map<uint32_t, WorkMessageId> msg_of;
  for (const auto& [trace_id, msg] : r.source->add_log()) msg_of[trace_id] = msg;
  ASSERT_EQ(msg_of.size(), trace.size());
  ASSERT_EQ(r.workload->stats().messages_delivered, static_cast<int64_t>(trace.size()));
  for (const auto& [id, p] : trace) {
    const testing::MessageTimes& t = times.at(msg_of.at(id));
    EXPECT_EQ(t.packets, 1);
    EXPECT_GE(t.created, static_cast<int64_t>(p.cycle)) << "packet " << id;
    EXPECT_GT(t.delivered, t.created);
    if (!dependencies) continue;
    for (uint32_t q : p.deps) {
      if (!trace.count(q)) continue;
      EXPECT_GE(times.at(msg_of.at(q)).created, t.delivered)
          << "packet " << q << " started before packet " << id << " was delivered";
    }
  }
}

TEST(Netrace, PublicTracesReplayEveryPacketOnceAfterItsDependencies) {
  for (const auto& [name, packets, cycles] :
       {std::tuple<const char*, int, int>{"shrtex.tra.bz2", 12, 221},
        std::tuple<const char*, int, int>{"example.tra.bz2", 175, 6820}}) {
    SCOPED_TRACE(name);
    const SimConfig c = TraceConfig(DataFile(name));
    const std::map<uint32_t, NetracePacket> trace = ReadAll(c.workload.file);
    ASSERT_EQ(trace.size(), static_cast<size_t>(packets));
    Replay r = RunReplay(c);
    CheckReplay(r, trace);
    EXPECT_EQ(r.source->header().nodes, 64);
    EXPECT_EQ(r.source->header().cycles, static_cast<uint64_t>(cycles));

    Result<PointResult> point = RunPoint(c);
    ASSERT_TRUE(point.ok()) << point.status().ToString();
    const WorkloadFigures& f = point->workload;
    EXPECT_EQ(f.trace_packets, packets);
    EXPECT_EQ(f.messages, packets);
    EXPECT_EQ(f.trace_cycles, cycles);
    EXPECT_GT(f.runtime_cycles, f.trace_cycles);  // the last packet still has to travel
    EXPECT_DOUBLE_EQ(f.slowdown, double(f.runtime_cycles) / double(f.trace_cycles));
    EXPECT_EQ(point->messages_measured, packets);
    EXPECT_EQ(point->note, "");
    EXPECT_NE(f.latency_by_type.find("\"ReadReq\""), std::string::npos);
  }
}

TEST(Netrace, PacketSizesFollowTheFormatsTable) {
  int control = 0, data = 0;
  for (const NetracePacketType& t : kNetracePacketTypes) {
    control += t.bytes == 8;
    data += t.bytes == 72;
    EXPECT_TRUE(t.bytes == 8 || t.bytes == 72 ||
                (t.bytes == -1 && std::string(t.name) == "InvalidCmd"))
        << t.name;
  }
  EXPECT_EQ(control, 9);  // 15 valid types of the 31
  EXPECT_EQ(data, 6);
  EXPECT_EQ(kNetracePacketTypes[1].bytes, 8);    // ReadReq
  EXPECT_EQ(kNetracePacketTypes[2].bytes, 72);   // ReadResp
  EXPECT_EQ(kNetracePacketTypes[4].bytes, 72);   // WriteReq carries its line
  EXPECT_EQ(kNetracePacketTypes[30].bytes, 72);  // DowngradeResp
}

// A chain: packet i+1 waits for packet i, all stamped cycle 0.
std::vector<TracePacket> Chain(int n, int nodes) {
  std::vector<TracePacket> out;
  for (int i = 0; i < n; ++i) {
    TracePacket p;
    p.id = static_cast<uint32_t>(i);
    p.src = static_cast<uint8_t>(i % nodes);
    p.dst = static_cast<uint8_t>((i * 7 + 3) % nodes);
    p.type = i % 2 ? 2 : 1;
    if (i + 1 < n) p.deps = {static_cast<uint32_t>(i + 1)};
    out.push_back(p);
  }
  return out;
}

TEST(Netrace, DependencyChainsSerialiseAndCanBeSwitchedOff) {
  const std::string path = ScratchPath("chain.tra.bz2");
  TraceHeader h;
  h.nodes = 16;
  ASSERT_TRUE(ukai::testing::WriteTrace(path, h, Chain(40, 16)));
  SimConfig c = TraceConfig(path, {4, 4});
  const auto trace = ReadAll(path);
  Replay with = RunReplay(c);
  CheckReplay(with, trace);
  c.workload.dependencies = false;
  Replay without = RunReplay(c);
  CheckReplay(without, trace, /*dependencies=*/false);
  // Without dependencies everything starts at cycle 0 and ends far sooner.
  EXPECT_LT(without.workload->stats().last_delivery * 4, with.workload->stats().last_delivery);
}

TEST(Netrace, RegionsStartTheReplayAtTheirFirstPacket) {
  // Three regions of 10 packets, 1000 cycles each: region r's packets at 1000 r + 10 i.
  std::vector<TracePacket> packets;
  TraceHeader h;
  h.nodes = 16;
  uint64_t offset = 0;
  for (int r = 0; r < 3; ++r) {
    h.regions.push_back({offset, 1000, 10});
    for (int i = 0; i < 10; ++i) {
      TracePacket p;
      p.id = static_cast<uint32_t>(10 * r + i);
      p.cycle = static_cast<uint64_t>(1000 * r + 10 * i);
      p.src = static_cast<uint8_t>(i);
      p.dst = static_cast<uint8_t>(15 - i);
      offset += ukai::testing::PacketBytes(p).size();
      packets.push_back(p);
    }
  }
  const std::string path = ScratchPath("regions.tra.bz2");
  ASSERT_TRUE(ukai::testing::WriteTrace(path, h, packets));
  SimConfig c = TraceConfig(path, {4, 4});
  c.workload.region = 1;
  Replay r = RunReplay(c);
  ASSERT_EQ(r.end, DriveEnd::kDone);
  ASSERT_EQ(r.source->add_log().size(), 20u);
  EXPECT_EQ(r.source->add_log().front().first, 10u);  // region 1's first packet
  const auto times = testing::TimesOf(*r.workload);
  EXPECT_EQ(times.at(r.source->add_log().front().second).created, 0);  // cycle 1000 -> 0
  EXPECT_EQ(r.source->last_packet_cycle(), 1090);                      // 2090 - 1000
  c.workload.region = 3;
  Result<PointResult> bad = RunPoint(c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("workload.region"), std::string::npos);
  EXPECT_NE(bad.status().message().find("no region 3"), std::string::npos);
}

TEST(Netrace, NodeMapCycleScaleAnd255Nodes) {
  std::vector<TracePacket> packets;
  for (int i = 0; i < 255; ++i) {
    TracePacket p;
    p.id = static_cast<uint32_t>(i);
    p.cycle = static_cast<uint64_t>(4 * i);
    p.src = static_cast<uint8_t>(i);
    p.dst = static_cast<uint8_t>(254 - i);
    packets.push_back(p);
  }
  TraceHeader h;
  h.nodes = 255;
  const std::string path = ScratchPath("n255.tra.bz2");
  ASSERT_TRUE(ukai::testing::WriteTrace(path, h, packets));
  SimConfig c = TraceConfig(path, {16, 16});
  c.workload.cycle_scale = 2;
  for (int i = 0; i < 255; ++i) c.workload.node_list.push_back(255 - i);  // reversed
  c.workload.node_map = NodeMapKind::kList;
  Replay r = RunReplay(c);
  ASSERT_EQ(r.end, DriveEnd::kDone);
  EXPECT_EQ(r.workload->stats().messages_delivered, 255);
  for (const PacketRecord& p : r.workload->packet_log()) {
    const int trace_src = 255 - p.src;
    EXPECT_EQ(p.dst, 255 - (254 - trace_src));
    EXPECT_GE(p.created, 2 * trace_src);  // cycle 4 i, scaled by 1/2
  }
  EXPECT_EQ(r.source->last_packet_cycle(), 4 * 254 / 2);
  // The same trace on a 15 x 15 mesh (225 nodes) is refused, naming the key.
  SimConfig small = TraceConfig(path, {15, 15});
  Result<PointResult> refused = RunPoint(small);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("255 nodes but the network has only 225"),
            std::string::npos)
      << refused.status().message();
}

TEST(Netrace, AMissingDependencyIsReportedAndTheRestRuns) {
  std::vector<TracePacket> packets = Chain(10, 16);
  packets[3].deps.push_back(999);  // never appears
  TraceHeader h;
  h.nodes = 16;
  const std::string path = ScratchPath("missing.tra.bz2");
  ASSERT_TRUE(ukai::testing::WriteTrace(path, h, packets));
  Result<PointResult> r = RunPoint(TraceConfig(path, {4, 4}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->workload.trace_packets, 10);
  EXPECT_EQ(r->workload.messages, 10);
  EXPECT_EQ(r->workload.missing_dependencies, 1);
  EXPECT_NE(r->note.find("never appear in the trace (first: 999)"), std::string::npos) << r->note;
}

// The error of replaying `bytes` (a .tra.bz2 file's content).
Status ReplayError(const std::string& bytes, const std::string& name) {
  const std::string path = ScratchPath(name);
  EXPECT_TRUE(ukai::testing::WriteFile(path, bytes));
  Result<PointResult> r = RunPoint(TraceConfig(path, {4, 4}));
  EXPECT_FALSE(r.ok());
  return r.ok() ? Status::Ok() : r.status();
}

TEST(Netrace, BadTracesGiveClearErrorsNamingFileAndPacket) {
  TraceHeader h;
  h.nodes = 16;
  const std::vector<TracePacket> packets = Chain(50, 16);
  const std::string raw = ukai::testing::TraceBytes(h, packets);

  TraceHeader magic = h;
  magic.magic = 0x12345678;
  Status st = ReplayError(ukai::testing::Bz2Compress(ukai::testing::TraceBytes(magic, packets)),
                          "magic.tra.bz2");
  EXPECT_NE(st.message().find("not a netrace trace: magic 0x12345678"), std::string::npos)
      << st.message();

  TraceHeader version = h;
  version.version = 2.0f;
  st = ReplayError(ukai::testing::Bz2Compress(ukai::testing::TraceBytes(version, packets)),
                   "version.tra.bz2");
  EXPECT_NE(st.message().find("version 2 is not supported"), std::string::npos) << st.message();

  // Cut inside packet 20's record: the reader names the packet.
  const size_t header = raw.size() - 50 * 25 + 4;  // 49 packets with one dependency id
  const std::string cut = raw.substr(0, header + 20 * 25 + 10);
  st = ReplayError(ukai::testing::Bz2Compress(cut), "cut.tra.bz2");
  EXPECT_NE(st.message().find("cut.tra.bz2: packet 20"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();

  // The compressed file cut short: the bzip2 stream has no end.
  const std::string z = ukai::testing::Bz2Compress(raw);
  st = ReplayError(z.substr(0, z.size() - 30), "short.tra.bz2");
  EXPECT_NE(st.message().find("short.tra.bz2"), std::string::npos);
  EXPECT_NE(st.message().find("bzip2"), std::string::npos) << st.message();

  // Corrupt compressed bytes.
  std::string corrupt = z;
  for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 8; ++i) corrupt[i] ^= 0x5a;
  st = ReplayError(corrupt, "corrupt.tra.bz2");
  EXPECT_NE(st.message().find("corrupt.tra.bz2"), std::string::npos) << st.message();

  // Not bzip2 at all.
  st = ReplayError(raw, "plain.tra.bz2");
  EXPECT_NE(st.message().find("not bzip2 data"), std::string::npos) << st.message();

  // The header promises more packets than the stream has.
  TraceHeader more = h;
  more.packets = 60;
  st = ReplayError(ukai::testing::Bz2Compress(ukai::testing::TraceBytes(more, packets)),
                   "more.tra.bz2");
  EXPECT_NE(st.message().find("the header lists 60 packets"), std::string::npos) << st.message();

  // A node beyond the header's node count, an invalid packet type.
  std::vector<TracePacket> bad = packets;
  bad[7].dst = 40;
  st = ReplayError(ukai::testing::Bz2Compress(ukai::testing::TraceBytes(h, bad)), "node.tra.bz2");
  EXPECT_NE(st.message().find("packet 7"), std::string::npos) << st.message();
  bad = packets;
  bad[9].type = 7;
  st = ReplayError(ukai::testing::Bz2Compress(ukai::testing::TraceBytes(h, bad)), "type.tra.bz2");
  EXPECT_NE(st.message().find("packet 9"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("type 7"), std::string::npos) << st.message();

  // A missing file, a file with nothing in it.
  st = ReplayError("", "empty.tra.bz2");
  EXPECT_NE(st.message().find("empty"), std::string::npos) << st.message();
}

TEST(Netrace, MoreTraceNodesThanNetworkNodesIsAConfigError) {
  Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(
      "[network]\ntopology = \"mesh\"\nk = 4\n[workload]\nkind = \"netrace\"\nfile = \"" +
          DataFile("example.tra.bz2") + "\"\n",
      "t.toml", {});
  ASSERT_FALSE(points.ok());
  EXPECT_NE(points.status().message().find("64 nodes but the network has only 16"),
            std::string::npos)
      << points.status().message();
  EXPECT_NE(points.status().message().find("t.toml:6"), std::string::npos)
      << points.status().message();
}

// Memory: the layer holds the packets in flight, the read-ahead window and the waiting
// ones -- not the trace. A trace 10 times longer needs no more.
TEST(Netrace, MemoryIsBoundedWhateverTheTraceLength) {
  int64_t pending[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    const int n = run == 0 ? 4000 : 40000;
    const std::string path = ScratchPath("long" + std::to_string(run) + ".tra.bz2");
    TraceHeader h;
    h.nodes = 16;
    ukai::testing::StreamingTraceWriter w(path, h, n, static_cast<uint64_t>(n - 1) * 4);
    for (int i = 0; i < n; ++i) {
      TracePacket p;
      p.id = static_cast<uint32_t>(i);
      p.cycle = static_cast<uint64_t>(i) * 4;  // 0.25 packets per cycle over 16 nodes
      p.src = static_cast<uint8_t>(i % 16);
      p.dst = static_cast<uint8_t>((i * 5 + 1) % 16);
      p.type = i % 3 ? 1 : 2;
      if (i + 3 < n && i % 2 == 0) p.deps = {static_cast<uint32_t>(i + 3)};
      w.Add(p);
    }
    ASSERT_TRUE(w.Close());
    Replay r = RunReplay(TraceConfig(path, {4, 4}));
    ASSERT_EQ(r.end, DriveEnd::kDone);
    EXPECT_EQ(r.workload->stats().messages_delivered, n);
    pending[run] = r.workload->stats().max_pending;
  }
  EXPECT_GT(pending[0], 0);
  EXPECT_LE(pending[1], pending[0] + pending[0] / 2) << pending[0] << " vs " << pending[1];
  // The read-ahead window: at most about 1024 cycles of packets (256 here) plus in flight.
  EXPECT_LT(pending[1], 600);
}

}  // namespace
}  // namespace ukai::sim
