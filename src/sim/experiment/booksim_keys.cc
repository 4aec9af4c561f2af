#include "sim/experiment/booksim_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "sim/routing/registry.h"
#include "sim/traffic/pattern.h"

namespace ukai::sim {
namespace {

using config::Scalar;
constexpr int kFlitBytes = 4;  // the flit size the reader gives router.flit_bytes

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::optional<double> ParseNumber(std::string_view s) {
  const std::string t = Trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return v;
}

// A whole number no larger than 1e15 in magnitude, or nothing: NaN, infinities, fractions
// and numbers no int64_t holds are refused before any conversion (converting them is
// undefined behaviour; num_vcs = 4e88 was one, found by booksim_config_fuzz).
std::optional<int64_t> WholeNumber(std::optional<double> v) {
  if (!v || !(std::abs(*v) <= 1e15) || *v != std::trunc(*v)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// ---- mapped keys ----

constexpr std::string_view kPatterns[] = {"uniform",  "transpose",  "bitcomp",  "bitrev",
                                          "shuffle",  "tornado",    "neighbor", "randperm",
                                          "diagonal", "asymmetric", "taper64"};

bool HavePattern(std::string_view name) {
  for (const PatternEntry& p : TrafficPatterns()) {
    if (p.name == name) return true;
  }
  return false;
}

Status MapInt(BooksimContext& c, std::string_view key, std::string_view ours) {
  Result<int64_t> v = c.Int(key);
  if (!v.ok()) return v.status();
  return c.Set(ours, *v, key);
}

Status MapVcs(BooksimContext& c) {
  UKAI_RETURN_IF_ERROR(MapInt(c, "num_vcs", "router.vcs"));
  return MapInt(c, "num_vcs", "router.pe_vcs");
}

// BookSim2's packet sizes of its one traffic class, with their rates (weights): packet_size
// is a size, or a list per class whose element is a size or a list of sizes ({{1, 4}}: one
// class mixing 1- and 4-flit packets); packet_size_rate likewise (a plain rate: every size
// alike; a shorter list repeats its last rate, as BookSim2's trafficmanager.cpp does).
struct PacketSizes {
  std::vector<int64_t> flits;
  std::vector<int64_t> rates;
  double mean() const {
    double sum = 0, weighted = 0;
    for (size_t i = 0; i < flits.size(); ++i) {
      sum += static_cast<double>(rates[i]);
      weighted += static_cast<double>(rates[i] * flits[i]);
    }
    return weighted / sum;
  }
};

// The class-0 element of a per-class list value, as numbers ("{{1,4}}" -> 1, 4; "3" -> 3).
Result<std::vector<int64_t>> ClassNumbers(BooksimContext& c, std::string_view key) {
  const std::vector<std::string> classes = SplitBooksimList(c.Value(key));
  if (classes.size() != 1) {
    return c.Error(key,
                   fmt::format("\"{}\" is a list per traffic class and ukai models one "
                               "class (BookSim2 would take \"{}\" for it and ignore the "
                               "rest); a mixture of sizes for one class is written {{{{1, 4}}}}",
                               c.Value(key), classes.empty() ? "" : classes[0]));
  }
  std::vector<int64_t> out;
  for (const std::string& item : SplitBooksimList(classes[0])) {
    const std::optional<int64_t> v = WholeNumber(ParseNumber(item));
    if (!v || *v < 1 || *v > (1 << 20)) {
      return c.Error(key, fmt::format("\"{}\" is not a {} (a whole number >= 1)", item,
                                      key == "packet_size" ? "packet size in flits" : "rate"));
    }
    out.push_back(*v);
  }
  if (out.empty()) return c.Error(key, "is empty");
  return out;
}

Result<PacketSizes> ReadPacketSizes(BooksimContext& c) {
  PacketSizes s;
  Result<std::vector<int64_t>> flits = ClassNumbers(c, "packet_size");
  if (!flits.ok()) return flits.status();
  Result<std::vector<int64_t>> rates = ClassNumbers(c, "packet_size_rate");
  if (!rates.ok()) return rates.status();
  if (rates->size() > flits->size()) {
    return c.Error("packet_size_rate",
                   fmt::format("{} rates for {} packet sizes", rates->size(), flits->size()));
  }
  s.flits = *flits;
  s.rates = *rates;
  s.rates.resize(s.flits.size(), s.rates.back());
  return s;
}

Status MapPacketSize(BooksimContext& c) {
  Result<PacketSizes> sizes = ReadPacketSizes(c);
  if (!sizes.ok()) return sizes.status();
  UKAI_RETURN_IF_ERROR(c.Set("router.flit_bytes", int64_t{kFlitBytes}, "packet_size"));
  if (sizes->flits.size() == 1) {
    return c.Set("traffic.message_bytes", sizes->flits[0] * kFlitBytes, "packet_size");
  }
  std::vector<Scalar> flits, weights;
  for (size_t i = 0; i < sizes->flits.size(); ++i) {
    flits.emplace_back(sizes->flits[i]);
    weights.emplace_back(static_cast<double>(sizes->rates[i]));
  }
  const int64_t largest = *std::max_element(sizes->flits.begin(), sizes->flits.end());
  UKAI_RETURN_IF_ERROR(c.Set("traffic.message_bytes", largest * kFlitBytes, "packet_size"));
  UKAI_RETURN_IF_ERROR(c.SetList("traffic.size_mix_flits", flits, "packet_size"));
  return c.SetList("traffic.size_mix_weights", weights, "packet_size_rate");
}

// injection_rate in packets (injection_rate_uses_flits = 0) or flits per node and cycle.
Status MapInjectionRate(BooksimContext& c) {
  const std::vector<std::string> rates = SplitBooksimList(c.Value("injection_rate"));
  if (rates.size() != 1) {
    return c.Error("injection_rate", "one rate per traffic class; ukai models one class");
  }
  const std::optional<double> rate = ParseNumber(rates[0]);
  if (!rate) return c.Error("injection_rate", "is not a number");
  Result<int64_t> uses_flits = c.Int("injection_rate_uses_flits");
  if (!uses_flits.ok()) return uses_flits.status();
  if (*uses_flits != 0 && *uses_flits != 1) {
    return c.Error("injection_rate_uses_flits", "must be 0 (packets) or 1 (flits)");
  }
  Result<PacketSizes> sizes = ReadPacketSizes(c);
  if (!sizes.ok()) return Status::Ok();  // the packet_size row reports it
  const double per_flit = *uses_flits ? *rate : *rate * sizes->mean();
  if (!(per_flit > 0) || per_flit > 1) {
    return c.Error("injection_rate",
                   fmt::format("{} {} per node and cycle is {} flits; ukai needs a load in (0, "
                               "1] flits/node/cycle",
                               *rate, *uses_flits ? "flits" : "packets", per_flit));
  }
  return c.Set("traffic.rate", per_flit, "injection_rate");
}

// on_off's parameters: burst_alpha, burst_beta, burst_r1, replaced by those written in the
// name (BookSim2's injection.cpp: on_off(alpha) or on_off({alpha,beta[,r1]})).
Status MapOnOff(BooksimContext& c, const std::string& v) {
  constexpr std::string_view kKeys[] = {"burst_alpha", "burst_beta", "burst_r1"};
  double values[3];
  for (int i = 0; i < 3; ++i) {
    const std::optional<double> x = ParseNumber(c.Value(kKeys[i]));
    if (!x) return c.Error(kKeys[i], "is not a number");
    values[i] = *x;
  }
  if (const size_t open = v.find('('); open != std::string::npos) {
    const size_t close = v.find_last_of(')');
    const std::string params =
        Trim(v.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1));
    const std::vector<std::string> p =
        params.starts_with('{') ? SplitBooksimList(params) : std::vector<std::string>{params};
    if (p.size() > 3) {
      return c.Error("injection_process",
                     "on_off's fourth parameter (each node's first state) is not modelled: ukai "
                     "draws every node's first state with equal odds, as BookSim2 does without it");
    }
    for (size_t i = 0; i < p.size(); ++i) {
      const std::optional<double> x = ParseNumber(p[i]);
      if (!x) {
        return c.Error("injection_process",
                       fmt::format("on_off parameter {} (\"{}\") is not a number", i + 1, p[i]));
      }
      values[i] = *x;
    }
  }
  constexpr std::string_view kOurs[] = {"traffic.burst_alpha", "traffic.burst_beta",
                                        "traffic.burst_r1"};
  for (int i = 0; i < 3; ++i) {
    const std::string_view from = c.Written(kKeys[i]) ? kKeys[i] : "injection_process";
    UKAI_RETURN_IF_ERROR(c.Set(kOurs[i], values[i], from));
  }
  return c.Set("traffic.injection", std::string("on_off"), "injection_process");
}

// A burst key written beside an injection process that does not read it (BookSim2 ignores
// it there) is refused rather than ignored.
Status CheckBurstKey(BooksimContext& c, std::string_view key) {
  const std::string process = Trim(c.Value("injection_process"));
  if (!c.Written(key) || process.substr(0, process.find('(')) == "on_off") return Status::Ok();
  return c.Error(key, fmt::format("is used only by injection_process = on_off (here \"{}\", "
                                  "which BookSim2 runs without it): remove it",
                                  process));
}

Status MapInjectionProcess(BooksimContext& c) {
  const std::vector<std::string> items = SplitBooksimList(c.Value("injection_process"));
  if (items.size() != 1) {
    return c.Error("injection_process", "one value per traffic class; ukai models one");
  }
  const std::string v = Trim(items[0]);
  if (v == "bernoulli")
    return c.Set("traffic.injection", std::string("bernoulli"), "injection_process");
  if (v.substr(0, v.find('(')) == "on_off") return MapOnOff(c, v);
  return c.Error("injection_process",
                 fmt::format("\"{}\" is not modelled (the reader maps: bernoulli, on_off)", v));
}

// hotspot({nodes},{rates}): every packet goes to a hot node; equal rates only.
Status MapHotspot(BooksimContext& c, std::string_view args) {
  if (args.size() < 2 || args.front() != '(' || args.back() != ')') {
    return c.Error("traffic", "hotspot needs its arguments: hotspot({nodes},{rates})");
  }
  args = args.substr(1, args.size() - 2);
  const size_t close = args.find('}');
  std::string nodes_text(args.substr(0, close == std::string_view::npos ? args.size() : close + 1));
  std::vector<Scalar> nodes;
  for (const std::string& n : SplitBooksimList(nodes_text)) {
    const std::optional<int64_t> v = WholeNumber(ParseNumber(n));
    if (!v || *v < 0) {
      return c.Error("traffic", fmt::format("hotspot node \"{}\" is not a node number (random "
                                            "hot spots, -1, are not modelled)",
                                            n));
    }
    nodes.emplace_back(*v);
  }
  if (close != std::string_view::npos && close + 1 < args.size()) {
    std::string_view rates = args.substr(close + 1);
    while (!rates.empty() && (rates.front() == ',' || rates.front() == ' ')) rates.remove_prefix(1);
    const std::vector<std::string> r = SplitBooksimList(rates);
    for (const std::string& x : r) {
      if (x != r[0]) {
        return c.Error("traffic",
                       "hotspot with unequal rates is not modelled (ukai picks the "
                       "hot nodes uniformly)");
      }
    }
  }
  UKAI_RETURN_IF_ERROR(c.Set("traffic.pattern", std::string("hotspot"), "traffic"));
  UKAI_RETURN_IF_ERROR(c.SetList("traffic.hotspot_nodes", nodes, "traffic"));
  return c.Set("traffic.hotspot_fraction", 1.0, "traffic");
}

Status MapTraffic(BooksimContext& c) {
  UKAI_RETURN_IF_ERROR(CheckBooksimTrafficOnTopology(c));
  const std::string v = c.Value("traffic");
  if (v.starts_with("hotspot")) return MapHotspot(c, Trim(std::string_view(v).substr(7)));
  // BookSim2's uniform picks any node, the source included.
  if (v == "uniform") return c.Set("traffic.pattern", std::string("uniform_self"), "traffic");
  for (std::string_view p : kPatterns) {
    if (p == v && HavePattern(p)) return c.Set("traffic.pattern", v, "traffic");
  }
  std::vector<std::string_view> have;
  for (std::string_view p : kPatterns) {
    if (HavePattern(p)) have.push_back(p);
  }
  return c.Error("traffic",
                 fmt::format("\"{}\" is not a pattern the reader maps (it maps: {}, hotspot(...))",
                             v, fmt::join(have, ", ")));
}

Status MapSimType(BooksimContext& c) {
  const std::string v = c.Value("sim_type");
  if (v == "latency") return c.Set("measure.mode", std::string("booksim"), "sim_type");
  if (v == "throughput") {
    return c.Set("measure.mode", std::string("booksim_throughput"), "sim_type");
  }
  return c.Error("sim_type", fmt::format("\"{}\" is not modelled (latency, throughput)", v));
}

Status MapWarmup(BooksimContext& c) {
  Result<int64_t> v = c.Int("warmup_periods");
  if (!v.ok()) return v.status();
  if (*v < 1) {
    return c.Error("warmup_periods",
                   "0 (warm up until warmup_thres is met) is not modelled; "
                   "give a number of sample periods >= 1");
  }
  return c.Set("measure.warmup_periods", *v, "warmup_periods");
}

Status MapNumber(BooksimContext& c, std::string_view key, std::string_view ours) {
  const std::vector<std::string> items = SplitBooksimList(c.Value(key));
  if (items.size() != 1) return c.Error(key, "one value per traffic class; ukai models one");
  const std::optional<double> v = ParseNumber(items[0]);
  if (!v) return c.Error(key, "is not a number");
  return c.Set(ours, *v, key);
}

Status MapSeed(BooksimContext& c) {
  if (c.Value("seed") == "time") {
    return c.Set("seed", static_cast<int64_t>(std::time(nullptr)), "seed");
  }
  return MapInt(c, "seed", "seed");
}

Status MapRouter(BooksimContext& c) {
  const std::string v = c.Value("router");
  if (v != "iq") {
    return c.Error("router", fmt::format("\"{}\" is not modelled (the reader maps: iq)", v));
  }
  return c.Set("router.model", std::string("booksim"), "router");
}

Status MapSpeculative(BooksimContext& c) {
  Result<int64_t> v = c.Int("speculative");
  if (!v.ok()) return v.status();
  if (*v != 0 && *v != 1) {
    return c.Error("speculative",
                   "only 0 and 1 are modelled (speculative switch allocation "
                   "beside VC allocation)");
  }
  return c.Set("router.speculative", *v == 1, "speculative");
}

// vc_allocator: router.vc_allocator (BookSim2's islip and separable_input_first differ: islip
// ignores the routing function's priorities, e.g. min_adapt's low-priority escape VC).
// sw_allocator: ukai's switch allocator is separable input-first round-robin, as both are
// for the switch with one flit per input VC request.
Status MapAllocator(BooksimContext& c, std::string_view key) {
  const std::string v = c.Value(key);
  if (v != "islip" && v != "separable_input_first") {
    return c.Error(key, fmt::format("\"{}\" is not modelled; the reader maps: islip, "
                                    "separable_input_first",
                                    v));
  }
  if (key != "vc_allocator") return Status::Ok();
  return c.Set("router.vc_allocator", v, key);
}

using B = BooksimAction;
#define UKAI_MAP(fn) [](BooksimContext& c) -> Status { return fn; }
constexpr std::string_view kOutputFile =
    "a BookSim2 trace or statistics file; ukai's output is --format booksim|json|csv";
constexpr std::string_view kPower = "BookSim2's power model is not part of ukai";
constexpr std::string_view kReadWrite = "request-reply traffic (use_read_write) is not modelled";
constexpr std::string_view kBatch = "batch mode (sim_type = batch) is not modelled";
constexpr std::string_view kLayout =
    "cmesh, flatfly: BookSim2's terminal layout, checked as BookSim2 asserts it (x = y, xr = "
    "yr, c = xr x yr); ukai numbers terminals router by router. Other topologies: default only";
constexpr std::string_view kBuffers =
    "ukai's router has private VC buffers of vc_buf_size flits (BookSim2's default)";
constexpr std::string_view kVcAlloc =
    "ukai's VC allocator is BookSim2's default here (separable, no special policy)";
constexpr std::string_view kClasses = "ukai models one traffic class";

constexpr BooksimKey kKeys[] = {
    {"channel_file", "", B::kDefaultOnly, "BookSim2 reads no channel file in its topologies"},
    {"subnets", "1", B::kDefaultOnly, "ukai models one subnet"},
    {"topology", "torus", B::kMapped,
     "network.topology: mesh, torus (kncube = torus), cmesh, flatfly, fattree; dragonflynew = "
     "dragonfly; anynet = graph (network_file)",
     UKAI_MAP(MapBooksimTopology(c))},
    {"k", "8", B::kMapped, "network.k; on dragonflynew network.dragonfly_p",
     UKAI_MAP(MapBooksimK(c))},
    {"n", "2", B::kMapped, "network.n (cmesh: 2; dragonflynew: 1, not set)",
     UKAI_MAP(MapBooksimN(c))},
    {"c", "1", B::kMapped, "network.concentration on cmesh and flatfly; elsewhere default only",
     UKAI_MAP(MapBooksimConcentration(c))},
    {"routing_function", "none", B::kMapped,
     "routing.algorithm: mesh, torus: dim_order, dor -> dor (on a torus with "
     "routing.dor_dateline = booksim); min_adapt (with "
     "routing.min_adapt_candidates = booksim, routing.duato_atomic = none), valiant (with "
     "routing.valiant_via_destination = true), romm; "
     "planar_adapt when ukai has it. cmesh: dor_no_express -> dor. flatfly: ran_min -> min, "
     "valiant, ugal. fattree: nca, anca. dragonflynew: min, ugal (with "
     "routing.dragonfly_vcs = booksim)",
     UKAI_MAP(MapBooksimRouting(c))},
    {"use_noc_latency", "1", B::kMapped,
     "router.link_cycles: with 1, 2 on a torus, c / n on a cmesh (refused on a flatfly), else "
     "1; dragonflynew: network.dragonfly_local_cycles = 10, _global_cycles = 100 always",
     UKAI_MAP(MapBooksimNocLatency(c))},
    {"x", "8", B::kMapped, kLayout, UKAI_MAP(CheckBooksimLayout(c, "x"))},
    {"y", "8", B::kMapped, kLayout, UKAI_MAP(CheckBooksimLayout(c, "y"))},
    {"xr", "1", B::kMapped, kLayout, UKAI_MAP(CheckBooksimLayout(c, "xr"))},
    {"yr", "1", B::kMapped, kLayout, UKAI_MAP(CheckBooksimLayout(c, "yr"))},
    {"link_failures", "0", B::kDefaultOnly,
     "BookSim2's legacy link failures; ukai's faults.* keys (TOML) model faults"},
    {"fail_seed", "0", B::kDefaultOnly, "BookSim2's legacy link failures"},
    {"in_ports", "5", B::kDefaultOnly, "the single-router topology is not modelled"},
    {"out_ports", "5", B::kDefaultOnly, "the single-router topology is not modelled"},
    {"router", "iq", B::kMapped, "router.model = \"booksim\" (iq only)", UKAI_MAP(MapRouter(c))},
    {"output_delay", "0", B::kDefaultOnly, "the output-queued router is not modelled"},
    {"credit_delay", "0", B::kMapped, "router.credit_delay",
     UKAI_MAP(MapInt(c, "credit_delay", "router.credit_delay"))},
    {"internal_speedup", "1.0", B::kDefaultOnly, "one flit per port per cycle (no speedup)"},
    {"output_buffer_size", "-1", B::kDefaultOnly, "the output-queued router is not modelled"},
    {"noq", "0", B::kDefaultOnly, "next-hop output queueing is not modelled"},
    {"speculative", "0", B::kMapped, "router.speculative", UKAI_MAP(MapSpeculative(c))},
    {"spec_check_elig", "1", B::kDefaultOnly, "speculation details are BookSim2's defaults"},
    {"spec_check_cred", "1", B::kDefaultOnly, "speculation details are BookSim2's defaults"},
    {"spec_mask_by_reqs", "0", B::kDefaultOnly, "speculation details are BookSim2's defaults"},
    {"spec_sw_allocator", "prio", B::kDefaultOnly, "speculation details are BookSim2's defaults"},
    {"num_vcs", "16", B::kMapped, "router.vcs and router.pe_vcs", UKAI_MAP(MapVcs(c))},
    {"vc_buf_size", "8", B::kMapped, "router.vc_buffer_flits",
     UKAI_MAP(MapInt(c, "vc_buf_size", "router.vc_buffer_flits"))},
    {"buf_size", "-1", B::kDefaultOnly, kBuffers},
    {"buffer_policy", "private", B::kDefaultOnly, kBuffers},
    {"private_bufs", "-1", B::kDefaultOnly, kBuffers},
    {"private_buf_size", "1", B::kDefaultOnly, kBuffers},
    {"private_buf_start_vc", "-1", B::kDefaultOnly, kBuffers},
    {"private_buf_end_vc", "-1", B::kDefaultOnly, kBuffers},
    {"max_held_slots", "-1", B::kDefaultOnly, kBuffers},
    {"feedback_aging_scale", "1", B::kDefaultOnly, kBuffers},
    {"feedback_offset", "0", B::kDefaultOnly, kBuffers},
    {"wait_for_tail_credit", "0", B::kDefaultOnly,
     "an output VC is reallocated once the tail has left (BookSim2's default)"},
    {"vc_busy_when_full", "0", B::kDefaultOnly, kVcAlloc},
    {"vc_prioritize_empty", "0", B::kDefaultOnly, kVcAlloc},
    {"vc_priority_donation", "0", B::kDefaultOnly, kVcAlloc},
    {"vc_shuffle_requests", "0", B::kDefaultOnly, kVcAlloc},
    {"hold_switch_for_packet", "0", B::kDefaultOnly,
     "the switch is allocated per flit (BookSim2's default)"},
    {"input_speedup", "1", B::kDefaultOnly, "one flit per input port per cycle (no speedup)"},
    {"output_speedup", "1", B::kDefaultOnly, "one flit per output port per cycle (no speedup)"},
    {"routing_delay", "1", B::kMapped, "router.routing_delay",
     UKAI_MAP(MapInt(c, "routing_delay", "router.routing_delay"))},
    {"vc_alloc_delay", "1", B::kMapped, "router.vc_alloc_delay",
     UKAI_MAP(MapInt(c, "vc_alloc_delay", "router.vc_alloc_delay"))},
    {"sw_alloc_delay", "1", B::kMapped, "router.sw_alloc_delay",
     UKAI_MAP(MapInt(c, "sw_alloc_delay", "router.sw_alloc_delay"))},
    {"st_prepare_delay", "0", B::kMapped, "router.st_prepare_delay",
     UKAI_MAP(MapInt(c, "st_prepare_delay", "router.st_prepare_delay"))},
    {"st_final_delay", "1", B::kMapped, "router.st_final_delay",
     UKAI_MAP(MapInt(c, "st_final_delay", "router.st_final_delay"))},
    {"vct", "0", B::kDefaultOnly, "the event-driven router is not modelled"},
    {"vc_allocator", "islip", B::kMapped, "router.vc_allocator (islip, separable_input_first)",
     UKAI_MAP(MapAllocator(c, "vc_allocator"))},
    {"sw_allocator", "islip", B::kMapped,
     "islip, separable_input_first: ukai's switch allocator (separable input-first "
     "round-robin)",
     UKAI_MAP(MapAllocator(c, "sw_allocator"))},
    {"arb_type", "round_robin", B::kDefaultOnly, "ukai's arbiters are round-robin"},
    {"alloc_iters", "1", B::kDefaultOnly, "ukai's allocators make one iteration"},
    {"classes", "1", B::kDefaultOnly, kClasses},
    {"traffic", "uniform", B::kMapped,
     "traffic.pattern (uniform -> uniform_self; hotspot({nodes},{rates}): "
     "traffic.hotspot_nodes, fraction 1)",
     UKAI_MAP(MapTraffic(c))},
    {"class_priority", "0", B::kDefaultOnly, kClasses},
    {"perm_seed", "0", B::kDefaultOnly, "randperm's own seed is not modelled"},
    {"injection_rate", "0.1", B::kMapped,
     "traffic.rate = injection_rate x packet_size (flits/node/cycle)",
     UKAI_MAP(MapInjectionRate(c))},
    {"injection_rate_uses_flits", "0", B::kMapped, "with injection_rate",
     [](BooksimContext&) { return Status::Ok(); }},
    {"packet_size", "1", B::kMapped,
     "traffic.message_bytes = packet_size x 4, router.flit_bytes = 4; a mix of sizes for the "
     "class ({{1, 4}}) -> traffic.size_mix_flits",
     UKAI_MAP(MapPacketSize(c))},
    {"packet_size_rate", "1", B::kMapped,
     "with packet_size: the mix's weights (traffic.size_mix_weights)",
     [](BooksimContext&) { return Status::Ok(); }},
    {"injection_process", "bernoulli", B::kMapped,
     "traffic.injection (bernoulli, on_off; on_off's parameters in the name, on_off(alpha) or "
     "on_off({alpha,beta[,r1]}), replace burst_alpha, burst_beta, burst_r1)",
     UKAI_MAP(MapInjectionProcess(c))},
    {"burst_alpha", "0.5", B::kMapped, "traffic.burst_alpha (with injection_process = on_off)",
     UKAI_MAP(CheckBurstKey(c, "burst_alpha"))},
    {"burst_beta", "0.5", B::kMapped, "traffic.burst_beta (with injection_process = on_off)",
     UKAI_MAP(CheckBurstKey(c, "burst_beta"))},
    {"burst_r1", "-1.0", B::kMapped, "traffic.burst_r1 (with injection_process = on_off)",
     UKAI_MAP(CheckBurstKey(c, "burst_r1"))},
    {"priority", "none", B::kDefaultOnly, "message priorities are not modelled"},
    {"batch_size", "1000", B::kDefaultOnly, kBatch},
    {"batch_count", "1", B::kDefaultOnly, kBatch},
    {"max_outstanding_requests", "0", B::kDefaultOnly, kBatch},
    {"use_read_write", "0", B::kDefaultOnly, kReadWrite},
    {"write_fraction", "0.5", B::kDefaultOnly, kReadWrite},
    {"read_request_begin_vc", "0", B::kDefaultOnly, kReadWrite},
    {"read_request_end_vc", "5", B::kDefaultOnly, kReadWrite},
    {"write_request_begin_vc", "2", B::kDefaultOnly, kReadWrite},
    {"write_request_end_vc", "7", B::kDefaultOnly, kReadWrite},
    {"read_reply_begin_vc", "8", B::kDefaultOnly, kReadWrite},
    {"read_reply_end_vc", "13", B::kDefaultOnly, kReadWrite},
    {"write_reply_begin_vc", "10", B::kDefaultOnly, kReadWrite},
    {"write_reply_end_vc", "15", B::kDefaultOnly, kReadWrite},
    {"read_request_subnet", "0", B::kDefaultOnly, kReadWrite},
    {"read_reply_subnet", "0", B::kDefaultOnly, kReadWrite},
    {"write_request_subnet", "0", B::kDefaultOnly, kReadWrite},
    {"write_reply_subnet", "0", B::kDefaultOnly, kReadWrite},
    {"read_request_size", "1", B::kDefaultOnly, kReadWrite},
    {"write_request_size", "1", B::kDefaultOnly, kReadWrite},
    {"read_reply_size", "1", B::kDefaultOnly, kReadWrite},
    {"write_reply_size", "1", B::kDefaultOnly, kReadWrite},
    {"sim_type", "latency", B::kMapped,
     "measure.mode: latency -> \"booksim\", throughput -> \"booksim_throughput\"",
     UKAI_MAP(MapSimType(c))},
    {"warmup_periods", "3", B::kMapped, "measure.warmup_periods (>= 1)", UKAI_MAP(MapWarmup(c))},
    {"sample_period", "1000", B::kMapped, "measure.sample_cycles",
     UKAI_MAP(MapInt(c, "sample_period", "measure.sample_cycles"))},
    {"max_samples", "10", B::kMapped, "measure.max_samples",
     UKAI_MAP(MapInt(c, "max_samples", "measure.max_samples"))},
    {"measure_stats", "1", B::kDefaultOnly, kClasses},
    {"pair_stats", "0", B::kDefaultOnly, "per-pair statistics are not printed"},
    {"latency_thres", "500.0", B::kMapped, "measure.latency_threshold",
     UKAI_MAP(MapNumber(c, "latency_thres", "measure.latency_threshold"))},
    {"warmup_thres", "0.05", B::kDefaultOnly, "used only with warmup_periods = 0 (not modelled)"},
    {"acc_warmup_thres", "0.05", B::kDefaultOnly,
     "used only with warmup_periods = 0 (not modelled)"},
    {"stopping_thres", "0.05", B::kMapped, "measure.stopping_threshold",
     UKAI_MAP(MapNumber(c, "stopping_thres", "measure.stopping_threshold"))},
    {"acc_stopping_thres", "0.05", B::kMapped, "measure.accepted_stopping_threshold",
     UKAI_MAP(MapNumber(c, "acc_stopping_thres", "measure.accepted_stopping_threshold"))},
    {"sim_count", "1", B::kDefaultOnly, "one simulation per point (run seeds as a sweep)"},
    {"include_queuing", "1", B::kDefaultOnly, "packet latency includes the source queue"},
    {"reorder", "0", B::kDefaultOnly, "flits are delivered in order"},
    {"flit_timing", "0", B::kDefaultOnly, kOutputFile},
    {"split_packets", "0", B::kDefaultOnly, "packets are not split"},
    {"seed", "0", B::kMapped, "seed (time: the current time)", UKAI_MAP(MapSeed(c))},
    {"print_activity", "0", B::kDefaultOnly, kOutputFile},
    {"print_csv_results", "0", B::kDefaultOnly, kOutputFile},
    {"deadlock_warn_timeout", "256", B::kDefaultOnly,
     "ukai's deadlock watchdog is measure.watchdog_cycles"},
    {"viewer_trace", "0", B::kDefaultOnly, kOutputFile},
    {"watch_file", "", B::kDefaultOnly, kOutputFile},
    {"watch_flits", "", B::kDefaultOnly, kOutputFile},
    {"watch_packets", "", B::kDefaultOnly, kOutputFile},
    {"watch_transactions", "", B::kDefaultOnly, kOutputFile},
    {"watch_out", "", B::kDefaultOnly, kOutputFile},
    {"stats_out", "", B::kDefaultOnly, kOutputFile},
    {"injected_flits_out", "", B::kDefaultOnly, kOutputFile},
    {"received_flits_out", "", B::kDefaultOnly, kOutputFile},
    {"stored_flits_out", "", B::kDefaultOnly, kOutputFile},
    {"sent_flits_out", "", B::kDefaultOnly, kOutputFile},
    {"outstanding_credits_out", "", B::kDefaultOnly, kOutputFile},
    {"ejected_flits_out", "", B::kDefaultOnly, kOutputFile},
    {"active_packets_out", "", B::kDefaultOnly, kOutputFile},
    {"used_credits_out", "", B::kDefaultOnly, kOutputFile},
    {"free_credits_out", "", B::kDefaultOnly, kOutputFile},
    {"max_credits_out", "", B::kDefaultOnly, kOutputFile},
    {"sent_packets_out", "", B::kDefaultOnly, kOutputFile},
    {"sim_power", "0", B::kDefaultOnly, kPower},
    {"power_output_file", "pwr_tmp", B::kDefaultOnly, kPower},
    {"tech_file", "", B::kDefaultOnly, kPower},
    {"channel_width", "128", B::kDefaultOnly, kPower},
    {"channel_sweep", "0", B::kDefaultOnly, kPower},
    {"network_file", "", B::kMapped,
     "network.file (anynet: our graph topology reads the file; a relative name is looked up "
     "beside the config, then in the current folder as BookSim2 does)",
     UKAI_MAP(MapBooksimNetworkFile(c))},
    {"H_INVD2", "0", B::kDefaultOnly, kPower},
    {"W_INVD2", "0", B::kDefaultOnly, kPower},
    {"H_DFQD1", "0", B::kDefaultOnly, kPower},
    {"W_DFQD1", "0", B::kDefaultOnly, kPower},
    {"H_ND2D1", "0", B::kDefaultOnly, kPower},
    {"W_ND2D1", "0", B::kDefaultOnly, kPower},
    {"H_SRAM", "0", B::kDefaultOnly, kPower},
    {"W_SRAM", "0", B::kDefaultOnly, kPower},
    {"Vdd", "0", B::kDefaultOnly, kPower},
    {"R", "0", B::kDefaultOnly, kPower},
    {"IoffSRAM", "0", B::kDefaultOnly, kPower},
    {"IoffP", "0", B::kDefaultOnly, kPower},
    {"IoffN", "0", B::kDefaultOnly, kPower},
    {"Cg_pwr", "0", B::kDefaultOnly, kPower},
    {"Cd_pwr", "0", B::kDefaultOnly, kPower},
    {"Cgdl", "0", B::kDefaultOnly, kPower},
    {"Cg", "0", B::kDefaultOnly, kPower},
    {"Cd", "0", B::kDefaultOnly, kPower},
    {"LAMBDA", "0", B::kDefaultOnly, kPower},
    {"MetalPitch", "0", B::kDefaultOnly, kPower},
    {"Rw", "0", B::kDefaultOnly, kPower},
    {"Cw_gnd", "0", B::kDefaultOnly, kPower},
    {"Cw_cpl", "0", B::kDefaultOnly, kPower},
    {"wire_length", "0", B::kDefaultOnly, kPower},
};
#undef UKAI_MAP

bool SameValue(std::string_view a, std::string_view b) {
  const std::optional<double> x = ParseNumber(a), y = ParseNumber(b);
  if (x && y) return *x == *y;
  return Trim(a) == Trim(b);
}

}  // namespace

std::vector<std::string> SplitBooksimList(std::string_view value) {
  std::string_view v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  if (v.size() < 2 || v.front() != '{' || v.back() != '}') return {std::string(v)};
  v = v.substr(1, v.size() - 2);
  std::vector<std::string> out;
  size_t start = 0;
  int depth = 0;  // commas inside a nested {...} belong to its element
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] == '{') ++depth;
    if (i < v.size() && v[i] == '}' && depth > 0) --depth;
    if (i == v.size() || (v[i] == ',' && depth == 0)) {
      std::string item = Trim(v.substr(start, i - start));
      if (!item.empty()) out.push_back(std::move(item));
      start = i + 1;
    }
  }
  return out;
}

std::span<const BooksimKey> BooksimKeys() { return kKeys; }

const BooksimKey* FindBooksimKey(std::string_view name) {
  for (const BooksimKey& k : kKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string BooksimContext::Value(std::string_view key) const {
  auto it = written_.find(key);
  if (it != written_.end()) return it->second.value;
  const BooksimKey* k = FindBooksimKey(key);
  return k == nullptr ? std::string() : std::string(k->default_value);
}

config::Origin BooksimContext::OriginOf(std::string_view key) const {
  auto it = written_.find(key);
  if (it != written_.end()) return it->second.origin;
  return {fmt::format("{} (BookSim2's default {} = {})", source_, key, Value(key)), 0, 0};
}

Status BooksimContext::Error(std::string_view key, std::string_view message) const {
  return config::KeyError(key, message, OriginOf(key));
}

Result<int64_t> BooksimContext::Int(std::string_view key) const {
  const std::optional<int64_t> v = WholeNumber(ParseNumber(Value(key)));
  if (!v) return Error(key, fmt::format("\"{}\" is not an integer", Value(key)));
  return *v;
}

Result<double> BooksimContext::Number(std::string_view key) const {
  const std::optional<double> v = ParseNumber(Value(key));
  if (!v) return Error(key, fmt::format("\"{}\" is not a number", Value(key)));
  return *v;
}

Status BooksimContext::Set(std::string_view ours, Scalar value, std::string_view from) {
  config::Tree t;
  t.kind = config::Tree::Kind::kScalar;
  t.scalar = std::move(value);
  t.origin = OriginOf(from);
  return config::SetRawValue(ours, std::move(t), OriginOf(from), &raw_);
}

Status BooksimContext::SetList(std::string_view ours, const std::vector<Scalar>& values,
                               std::string_view from) {
  config::Tree t = config::Tree::Of(config::Tree::Kind::kList);
  t.origin = OriginOf(from);
  for (const Scalar& s : values) {
    config::Tree item;
    item.scalar = s;
    item.origin = t.origin;
    t.items.push_back(std::move(item));
  }
  return config::SetRawValue(ours, std::move(t), OriginOf(from), &raw_);
}

Status ApplyBooksimKey(const BooksimKey& key, BooksimContext& context) {
  if (key.action == BooksimAction::kMapped) return key.map(context);
  if (!context.Written(key.name) || SameValue(context.Value(key.name), key.default_value)) {
    return Status::Ok();
  }
  return context.Error(
      key.name,
      fmt::format("\"{}\" is not modelled: {} (only BookSim2's default{} is "
                  "accepted)",
                  context.Value(key.name), key.ours,
                  key.default_value.empty() ? "" : fmt::format(" {}", key.default_value)));
}

std::string DescribeBooksimKeysMarkdown() {
  std::string out = "| BookSim2 key | its default | in ukai |\n|---|---|---|\n";
  for (const BooksimKey& k : kKeys) {
    const std::string what = k.action == BooksimAction::kMapped
                                 ? std::string(k.ours)
                                 : fmt::format("default only: {}", k.ours);
    out += fmt::format("| `{}` | `{}` | {} |\n", k.name, k.default_value, what);
  }
  return out;
}

}  // namespace ukai::sim
