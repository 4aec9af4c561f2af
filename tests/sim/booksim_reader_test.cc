// The BookSim2 config reader (sim/experiment/booksim_reader.h): recognition, the mapping of
// BookSim2's keys onto ours (with BookSim2's defaults), refusals that name the key and why,
// and the key table against BookSim2's booksim_config.cpp.
#include "sim/experiment/booksim_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sim/experiment/config_readers.h"
#include "sim/experiment/front_door.h"

namespace ukai::sim {
namespace {

constexpr char kMesh[] =
    "// an 8x8 mesh\n"
    "topology = mesh;\n"
    "k = 4;  n = 2;\n"
    "routing_function = dim_order;\n"
    "num_vcs = 4;\n"
    "packet_size = 4;\n"
    "injection_rate = 0.05;\n"
    "traffic = transpose;\n";

SimConfig LoadOne(const std::string& text, const std::vector<std::string>& sets = {}) {
  Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", sets);
  EXPECT_TRUE(points.ok()) << points.status().ToString();
  return points.ok() ? points->front() : SimConfig();
}

TEST(BooksimReader, RecognisedByContent) {
  EXPECT_TRUE(LooksLikeBooksim(kMesh));
  EXPECT_TRUE(LooksLikeBooksim("k = 4; /* c */ n = 2;"));
  EXPECT_FALSE(LooksLikeBooksim("[network]\nk = 4\n"));
  EXPECT_FALSE(LooksLikeBooksim("seed = 1\n"));  // TOML: no ';'
  EXPECT_FALSE(LooksLikeBooksim(""));
  EXPECT_EQ(FindConfigReader(kMesh).name, "booksim");
  EXPECT_EQ(FindConfigReader("seed = 1\n").name, "toml");
}

TEST(BooksimReader, MapsKeysOntoOurs) {
  const SimConfig c = LoadOne(kMesh);
  EXPECT_EQ(c.network.topology, TopologyKind::kMesh);
  EXPECT_EQ(c.network.k, (std::vector<int>{4, 4}));
  EXPECT_EQ(c.routing.algorithm, "dor");
  EXPECT_EQ(c.router.vcs, 4);
  EXPECT_EQ(c.router.pe_vcs, 4);
  EXPECT_EQ(c.router.vc_buffer_flits, 8);  // BookSim2's default
  EXPECT_EQ(c.traffic.message_bytes, 16);  // 4 flits of 4 bytes
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.2);   // 0.05 packets x 4 flits
  EXPECT_EQ(c.traffic.pattern, "transpose");
  EXPECT_EQ(c.router.model, RouterModel::kBooksim);
  EXPECT_EQ(c.router.hop_cycles, 4);  // 1 + 1 + 1 + 0 + 1
  EXPECT_EQ(c.router.link_cycles, 1);
  EXPECT_EQ(c.measure.mode, MeasureMode::kBooksim);
  EXPECT_EQ(c.measure.warmup_periods, 3);
  EXPECT_EQ(c.measure.sample_cycles, 1000);
  EXPECT_EQ(c.measure.max_samples, 10);
  EXPECT_DOUBLE_EQ(c.measure.latency_threshold, 500);
  EXPECT_EQ(c.seed, 0u);
}

TEST(BooksimReader, DefaultsAreBooksims) {
  const SimConfig c = LoadOne("routing_function = dim_order;");
  EXPECT_EQ(c.network.topology, TopologyKind::kTorus);
  EXPECT_EQ(c.network.k, (std::vector<int>{8, 8}));
  EXPECT_EQ(c.router.vcs, 16);
  EXPECT_EQ(c.router.link_cycles, 2);  // use_noc_latency = 1 on a torus
  EXPECT_EQ(c.traffic.pattern, "uniform_self");
  EXPECT_EQ(c.traffic.message_bytes, 4);
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.1);
}

TEST(BooksimReader, OptionsAndOverrides) {
  Result<std::string> text = AppendBooksimOverrides(
      kMesh, {"injection_rate_uses_flits=1", "use_noc_latency = 0", "speculative=1",
              "traffic=hotspot({1,3},{2,2})", "sim_type=throughput", "seed=time"});
  ASSERT_TRUE(text.ok());
  const SimConfig c = LoadOne(*text);
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.05);
  EXPECT_EQ(c.router.hop_cycles, 3);  // routing + max(vc, sw) + st
  EXPECT_EQ(c.traffic.pattern, "hotspot");
  EXPECT_EQ(c.traffic.hotspot_nodes, (std::vector<int>{1, 3}));
  EXPECT_DOUBLE_EQ(c.traffic.hotspot_fraction, 1.0);
  EXPECT_EQ(c.measure.mode, MeasureMode::kBooksimThroughput);
  EXPECT_GT(c.seed, 1000000u);
  EXPECT_FALSE(AppendBooksimOverrides(kMesh, {"no_equals"}).ok());
}

// The error of loading `text`: its message (which must name `key`) and Status::key().
void ExpectRefused(const std::string& text, const std::string& key, const std::string& says) {
  Result<std::vector<SimConfig>> points = LoadSimConfigsFromString(text, "t.cfg", {});
  ASSERT_FALSE(points.ok()) << text;
  EXPECT_NE(points.status().message().find(key), std::string::npos) << points.status().message();
  EXPECT_NE(points.status().message().find(says), std::string::npos) << points.status().message();
  EXPECT_EQ(points.status().key(), key) << points.status().message();
}

TEST(BooksimReader, RefusalsNameTheKeyAndWhy) {
  const std::string base = kMesh;
  ExpectRefused(base + "input_speedup = 2;", "input_speedup", "one flit per input port");
  ExpectRefused(base + "sim_power = 1;", "sim_power", "power model");
  ExpectRefused(base + "injection_process = batch;", "injection_process", "bernoulli, on_off");
  ExpectRefused(base + "burst_alpha = 0.2;", "burst_alpha", "only by injection_process = on_off");
  ExpectRefused(base + "injection_process = on_off({0.1,0.2,-1,{0,1}});", "injection_process",
                "first state");
  ExpectRefused(base + "injection_process = on_off(x);", "injection_process", "not a number");
  ExpectRefused(base + "topology = fly;", "topology",
                "mesh, torus, kncube, cmesh, flatfly, fattree, dragonflynew");
  ExpectRefused(base + "routing_function = chaos;", "routing_function", "dim_order");
  ExpectRefused(base + "router = event;", "router", "iq");
  ExpectRefused(base + "traffic = badperm_yarc;", "traffic", "uniform");
  ExpectRefused(base + "packet_size = {1, 4};", "packet_size", "mixture");
  ExpectRefused(base + "injection_rate = 0.5;", "injection_rate", "(0, 1]");
  ExpectRefused(base + "vc_allocator = wavefront;", "vc_allocator", "separable");
  ExpectRefused(base + "warmup_periods = 0;", "warmup_periods", "warmup_thres");
  ExpectRefused(base + "no_such_key = 1;", "no_such_key", "not a key of BookSim2");
  ExpectRefused("topology = mesh;", "routing_function", "BookSim2 needs one");
  // The position is the key's line and column.
  Result<std::vector<SimConfig>> e =
      LoadSimConfigsFromString(base + "  alloc_iters = 2;\n", "x.cfg", {});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("x.cfg:9:3"), std::string::npos) << e.status().message();
  // BookSim2's default value of a refused feature is accepted.
  EXPECT_TRUE(LoadSimConfigsFromString(base + "input_speedup = 1; sim_power = 0;", "t", {}).ok());
}

// topology = anynet: our graph topology reads network_file (a relative name beside the
// config); min_anynet is source routing with one shortest route per pair; k and n, which
// anynet ignores, only at their defaults; network_file beside another topology is refused.
TEST(BooksimReader, AnynetIsOurGraph) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ukai_anynet_test";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "net.txt") << "router 0 node 0 node 1 router 1\nrouter 1 node 2\n"; }
  const std::string cfg =
      "topology = anynet; network_file = net.txt; routing_function = min;"
      " num_vcs = 2; injection_rate = 0.05;";
  Result<std::vector<SimConfig>> points =
      LoadSimConfigsFromString(cfg, (dir / "a.cfg").string(), {});
  ASSERT_TRUE(points.ok()) << points.status().ToString();
  const SimConfig& c = points->front();
  EXPECT_EQ(c.network.topology, TopologyKind::kGraph);
  EXPECT_EQ(c.network.file, (dir / "net.txt").string());
  EXPECT_EQ(c.routing.algorithm, "source");
  EXPECT_EQ(c.routing.source_routes, SourceRouteMode::kShortest);
  EXPECT_EQ(c.routing.source_paths, 1);
  ExpectRefused(cfg + " k = 4;", "k", "not used by anynet");
  ExpectRefused(std::string(kMesh) + "network_file = net.txt;", "network_file", "anynet only");
  ExpectRefused("topology = anynet; routing_function = min;", "network_file", "needs");
  std::filesystem::remove_all(dir);
}

// packet_size {{1, 8}} with packet_size_rate {{3, 1}}: one class mixing 1- and 8-flit
// packets 3:1 (traffic.size_mix_*), the rate in flits from the mean size; a list per class
// ({1, 8}: two classes) is refused.
TEST(BooksimReader, PacketSizeMix) {
  const std::string base =
      "topology = mesh; k = 4; n = 2; routing_function = dim_order; num_vcs = 4; "
      "injection_rate = 0.04;";
  SimConfig c = LoadOne(base + "packet_size = {{1, 8}}; packet_size_rate = {{3, 1}};");
  EXPECT_EQ(c.traffic.size_mix_flits, (std::vector<int>{1, 8}));
  EXPECT_EQ(c.traffic.size_mix_weights, (std::vector<double>{3, 1}));
  EXPECT_EQ(c.traffic.message_bytes, 32);            // the largest, 8 flits of 4 bytes
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.04 * 2.75);     // packets x the mean size
  c = LoadOne(base + "packet_size = {{2, 4, 6}};");  // packet_size_rate 1: equal weights
  EXPECT_EQ(c.traffic.size_mix_weights, (std::vector<double>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.04 * 4);
  EXPECT_TRUE(LoadOne(base + "packet_size = 4;").traffic.size_mix_flits.empty());
  ExpectRefused(base + "packet_size = {1, 8};", "packet_size", "list per traffic class");
  ExpectRefused(base + "packet_size = {{1, 8}}; packet_size_rate = {{1, 2, 3}};",
                "packet_size_rate", "3 rates for 2 packet sizes");
}

// injection_process = on_off with BookSim2's burst keys, or with its parameters in the name
// (they replace the keys, as in BookSim2's injection.cpp).
TEST(BooksimReader, OnOffInjection) {
  const std::string base = kMesh;
  SimConfig c = LoadOne(base + "injection_process = on_off; burst_alpha = 0.2; burst_beta = 0.4;");
  EXPECT_EQ(c.traffic.injection, InjectionKind::kOnOff);
  EXPECT_DOUBLE_EQ(c.traffic.burst_alpha, 0.2);
  EXPECT_DOUBLE_EQ(c.traffic.burst_beta, 0.4);
  EXPECT_DOUBLE_EQ(c.traffic.burst_r1, -1.0);  // derived: BookSim2's default
  EXPECT_DOUBLE_EQ(c.traffic.rate, 0.2);       // 0.05 packets of 4 flits
  c = LoadOne(base + "injection_process = on_off({0.3,0.6}); burst_alpha = 0.2;");
  EXPECT_DOUBLE_EQ(c.traffic.burst_alpha, 0.3);
  EXPECT_DOUBLE_EQ(c.traffic.burst_beta, 0.6);
  c = LoadOne(base + "injection_process = on_off(0.1);");
  EXPECT_DOUBLE_EQ(c.traffic.burst_alpha, 0.1);
  EXPECT_DOUBLE_EQ(c.traffic.burst_beta, 0.5);
  EXPECT_EQ(LoadOne(kMesh).traffic.injection, InjectionKind::kBernoulli);
}

// Numbers no int64_t holds, infinities and NaN where a whole number is read: refused before
// any conversion (num_vcs = 4e88 was undefined behaviour, found by booksim_config_fuzz; the
// ASan+UBSan tree stops on it).
TEST(BooksimReader, HugeNumbersAreRefusedNotConverted) {
  struct Case {
    const char* line;
    const char* key;
    const char* says;
  };
  const Case cases[] = {{"num_vcs = 4e88;", "num_vcs", "is not an integer"},
                        {"num_vcs = inf;", "num_vcs", "is not an integer"},
                        {"num_vcs = nan;", "num_vcs", "is not an integer"},
                        {"packet_size = 1e300;", "packet_size", "packet size in flits"},
                        {"packet_size = -1e30;", "packet_size", "packet size in flits"},
                        {"traffic = hotspot({1e300},{1});", "traffic", "not a node number"}};
  for (const Case& c : cases) ExpectRefused(std::string(kMesh) + c.line, c.key, c.says);
}

// The indirect topologies: BookSim2's keys and routing function names per topology.
TEST(BooksimReader, MapsTheIndirectTopologies) {
  const std::string tail = "num_vcs = 4; injection_rate = 0.05;\n";
  const std::string grid = "k = 4; n = 2; c = 4; x = 4; y = 4; xr = 2; yr = 2;\n";
  SimConfig c = LoadOne("topology = cmesh;" + grid + "routing_function = dor_no_express;" + tail);
  EXPECT_EQ(c.network.topology, TopologyKind::kCMesh);
  EXPECT_EQ(c.network.k, (std::vector<int>{4, 4}));
  EXPECT_EQ(c.network.concentration, 4);
  EXPECT_EQ(c.routing.algorithm, "dor");
  EXPECT_EQ(c.router.link_cycles, 2);  // use_noc_latency = 1: c / n
  c = LoadOne("topology = flatfly; use_noc_latency = 0;" + grid + "routing_function = ugal;" +
              tail);
  EXPECT_EQ(c.network.topology, TopologyKind::kFlatFly);
  EXPECT_EQ(c.routing.algorithm, "ugal");
  EXPECT_EQ(c.router.link_cycles, 1);
  EXPECT_EQ(LoadOne("topology = flatfly; use_noc_latency = 0;" + grid +
                    "routing_function = ran_min_flatfly;" + tail)
                .routing.algorithm,
            "min");
  c = LoadOne("topology = fattree; k = 4; n = 3; routing_function = anca;" + tail);
  EXPECT_EQ(c.network.topology, TopologyKind::kFatTree);
  EXPECT_EQ(c.network.k, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(c.network.n, 3);
  EXPECT_EQ(c.routing.algorithm, "anca");
  c = LoadOne("topology = dragonflynew; k = 2; n = 1; routing_function = ugal;" + tail);
  EXPECT_EQ(c.network.topology, TopologyKind::kDragonfly);
  EXPECT_EQ(c.network.dragonfly_p, 2);
  EXPECT_EQ(c.routing.algorithm, "ugal");
  EXPECT_EQ(c.routing.dragonfly_vcs, DragonflyVcs::kBooksim);  // VC = BookSim2's phase
  EXPECT_EQ(c.network.dragonfly_local_cycles, 10);             // BookSim2's DRAGON_LATENCY
  EXPECT_EQ(c.network.dragonfly_global_cycles, 100);
  EXPECT_EQ(c.router.link_cycles, 1);
  EXPECT_EQ(LoadOne("topology = dragonflynew; k = 2; n = 1; routing_function = min;" + tail)
                .routing.dragonfly_vcs,
            DragonflyVcs::kBooksim);
  EXPECT_EQ(SimConfig().routing.dragonfly_vcs, DragonflyVcs::kSplit);  // our own default
  // dim_order on a torus takes BookSim2's dateline classes; on a mesh there are none.
  EXPECT_EQ(LoadOne("topology = torus; k = 4; n = 2; routing_function = dim_order;" + tail)
                .routing.dor_dateline,
            DorDateline::kBooksim);
  EXPECT_EQ(LoadOne("topology = mesh; k = 4; n = 2; routing_function = dim_order;" + tail)
                .routing.dor_dateline,
            DorDateline::kShared);
  EXPECT_EQ(SimConfig().routing.dor_dateline, DorDateline::kShared);  // our own default
  // valiant, romm and min_adapt on meshes and tori are ours of the same names.
  const std::string mesh = "topology = mesh; k = 4; n = 2;" + tail;
  EXPECT_EQ(LoadOne(mesh + "routing_function = valiant;").routing.algorithm, "valiant");
  EXPECT_TRUE(LoadOne(mesh + "routing_function = valiant;").routing.valiant_via_destination);
  EXPECT_FALSE(LoadOne(mesh + "routing_function = romm;").routing.valiant_via_destination);
  EXPECT_EQ(LoadOne(mesh + "routing_function = romm_mesh;").routing.algorithm, "romm");
  EXPECT_EQ(LoadOne(mesh + "routing_function = min_adapt;").routing.algorithm, "min_adapt");
  // ... with BookSim2's candidates (its OutputSet keeps one range per priority).
  EXPECT_EQ(LoadOne(mesh + "routing_function = min_adapt;").routing.min_adapt_candidates,
            MinAdaptCandidates::kBooksim);
  EXPECT_EQ(LoadOne(mesh + "routing_function = planar_adapt_mesh;").routing.algorithm,
            "planar_adapt");
  EXPECT_EQ(LoadOne("topology = torus; k = 4; n = 2; routing_function = valiant;" + tail)
                .routing.algorithm,
            "valiant");
}

TEST(BooksimReader, RefusesWhatTheIndirectTopologiesDoNotModel) {
  const std::string tail = "num_vcs = 4; injection_rate = 0.05;\n";
  const std::string grid = "k = 4; n = 2; c = 4; x = 4; y = 4; xr = 2; yr = 2;\n";
  const std::string cmesh = "topology = cmesh;" + grid + "routing_function = dor_no_express;";
  ExpectRefused(cmesh + tail + "routing_function = dor;", "routing_function", "dor_no_express");
  ExpectRefused(cmesh + tail + "xr = 1; yr = 1;", "xr", "c = xr * yr");
  ExpectRefused(cmesh + tail + "x = 2;", "x", "x = y");
  ExpectRefused(cmesh + tail + "yr = 1;", "xr", "xr = yr");
  ExpectRefused(cmesh + tail + "traffic = bitcomp;", "traffic", "router by router");
  ExpectRefused(cmesh + tail + "n = 3;", "n", "two-dimensional");
  ExpectRefused("topology = flatfly;" + grid + "routing_function = ran_min;" + tail,
                "use_noc_latency", "use_noc_latency = 0");
  ExpectRefused("topology = dragonflynew; k = 2; n = 2; routing_function = min;" + tail, "n",
                "n = 1");
  ExpectRefused("topology = fattree; k = 4; n = 3; routing_function = min;" + tail,
                "routing_function", "nca, anca");
  ExpectRefused("topology = mesh; k = 4; n = 2; c = 2; routing_function = dor;" + tail, "c",
                "cmesh and flatfly");
  ExpectRefused("topology = mesh; k = 4; n = 2; xr = 2; routing_function = dor;" + tail, "xr",
                "cmesh and flatfly");
}

TEST(BooksimReader, SyntaxErrorsSayWhere) {
  for (const char* bad : {"k = 4", "k 4;", "= 4;", "k = ;", "k = {4;", "/* open"}) {
    Result<config::RawConfig> r = ReadBooksimConfig(bad, "s.cfg");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("s.cfg:1:"), std::string::npos) << r.status().message();
  }
}

// Every key of BookSim2's booksim_config.cpp is a row (names copied from its source, 158
// after removing duplicates), and every row says what it becomes or why it is refused.
TEST(BooksimReader, KeyTableCoversBooksimConfig) {
  std::set<std::string_view> names;
  for (const BooksimKey& k : BooksimKeys()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_FALSE(k.ours.empty()) << k.name;
    EXPECT_EQ(k.action == BooksimAction::kMapped, k.map != nullptr) << k.name;
  }
  EXPECT_EQ(names.size(), 158u);
  for (const char* k : {"topology",
                        "k",
                        "n",
                        "c",
                        "routing_function",
                        "num_vcs",
                        "vc_buf_size",
                        "packet_size",
                        "packet_size_rate",
                        "injection_rate",
                        "injection_rate_uses_flits",
                        "injection_process",
                        "burst_alpha",
                        "burst_beta",
                        "traffic",
                        "sim_type",
                        "warmup_periods",
                        "sample_period",
                        "max_samples",
                        "latency_thres",
                        "stopping_thres",
                        "seed",
                        "router",
                        "routing_delay",
                        "vc_alloc_delay",
                        "sw_alloc_delay",
                        "st_prepare_delay",
                        "st_final_delay",
                        "credit_delay",
                        "input_speedup",
                        "output_speedup",
                        "internal_speedup",
                        "wait_for_tail_credit",
                        "speculative",
                        "vc_allocator",
                        "sw_allocator",
                        "alloc_iters",
                        "use_noc_latency",
                        "network_file"}) {
    EXPECT_TRUE(names.count(k)) << k;
  }
  EXPECT_NE(DescribeBooksimKeysMarkdown().find("| `use_noc_latency` |"), std::string::npos);
}

}  // namespace
}  // namespace ukai::sim
