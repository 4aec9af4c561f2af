// The configs of experiments/detour-ud/ (and experiments/booksim-topologies/) load, pass every
// check of the simulator, and use the spec's setup and the paper's router
// (experiments/detour-ud/make_configs.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/routing/cdg_check.h"

namespace ukai::sim {
namespace {

std::vector<std::string> Configs() {
  std::vector<std::string> out;
  const std::filesystem::path dir =
      std::filesystem::path(UKAI_SOURCE_DIR) / "experiments/detour-ud";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("fig", 0) == 0 && e.path().extension() == ".toml") out.push_back(e.path());
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

}  // namespace
}  // namespace ukai::sim
