// The front door (sim/experiment/front_door.h): the reader is chosen by content, the model by
// network.topology (file, last --set, default), the file is checked once against that
// model's schema, keys of other models are refused naming the topology they need, and
// errors carry their key as a field.
#include "sim/experiment/front_door.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/raw_config.h"
#include "sim/experiment/config_readers.h"
#include "sim/experiment/flit_model.h"
#include "sim/experiment/machine_model.h"
#include "sim/fullmesh/machine.h"
#include "sim/routing/registry.h"

namespace ukai::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kFullMesh[] =
    "[network]\ntopology = \"fullmesh\"\n[workload]\noperation = \"p2p\"\nbytes = [8, 16]\n";

Result<LoadedConfig> LoadAtTheFrontDoor(const std::string& text,
                                        const std::vector<std::string>& sets = {}) {
  return LoadConfigFromString(text, "t.toml", sets);
}

TEST(FrontDoorTest, TheTopologyChoosesTheModel) {
  Result<LoadedConfig> plain = LoadAtTheFrontDoor("");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->model->name, "flit");
  EXPECT_EQ(plain->topology, "torus");
  EXPECT_EQ(plain->reader->name, "toml");
  ASSERT_NE(FlitPoints(*plain->experiment), nullptr);

  Result<LoadedConfig> mesh = LoadAtTheFrontDoor(kFullMesh);
  ASSERT_TRUE(mesh.ok()) << mesh.status().ToString();
  EXPECT_EQ(mesh->model->name, "fullmesh");
  EXPECT_EQ(mesh->topology, "fullmesh");

  // The last --set of network.topology wins over the file.
  Result<LoadedConfig> set = LoadAtTheFrontDoor(
      "[network]\ntopology = \"mesh\"\n", {"network.topology=torus", "network.topology=fullmesh",
                                           "workload.operation=p2p", "workload.bytes=[8]"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->model->name, "fullmesh");
  Result<LoadedConfig> back = LoadAtTheFrontDoor(kFullMesh, {"network.topology=group"});
  EXPECT_FALSE(back.ok());  // the full-mesh keys of the file do not belong to group
  EXPECT_THAT(back.status().message(),
              HasSubstr("workload.operation: needs network.topology = \"fullmesh\" at t.toml:4:1"));
}

TEST(FrontDoorTest, AnUnknownTopologyListsEveryModelsTopologies) {
  Result<LoadedConfig> r = LoadAtTheFrontDoor("[network]\ntopology = \"fullmsh\"\nk = 4\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "network.topology: 'fullmsh' is not one of mesh, torus, group, graph, tree, cmesh, "
            "flatfly, fattree, dragonfly, fullmesh (did you mean 'fullmesh'?) at t.toml:2:12");
  EXPECT_EQ(r.status().key(), "network.topology");
  r = LoadAtTheFrontDoor("", {"network.topology=4"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("network.topology: expected a string, got an "
                                              "integer (4) in --set network.topology=4"));
}

TEST(FrontDoorTest, KeysOfAnotherModelAreRefusedWithTheTopologyTheyNeed) {
  Result<LoadedConfig> r = LoadAtTheFrontDoor("[network]\nk = 4\n[fullmesh]\nnodes = 4\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "fullmesh.nodes: needs network.topology = \"fullmesh\" at t.toml:4:1");
  EXPECT_EQ(r.status().key(), "fullmesh.nodes");
  r = LoadAtTheFrontDoor(std::string(kFullMesh) + "[router]\nvcs = 4\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "router.vcs: is not used by network.topology = \"fullmesh\" (a key of "
            "network.topology = mesh, torus, group, graph, tree, cmesh, flatfly, fattree, "
            "dragonfly) at t.toml:7:1");
  // A key no model has is still unknown, with a suggestion from the chosen model only.
  r = LoadAtTheFrontDoor(kFullMesh, {"fullmesh.node=4"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("fullmesh.node: unknown key (did you mean 'fullmesh.nodes'?)"));
}

TEST(FrontDoorTest, EveryProblemOfTheFileIsReportedTogether) {
  Result<LoadedConfig> r =
      LoadAtTheFrontDoor("[router]\nvcs = 0\nhop = 5\n[fullmesh]\nnodes = 4\n");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("fullmesh.nodes: needs"));
  EXPECT_THAT(r.status().message(), HasSubstr("router.hop: unknown key"));
  EXPECT_THAT(r.status().message(), HasSubstr("router.vcs: value 0 out of range"));
}

TEST(FrontDoorTest, ErrorsCarryTheirKey) {
  EXPECT_EQ(FindRoutingAlgorithm("nope").status().key(), "routing.algorithm");
  EXPECT_EQ(config::KeyError("router.vcs", "bad", config::Origin{"t.toml", 1, 2}).key(),
            "router.vcs");
  // The simulator's own check of a point: the key gives the place of routing.algorithm.
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(
      "[router]\nvcs = 2\n[routing]\nalgorithm = \"duato\"\n", "t.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("routing.algorithm = 'duato' on a torus needs "
                                              "router.vcs >= 3"));
  EXPECT_THAT(r.status().message(), HasSubstr("at t.toml:4:13"));
  // A full-mesh sweep names its own keys (no rewriting of another message).
  fullmesh::FullMeshConfig c;
  c.Normalize();
  fullmesh::Operation op;
  op.root = 9;
  op.bytes = 8;
  op.dest = 1;
  Status st = fullmesh::ValidateFullMesh(c, {op}, {"workload.operation", "at workload.bytes item"});
  EXPECT_EQ(st.key(), "workload.operation");
  EXPECT_THAT(st.message(), HasSubstr("workload.operation: at workload.bytes item 1: root node 9"));
  st = fullmesh::ValidateFullMesh(c, {op});
  EXPECT_EQ(st.key(), "workload.ops");
  EXPECT_THAT(st.message(), HasSubstr("workload.ops: operation 1: root node 9"));
}

TEST(FrontDoorTest, ToolsThatRunPointsRefuseAnotherModel) {
  Result<std::vector<SimConfig>> r = LoadSimConfigsFromString(kFullMesh, "t.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().key(), "network.topology");
  EXPECT_THAT(r.status().message(), HasSubstr("\"fullmesh\" is not a flit-level network"));
}

// A machine for the runtime's sim module: the program is the traffic, so the keys that make
// or measure traffic (and partitioned runs) are refused with their position; the machine's
// own keys and the watchdog stay; an experiment reads the same text unchanged.
TEST(FrontDoorTest, AMachineForTheSimModuleRefusesTheKeysOfTraffic) {
  const std::string torus = "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n";
  const std::string group =
      "[network]\ntopology = \"group\"\ngroups = 6\ngroup_size = 4\n"
      "[routing]\nalgorithm = \"dor-detour\"\n";
  struct Case {
    std::string text;
    std::vector<std::string> sets;
    const char* expect;
    bool experiment_ok = true;  // nic.enabled needs the group topology in an experiment
  };
  const std::vector<Case> refused = {
      {torus + "[traffic]\npattern = \"transpose\"\n",
       {},
       "traffic.pattern: is not read by a "
       "machine for the runtime's sim module "
       "(ukai launch --sim): the program is "
       "the traffic (docs/sim-module.md) at "
       "m.toml:6:1"},
      {torus, {"measure.warmup_cycles=100"}, "measure.warmup_cycles: is not read by a machine"},
      {torus, {"traffic.source_queue=4"}, "traffic.source_queue: is not read by a machine"},
      // The gateway NIC's keys only on the group topology (docs/sim-module.md).
      {torus + "[nic]\nenabled = true\n", {}, "nic.enabled: is not read by a machine", false},
      {torus + "[nic]\nframes = 10\n",
       {},
       "nic.frames: is not read by a machine for the runtime's sim module (ukai launch --sim): "
       "the gateway NIC runs under the sim module on network.topology = \"group\" "
       "(docs/sim-module.md) at m.toml:6:1",
       false},
      {group + "[nic]\nframes = 10\ninternal_traffic = false\n",
       {},
       "nic.internal_traffic: is not read by a machine for the runtime's sim module (ukai launch "
       "--sim): the program's frames are the compute nodes' traffic beside the gateway's "
       "(docs/sim-module.md) at m.toml:9:1"},
      {group, {"nic.header_bytes=8"}, "nic.header_bytes: is not read by a machine"},
      {group + "[nic]\nbus_mbytes_per_s = 100.0\n",
       {},
       "it is a key of the SSS-CORE NIC model, which the sim module does not use"},
      {torus + "[run]\npartition_min_nodes = 4\n",
       {},
       "run.partition_min_nodes: is not read by a machine for the runtime's sim module (ukai "
       "launch --sim): the machine steps on one thread of the launcher at m.toml:6:1"},
  };
  for (const Case& c : refused) {
    SCOPED_TRACE(c.expect);
    Result<std::vector<SimConfig>> r =
        LoadSimConfigsFromString(c.text, "m.toml", c.sets, ConfigUse::kMachine);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr(c.expect));
    EXPECT_EQ(LoadSimConfigsFromString(c.text, "m.toml", c.sets).ok(), c.experiment_ok)
        << "an experiment reads the same text";
  }
  Result<std::vector<SimConfig>> ok = LoadSimConfigsFromString(
      torus +
          "[routing]\nalgorithm = \"dor\"\n[measure]\nwatchdog_cycles = 5000\n[sim]\n"
          "cpu_scale = 0.0\n[run]\nmemory_limit = 0\n",
      "m.toml", {}, ConfigUse::kMachine);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ(ok->front().measure.watchdog_cycles, 5000);
  // The gateway NIC's keys on the group topology (the gateway runs beside the program).
  Result<std::vector<SimConfig>> gateway = LoadSimConfigsFromString(
      group +
          "[nic]\nenabled = [\"3G0\"]\nframes = 10\negress_rate = 0.001\n"
          "egress_pcap = \"/tmp/x.pcap\"\njobs = [{cycle = 100, enabled = [\"3G1\"]}]\n",
      "m.toml", {}, ConfigUse::kMachine);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  EXPECT_TRUE(gateway->front().nic.active());
  EXPECT_EQ(gateway->front().nic.frames, 10);
  EXPECT_EQ(gateway->front().nic.jobs.size(), 1u);
  EXPECT_EQ(ok->front().sim_module.cpu_scale, 0.0);
}

TEST(ConfigReadersTest, TomlIsTheLastReaderAndTakesAnyText) {
  ASSERT_FALSE(ConfigReaders().empty());
  EXPECT_EQ(ConfigReaders().back().name, "toml");
  EXPECT_EQ(FindConfigReader("[network]\nk = 4\n").name, "toml");
  for (const ConfigReader& r : ConfigReaders()) {
    EXPECT_FALSE(r.doc.empty()) << r.name;
    EXPECT_FALSE(r.default_format.empty()) << r.name;
  }
}

TEST(MachineModelTest, EveryTopologyHasOneModelWhoseSchemaAllowsExactlyItsTopologies) {
  std::vector<std::string_view> seen;
  for (const MachineModel& m : MachineModels()) {
    const config::Schema schema = m.schema();
    const config::KeySpec* topology = schema.Find("network.topology");
    ASSERT_NE(topology, nullptr) << m.name;
    std::vector<std::string> names;
    for (const TopologyChoice& t : m.topologies()) {
      EXPECT_THAT(seen, ::testing::Not(::testing::Contains(t.name))) << t.name;
      seen.push_back(t.name);
      names.emplace_back(t.name);
      Result<const MachineModel*> found = FindMachineModel(t.name);
      ASSERT_TRUE(found.ok());
      EXPECT_EQ(*found, &m);
    }
    EXPECT_EQ(topology->allowed, names) << m.name;
    EXPECT_NE(m.prepare, nullptr);
    EXPECT_FALSE(m.fields().empty());
  }
  EXPECT_TRUE(FindMachineModel(DefaultTopology()).ok());
  EXPECT_EQ(FindMachineModel("ring").status().code(), StatusCode::kNotFound);
}

// The reader's view of a config: flat keys build the tables (for a reader of BookSim-style
// `key = value;` lines), each with its place; the check reports refusals and unknown keys.
TEST(RawConfigTest, SetFindAndCheck) {
  config::RawConfig raw;
  raw.source = "x.cfg";
  config::Tree k;
  k.scalar = int64_t{4};
  k.origin = {"x.cfg", 3, 5};
  ASSERT_TRUE(config::SetRawValue("network.k", k, {"x.cfg", 3, 1}, &raw).ok());
  config::Tree vcs;
  vcs.scalar = int64_t{0};
  vcs.origin = {"x.cfg", 4, 7};
  ASSERT_TRUE(config::SetRawValue("router.vcs", vcs, {"x.cfg", 4, 1}, &raw).ok());
  ASSERT_NE(config::FindRawValue(raw, "network.k"), nullptr);
  EXPECT_EQ(config::FindRawValue(raw, "network.n"), nullptr);
  EXPECT_FALSE(config::SetRawValue("network.k.x", k, {"x.cfg", 5, 1}, &raw).ok());

  const MachineModel* flit = *FindMachineModel("torus");
  Result<config::ConfigValues> values =
      config::CheckRawConfig(raw, FrontDoorSchema(*flit, "torus"));
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().message(), "router.vcs: value 0 out of range [1, 32] at x.cfg:4:7");
  vcs.scalar = int64_t{2};
  ASSERT_TRUE(config::SetRawValue("router.vcs", vcs, {"x.cfg", 4, 1}, &raw).ok());
  values = config::CheckRawConfig(raw, FrontDoorSchema(*flit, "torus"));
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  EXPECT_EQ(values->Find("network.k")->origin.Where(), "at x.cfg:3:5");
  EXPECT_EQ(std::get<int64_t>(values->Find("router.vcs")->items[0]), 2);
}

}  // namespace
}  // namespace ukai::sim
