// The configs of experiments/detour-ud/ (and experiments/booksim-topologies/) load, pass every
// check of the simulator, and use the spec's setup and the paper's router
// (experiments/detour-ud/make_configs.py); their faulty nodes are separate fault regions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/engine/network.h"
#include "sim/engine/reconfiguration.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/routing/cdg_check.h"

namespace ukai::sim {
namespace {

// The configs whose name starts with `prefix` ("fig": the figures; "ablation": Detour-UD
// with the table read changed).
std::vector<std::string> Configs(const std::string& prefix = "fig") {
  std::vector<std::string> out;
  const std::filesystem::path dir =
      std::filesystem::path(UKAI_SOURCE_DIR) / "experiments/detour-ud";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".toml") out.push_back(e.path());
  }
  return out;
}

TEST(ExperimentConfigsTest, DetourUdConfigsUseTheSpecSetupAndThePapersRouter) {
  const std::vector<std::string> configs = Configs();
  ASSERT_GE(configs.size(), 24u) << "figs 7-10 x 3 fault cases + figs 11-12 x 2 x 3 timeouts";
  for (const std::string& path : configs) {
    Result<std::vector<SimConfig>> points = LoadSimConfigs(path, {});
    ASSERT_TRUE(points.ok()) << path << ": " << points.status().ToString();
    ASSERT_FALSE(points->empty()) << path;
    for (const SimConfig& c : *points) {
      EXPECT_EQ(c.network.topology, TopologyKind::kTorus) << path;
      EXPECT_EQ(c.network.k, (std::vector<int>{10, 10})) << path;
      EXPECT_EQ(c.router.vcs, 4) << path;
      EXPECT_EQ(c.router.vc_buffer_flits, 8) << path;
      EXPECT_EQ(c.router.flit_bytes, 4) << path;
      EXPECT_EQ(c.router.hop_cycles, 5) << path;
      EXPECT_EQ(c.router.table_lookup_cycles, 5) << path;
      EXPECT_EQ(c.router.clock_mhz, 0.0) << path << ": the Table 1 clock of each algorithm";
      EXPECT_EQ(c.router.header_units, HeaderUnits::kPerPort) << path;
      EXPECT_EQ(c.router.table_read_ports, 2) << path;
      EXPECT_EQ(c.router.eject_flits, 1) << path;
      EXPECT_EQ(c.router.switch_bubble_cycles, 1) << path;
      EXPECT_EQ(c.traffic.source_queue, 1) << path;
      EXPECT_EQ(c.routing.fault_region_distance, 2) << path;
      EXPECT_EQ(c.measure.mode, MeasureMode::kMessages) << path;
      EXPECT_EQ(c.measure.warmup_messages, 3000) << path;
      EXPECT_EQ(c.measure.measure_messages, 4000) << path;
      const bool recovery = path.find("recovery") != std::string::npos;
      if (!recovery) {
        EXPECT_EQ(c.routing.timeout_cycles, 128) << path;
      }
      // The paper evaluates DM-Order and Duato fault-free only.
      if (c.faults.any()) {
        EXPECT_EQ(c.routing.algorithm.rfind("detour", 0), 0u) << path;
      }
    }
  }
}

// experiments/booksim-topologies/: one config per indirect topology (docs/simulator.md);
// each loads, passes the checks, and every point's routing is proved deadlock-free.
TEST(ExperimentConfigsTest, BookSimTopologyConfigsLoadAndAreDeadlockFree) {
  const std::filesystem::path dir =
      std::filesystem::path(UKAI_SOURCE_DIR) / "experiments/booksim-topologies";
  std::vector<TopologyKind> seen;
  for (const char* name : {"cmesh", "flatfly", "fattree", "dragonfly"}) {
    const std::string path = (dir / (std::string(name) + ".toml")).string();
    Result<std::vector<SimConfig>> points = LoadSimConfigs(path, {});
    ASSERT_TRUE(points.ok()) << path << ": " << points.status().ToString();
    ASSERT_FALSE(points->empty()) << path;
    EXPECT_EQ(TopologyName(points->front().network.topology), name);
    for (const SimConfig& c : *points) {
      Result<CdgReport> rep = CheckDeadlockFreedom(c);
      ASSERT_TRUE(rep.ok()) << path << ": " << rep.status().ToString();
      EXPECT_TRUE(rep->ok) << path << " " << c.routing.algorithm << ": " << rep->text;
    }
  }
}

// The ablation configs are the Fig. 7(b) / 9(b) configs (same file text) for detour-ud alone
// with the table read changed.
TEST(ExperimentConfigsTest, DetourUdAblationsChangeOnlyTheTableRead) {
  const std::vector<std::string> configs = Configs("ablation");
  ASSERT_EQ(configs.size(), 6u) << "transpose f2/f4 and uniform f4, x 2 settings";
  auto body = [](const std::string& path) {  // the config after its comment lines
    std::ifstream in(path);
    std::string line, out;
    while (std::getline(in, line)) {
      if (line.rfind('#', 0) == 0) continue;
      if (line.rfind("table_", 0) == 0 || line.rfind("algorithm", 0) == 0) continue;
      out += line + "\n";
    }
    return out;
  };
  for (const std::string& path : configs) {
    Result<std::vector<SimConfig>> points = LoadSimConfigs(path, {});
    ASSERT_TRUE(points.ok()) << path << ": " << points.status().ToString();
    ASSERT_FALSE(points->empty());
    for (const SimConfig& c : *points) {
      EXPECT_EQ(c.routing.algorithm, "detour-ud") << path;
      EXPECT_EQ(c.router.table_lookup_cycles, 0) << path;
      EXPECT_EQ(c.router.table_read_ports, path.find("ports0") != std::string::npos ? 0 : 2)
          << path;
    }
    const std::string name = std::filesystem::path(path).filename().string();
    const size_t f = name.find("_bandwidth_f");
    const std::string figure =
        (name.find("transpose") != std::string::npos ? "fig07_transpose" : "fig09_uniform") +
        name.substr(f, 13) + ".toml";
    EXPECT_EQ(body(path), body(std::filesystem::path(path).parent_path() / figure))
        << path << " differs from " << figure << " beyond the table read and the algorithms";
  }
}

// With routing.fault_region_distance = 2 two faulty nodes are one fault region when their
// regions touch; the placements of the configs are each a region of their own (the rule of
// the reconfiguration planner, engine/reconfiguration.h), and none is on the transpose
// diagonal.
TEST(ExperimentConfigsTest, DetourUdFaultyNodesAreSeparateFaultRegions) {
  int checked = 0;
  for (const std::string& path : Configs()) {
    Result<std::vector<SimConfig>> points = LoadSimConfigs(path, {});
    ASSERT_TRUE(points.ok()) << path << ": " << points.status().ToString();
    const SimConfig& c = points->front();
    if (!c.faults.any()) continue;
    Result<std::unique_ptr<Network>> net = Network::Create(c);
    ASSERT_TRUE(net.ok()) << path << ": " << net.status().ToString();
    const Topology& t = (*net)->topology();
    std::vector<ReconfigSite> sites;
    for (int node = 0; node < t.NumNodes(); ++node) {
      if (!(*net)->faults().NodeFaulty(node)) continue;
      EXPECT_NE(node % 10, node / 10) << path << ": node " << node << " on the diagonal";
      ReconfigSite site;
      for (int p = 0; p < t.NumNetworkPorts(); ++p) {
        const PortRef far = t.Neighbor(node, p);
        if (far.valid()) site.ends.push_back(far.node);
      }
      sites.push_back(site);
    }
    const size_t want = path.find("_f4") != std::string::npos ? 4 : 2;
    ASSERT_EQ(sites.size(), want) << path;
    const std::vector<int> regions = GroupRegions(t, sites, c.routing.fault_region_distance);
    for (size_t i = 0; i < regions.size(); ++i) {
      EXPECT_EQ(regions[i], static_cast<int>(i)) << path << ": faults share a region";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 14) << "figs 7-10 x (2 and 4 faults) + figs 11-12 x 3 timeouts";
}

}  // namespace
}  // namespace ukai::sim

namespace ukai::sim {
namespace {

// experiments/sss/: every config loads and passes the simulator's checks, with the paper's
// network: source-routed switches with one buffer per port, 2-byte flits of the 1.0625 Gb/s
// 8b/10b link, 30 + 2 bytes of header, 4 KiB packets, the NIC's 67 and 200 MB/s.
TEST(ExperimentConfigsTest, SssConfigsUseThePapersNetwork) {
  std::vector<std::string> configs;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(UKAI_SOURCE_DIR) /
                                                           "experiments/sss")) {
    if (e.path().extension() == ".toml") configs.push_back(e.path());
  }
  ASSERT_GE(configs.size(), 5u);
  for (const std::string& path : configs) {
    Result<std::vector<SimConfig>> points = LoadSimConfigs(path, {});
    ASSERT_TRUE(points.ok()) << path << ": " << points.status().ToString();
    for (const SimConfig& c : *points) {
      EXPECT_EQ(c.routing.algorithm, "source") << path;
      EXPECT_EQ(c.router.vcs, 1) << path;
      EXPECT_EQ(c.router.pe_vcs, 1) << path;
      EXPECT_EQ(c.router.flit_bytes, 2) << path;
      EXPECT_NE(c.router.switching, Switching::kWormhole) << path;
      EXPECT_EQ(c.sss.operation, RmaOperation::kWrite) << path;
      EXPECT_EQ(c.sss.raw_gbps, 1.0625) << path;
      EXPECT_EQ(c.sss.header_bytes, 30) << path;
      EXPECT_EQ(c.sss.per_switch_bytes, 2) << path;
      EXPECT_EQ(c.sss.max_payload_bytes, 4096) << path;
      EXPECT_EQ(c.sss.page_bytes, 4096) << path;
      EXPECT_EQ(c.sss.bus_mbytes_per_s, 67) << path;
      EXPECT_EQ(c.sss.buffer_mbytes_per_s, 200) << path;
    }
  }
}

}  // namespace
}  // namespace ukai::sim
