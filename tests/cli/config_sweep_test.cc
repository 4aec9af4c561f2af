// Reading SimConfigs: defaults, every key reaching its field, --set, and sweep expansion.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"

namespace ukai::sim {
namespace {

std::vector<SimConfig> Load(const std::string& toml, const std::vector<std::string>& sets = {}) {
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(toml, "t.toml", sets);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<SimConfig>{};
}

TEST(SimConfigLoadTest, EmptyConfigIsOnePointOfDefaults) {
  std::vector<SimConfig> p = Load("");
  ASSERT_EQ(p.size(), 1u);
  const SimConfig d;
  EXPECT_EQ(p[0].network.k, d.network.k);
  EXPECT_EQ(p[0].router.vcs, d.router.vcs);
  EXPECT_EQ(p[0].routing.algorithm, d.routing.algorithm);
  EXPECT_EQ(p[0].traffic.rate, d.traffic.rate);
  EXPECT_EQ(p[0].seed, d.seed);
}

TEST(SimConfigLoadTest, EveryKeyReachesItsField) {
  std::vector<SimConfig> p = Load(R"(
seed = 77
[network]
topology = "mesh"
n = 3
k = [4, 5, 6]
[router]
vcs = 6
vc_buffer_flits = 16
pe_vcs = 3
switching = "vct"
hop_cycles = 4
link_cycles = 2
table_lookup_cycles = 7
flit_bytes = 8
clock_mhz = 100
[routing]
algorithm = "duato"
[traffic]
pattern = "hotspot"
message_bytes = 128
injection = "interval"
rate = 0.25
interval = 500
hotspot_nodes = [1, 119]
hotspot_fraction = 0.5
[measure]
mode = "cycles"
warmup_messages = 10
measure_messages = 20
warmup_cycles = 30
sample_cycles = 40
convergence = 0.05
max_cycles = 50
watchdog_cycles = 60
)");
  ASSERT_EQ(p.size(), 1u);
  const SimConfig& c = p[0];
  EXPECT_EQ(c.seed, 77u);
  EXPECT_EQ(c.network.topology, TopologyKind::kMesh);
  EXPECT_EQ(c.network.n, 3);
  EXPECT_EQ(c.network.k, (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(c.router.vcs, 6);
  EXPECT_EQ(c.router.vc_buffer_flits, 16);
  EXPECT_EQ(c.router.pe_vcs, 3);
  EXPECT_EQ(c.router.switching, Switching::kVirtualCutThrough);
  EXPECT_EQ(c.router.hop_cycles, 4);
  EXPECT_EQ(c.router.link_cycles, 2);
  EXPECT_EQ(c.router.table_lookup_cycles, 7);
  EXPECT_EQ(c.router.flit_bytes, 8);
  EXPECT_EQ(c.router.clock_mhz, 100.0);
  EXPECT_EQ(c.routing.algorithm, "duato");
  EXPECT_EQ(c.traffic.pattern, "hotspot");
  EXPECT_EQ(c.traffic.message_bytes, 128);
  EXPECT_EQ(c.traffic.injection, InjectionKind::kInterval);
  EXPECT_EQ(c.traffic.rate, 0.25);
  EXPECT_EQ(c.traffic.interval, 500);
  EXPECT_EQ(c.traffic.hotspot_nodes, (std::vector<int>{1, 119}));
  EXPECT_EQ(c.traffic.hotspot_fraction, 0.5);
  EXPECT_EQ(c.measure.mode, MeasureMode::kCycles);
  EXPECT_EQ(c.measure.warmup_messages, 10);
  EXPECT_EQ(c.measure.measure_messages, 20);
  EXPECT_EQ(c.measure.warmup_cycles, 30);
  EXPECT_EQ(c.measure.sample_cycles, 40);
  EXPECT_EQ(c.measure.convergence, 0.05);
  EXPECT_EQ(c.measure.max_cycles, 50);
  EXPECT_EQ(c.measure.watchdog_cycles, 60);
}

// The workload.* keys of one trace kind need that kind and a trace (docs/config.md, "Trace
// workloads"): the lines that give them, and workload.file's own value.
std::string WorkloadContext(const std::string& key, std::string* value) {
  if (key.rfind("workload.", 0) != 0 || key == "workload.kind") return "";
  const std::string dir = std::string(UKAI_SOURCE_DIR) + "/tests/data/";
  const bool otf2 = key == "workload.eager_bytes" || key == "workload.collective_algorithm" ||
                    key == "workload.compute" || key == "workload.rank_map";
  const std::string file = otf2 ? dir + "otf2/ring4/traces.otf2" : dir + "netrace/shrtex.tra.bz2";
  if (key == "workload.file") {
    *value = "\"" + file + "\"";
    return std::string("workload.kind = \"netrace\"\n");
  }
  return std::string("workload.kind = \"") + (otf2 ? "otf2" : "netrace") +
         "\"\nworkload.file = \"" + file + "\"\n";
}

TEST(SimConfigLoadTest, SchemaCoversEveryBinding) {
  // Every schema key is accepted with its own default text as value.
  config::Schema schema = SimConfigSchema();
  for (const config::KeySpec& k : schema.keys()) {
    std::string value = k.default_text;
    if (value == "[]" && k.type != config::ValueType::kStructured) continue;  // nic.macs: none
    // A list default is already TOML (nic.enabled: ["3G0", "3G1"]).
    if ((k.type == config::ValueType::kEnum || k.type == config::ValueType::kString) &&
        value.rfind('[', 0) != 0) {
      value = "\"" + value + "\"";
    }
    Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(
        WorkloadContext(k.key, &value) + k.key + " = " + value + "\n", "d.toml", {});
    EXPECT_TRUE(r.ok()) << k.key << ": " << r.status().ToString();
  }
}

TEST(SimConfigLoadTest, ScalarRadixAppliesToEveryDimension) {
  std::vector<SimConfig> p = Load("[network]\nn = 3\nk = 4\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].network.k, (std::vector<int>{4, 4, 4}));
  p = Load("[network]\nn = 1\n");  // no k: the default radix in each dimension
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].network.k, (std::vector<int>{10}));
}

TEST(SimConfigLoadTest, SetOverridesFileAndLaterSetWins) {
  std::vector<SimConfig> p =
      Load("[router]\nvcs = 4\n[traffic]\nrate = [0.1, 0.2]\n",
           {"router.vcs=8", "traffic.rate=0.3", "router.vcs=6", "routing.algorithm=duato"});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].router.vcs, 6);
  EXPECT_EQ(p[0].traffic.rate, 0.3);
  EXPECT_EQ(p[0].routing.algorithm, "duato");
}

TEST(SimConfigSweepTest, SingleListGivesOnePointPerValueInOrder) {
  std::vector<SimConfig> p = Load("[traffic]\nrate = [0.3, 0.1, 0.2]\n");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].traffic.rate, 0.3);
  EXPECT_EQ(p[1].traffic.rate, 0.1);
  EXPECT_EQ(p[2].traffic.rate, 0.2);
}

TEST(SimConfigSweepTest, CrossProductInDocumentedOrder) {
  // Written in the file in another order than SweepKeyOrder on purpose.
  std::vector<SimConfig> p = Load(
      "seed = [1, 2]\n[traffic]\nrate = [0.1, 0.2]\npattern = [\"uniform\", \"transpose\"]\n"
      "message_bytes = [16, 64]\n[routing]\nalgorithm = [\"dor\", \"duato\"]\n");
  ASSERT_EQ(p.size(), 32u);
  size_t i = 0;
  for (const char* algorithm : {"dor", "duato"}) {
    for (const char* pattern : {"uniform", "transpose"}) {
      for (int bytes : {16, 64}) {
        for (double rate : {0.1, 0.2}) {
          for (uint64_t seed : {1u, 2u}) {
            SCOPED_TRACE(i);
            EXPECT_EQ(p[i].routing.algorithm, algorithm);
            EXPECT_EQ(p[i].traffic.pattern, pattern);
            EXPECT_EQ(p[i].traffic.message_bytes, bytes);
            EXPECT_EQ(p[i].traffic.rate, rate);
            EXPECT_EQ(p[i].seed, seed);
            ++i;
          }
        }
      }
    }
  }
}

TEST(SimConfigSweepTest, IntervalSweep) {
  std::vector<SimConfig> p =
      Load("[traffic]\ninjection = \"interval\"\ninterval = [400, 200, 100]\n");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].traffic.interval, 400);
  EXPECT_EQ(p[2].traffic.interval, 100);
  EXPECT_EQ(p[2].traffic.injection, InjectionKind::kInterval);
}

TEST(SimConfigSweepTest, SweepFromSetArgument) {
  std::vector<SimConfig> p = Load("", {"traffic.message_bytes=[8, 32]", "seed=[5,6,7]"});
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].traffic.message_bytes, 8);
  EXPECT_EQ(p[0].seed, 5u);
  EXPECT_EQ(p[5].traffic.message_bytes, 32);
  EXPECT_EQ(p[5].seed, 7u);
}

TEST(SimConfigSweepTest, OneElementListIsOnePoint) {
  std::vector<SimConfig> p = Load("[routing]\nalgorithm = [\"duato\"]\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].routing.algorithm, "duato");
}

TEST(SimConfigSweepTest, SweepOrderIsDocumented) {
  std::vector<std::string> order(SweepKeyOrder().begin(), SweepKeyOrder().end());
  EXPECT_EQ(order, (std::vector<std::string>{
                       "router.switching", "traffic.multicast", "traffic.acks",
                       "traffic.multicast_group_size", "routing.algorithm", "traffic.pattern",
                       "traffic.message_bytes", "traffic.interval", "traffic.rate", "seed"}));
  config::Schema schema = SimConfigSchema();
  for (const config::KeySpec& k : schema.keys()) {
    bool listed = std::find(order.begin(), order.end(), k.key) != order.end();
    EXPECT_EQ(listed, k.shape == config::Shape::kSweep) << k.key;
  }
}

}  // namespace
}  // namespace ukai::sim
