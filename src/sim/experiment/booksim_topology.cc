// The BookSim reader's topology rows (booksim_keys.h): topology, k, n, c, x, y, xr, yr,
// routing_function, use_noc_latency and network_file, which depend on the BookSim2 topology a
// file names.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/experiment/booksim_keys.h"
#include "sim/routing/registry.h"

namespace ukai::sim {
namespace {

// A BookSim2 topology the reader maps: its name, ours, and the family its routing functions
// belong to (BookSim2 names a routing function <routing_function>_<topology>).
struct TopologyRow {
  std::string_view booksim, ours;
};
constexpr TopologyRow kTopologyRows[] = {
    {"mesh", "mesh"},
    {"torus", "torus"},
    {"kncube", "torus"},
    {"cmesh", "cmesh"},
    {"flatfly", "flatfly"},
    {"fattree", "fattree"},
    {"dragonflynew", "dragonfly"},
    {"anynet", "graph"},
};

// routing_function values per topology (ours: the network.topology), and our algorithm.
struct RoutingRow {
  std::string_view topology, booksim, ours;
};
constexpr RoutingRow kRoutingRows[] = {
    {"mesh", "dim_order", "dor"},
    {"mesh", "dor", "dor"},
    {"mesh", "min_adapt", "min_adapt"},
    {"mesh", "valiant", "valiant"},
    {"mesh", "romm", "romm"},
    {"mesh", "planar_adapt", "planar_adapt"},
    {"torus", "dim_order", "dor"},
    {"torus", "dor", "dor"},
    {"torus", "min_adapt", "min_adapt"},
    {"torus", "valiant", "valiant"},
    {"torus", "romm", "romm"},
    {"cmesh", "dor_no_express", "dor"},
    {"flatfly", "ran_min", "min"},
    {"flatfly", "valiant", "valiant"},
    {"flatfly", "ugal", "ugal"},
    {"fattree", "nca", "nca"},
    {"fattree", "anca", "anca"},
    {"dragonfly", "min", "min"},
    {"dragonfly", "ugal", "ugal"},
    {"graph", "min", "source"},
};

const TopologyRow* FindTopologyRow(std::string_view booksim) {
  for (const TopologyRow& r : kTopologyRows) {
    if (r.booksim == booksim) return &r;
  }
  return nullptr;
}

// Our network.topology for the file's topology ("" when the reader does not map it).
std::string_view Ours(const BooksimContext& c) {
  const TopologyRow* row = FindTopologyRow(c.Value("topology"));
  return row == nullptr ? std::string_view() : row->ours;
}

bool Concentrated(const BooksimContext& c) { return Ours(c) == "cmesh" || Ours(c) == "flatfly"; }

bool HaveRouting(std::string_view name) { return FindRoutingAlgorithm(name).ok(); }

// k and n size BookSim2's regular topologies; anynet takes its size from its file and
// ignores them: only their defaults are accepted there.
Status UnusedOnAnynet(BooksimContext& c, std::string_view key, int64_t default_value) {
  Result<int64_t> v = c.Int(key);
  if (!v.ok()) return v.status();
  if (*v == default_value) return Status::Ok();
  return c.Error(key,
                 "is not used by anynet (its network_file gives the network): only "
                 "BookSim2's default is accepted");
}

}  // namespace

// network_file: anynet's network, read by our graph topology (network.file). BookSim2 opens
// it relative to the current folder; ours relative to the config's folder: a relative name
// found from the current folder and not from the config's is made absolute, so a config that
// runs under BookSim2 runs here from the same folder, and from any other too when the file
// sits beside the config.
Status MapBooksimNetworkFile(BooksimContext& c) {
  const std::string file = c.Value("network_file");
  if (Ours(c) != "graph") {
    if (!c.Written("network_file")) return Status::Ok();
    return c.Error("network_file", "is used by topology = anynet only");
  }
  if (file.empty()) return c.Error("network_file", "anynet needs its network file");
  std::filesystem::path p(file);
  if (p.is_relative()) {
    const config::Origin origin = c.OriginOf("network_file");
    const std::filesystem::path beside =
        origin.line > 0 ? std::filesystem::path(origin.source).parent_path() / p : p;
    std::error_code ec;
    if (!std::filesystem::exists(beside, ec) && std::filesystem::exists(p, ec)) {
      p = std::filesystem::absolute(p, ec);
    }
  }
  return c.Set("network.file", p.string(), "network_file");
}

Status MapBooksimTopology(BooksimContext& c) {
  const std::string v = c.Value("topology");
  if (const TopologyRow* row = FindTopologyRow(v)) {
    return c.Set("network.topology", std::string(row->ours), "topology");
  }
  std::vector<std::string_view> names;
  for (const TopologyRow& r : kTopologyRows) names.push_back(r.booksim);
  return c.Error("topology", fmt::format("\"{}\" is not a topology the BookSim reader maps "
                                         "(it maps: {})",
                                         v, fmt::join(names, ", ")));
}

// k: the radix (mesh, torus, cmesh, flatfly: routers per dimension; fattree: the arity);
// on dragonflynew the terminals per router (BookSim2's p).
Status MapBooksimK(BooksimContext& c) {
  Result<int64_t> k = c.Int("k");
  if (!k.ok()) return k.status();
  if (Ours(c) == "graph") return UnusedOnAnynet(c, "k", 8);
  if (Ours(c) == "dragonfly") return c.Set("network.dragonfly_p", *k, "k");
  return c.Set("network.k", *k, "k");
}

// n: dimensions (fattree: levels); dragonflynew has one dimension per group (BookSim2
// asserts n = 1), cmesh at most 2.
Status MapBooksimN(BooksimContext& c) {
  Result<int64_t> n = c.Int("n");
  if (!n.ok()) return n.status();
  if (Ours(c) == "graph") return UnusedOnAnynet(c, "n", 2);
  if (Ours(c) == "dragonfly") {
    if (*n != 1) return c.Error("n", "BookSim2's dragonflynew has n = 1 only");
    return Status::Ok();
  }
  if (Ours(c) == "cmesh" && *n != 2) {
    return c.Error("n", "BookSim2's cmesh is two-dimensional (n = 2)");
  }
  return c.Set("network.n", *n, "n");
}

// c: terminals per router of cmesh and flatfly; other topologies ignore it in BookSim2, so
// only its default is accepted there.
Status MapBooksimConcentration(BooksimContext& c) {
  Result<int64_t> v = c.Int("c");
  if (!v.ok()) return v.status();
  if (Concentrated(c)) return c.Set("network.concentration", *v, "c");
  if (*v != 1) {
    return c.Error("c", fmt::format("\"{}\" is not modelled: the concentration is used by "
                                    "cmesh and flatfly only (only BookSim2's default 1 is "
                                    "accepted on {})",
                                    *v, c.Value("topology")));
  }
  return Status::Ok();
}

// x, y, xr, yr: BookSim2's layout of the terminals of cmesh and flatfly (it asserts x = y,
// xr = yr and c = xr * yr). ukai checks the same and numbers terminals router by router.
Status CheckBooksimLayout(BooksimContext& c, std::string_view key) {
  Result<int64_t> v = c.Int(key);
  if (!v.ok()) return v.status();
  if (!Concentrated(c)) {
    if (*v != (key.size() == 1 ? 8 : 1)) {  // BookSim2's defaults: x = y = 8, xr = yr = 1
      return c.Error(key, fmt::format("is used by cmesh and flatfly only (topology = {})",
                                      c.Value("topology")));
    }
    return Status::Ok();
  }
  if (key == "y" || key == "yr") return Status::Ok();  // checked with x, xr
  const std::string_view other = key == "x" ? "y" : "yr";
  Result<int64_t> w = c.Int(other);
  if (!w.ok()) return w.status();
  if (*v != *w) {
    return c.Error(key, fmt::format("BookSim2's {} needs {} = {} (it asserts it); got {} and {}",
                                    c.Value("topology"), key, other, *v, *w));
  }
  if (key == "xr") {
    Result<int64_t> conc = c.Int("c");
    if (!conc.ok()) return conc.status();
    if (*v * *w != *conc) {
      return c.Error(key, fmt::format("BookSim2's {} needs c = xr * yr (it asserts it); got c = "
                                      "{}, xr = {}, yr = {}",
                                      c.Value("topology"), *conc, *v, *w));
    }
  }
  return Status::Ok();
}

Status MapBooksimRouting(BooksimContext& c) {
  std::string v = c.Value("routing_function");
  const std::string_view ours = Ours(c);
  if (ours.empty()) return Status::Ok();  // the topology row reports it
  // The name may carry BookSim2's topology suffix (its routing function's full name).
  const std::string suffix = fmt::format("_{}", c.Value("topology"));
  if (v.size() > suffix.size() && v.ends_with(suffix)) v.resize(v.size() - suffix.size());
  for (std::string_view s : {"_mesh", "_torus"}) {
    if ((ours == "mesh" || ours == "torus") && v.size() > s.size() && v.ends_with(s)) {
      v.resize(v.size() - s.size());
    }
  }
  std::vector<std::string_view> mapped;
  for (const RoutingRow& r : kRoutingRows) {
    if (r.topology != ours || !HaveRouting(r.ours)) continue;
    if (r.booksim != v) {
      mapped.push_back(r.booksim);
      continue;
    }
    UKAI_RETURN_IF_ERROR(c.Set("routing.algorithm", std::string(r.ours), "routing_function"));
    // BookSim2 hands an output VC to a new packet once the previous tail has left
    // (wait_for_tail_credit = 0), also on min_adapt's adaptive VCs: no atomic VCs. Its
    // min_adapt offers the adaptive VCs toward the lowest unfinished dimension only (on a
    // torus VC 3 alone): routing.min_adapt_candidates = booksim (sim_config.h).
    if (r.ours == "min_adapt") {
      UKAI_RETURN_IF_ERROR(c.Set("routing.duato_atomic", std::string("none"), "routing_function"));
      return c.Set("routing.min_adapt_candidates", std::string("booksim"), "routing_function");
    }
    // BookSim2's valiant_mesh / valiant_torus route to the intermediate node even when the
    // way there passes the destination.
    if (r.ours == "valiant" && (ours == "mesh" || ours == "torus")) {
      return c.Set("routing.valiant_via_destination", true, "routing_function");
    }
    // BookSim2's dim_order_torus fixes a message's dateline class where it enters a
    // dimension (the upper VCs when it wraps there): routing.dor_dateline = booksim.
    if (r.ours == "dor" && ours == "torus") {
      return c.Set("routing.dor_dateline", std::string("booksim"), "routing_function");
    }
    // BookSim2's min_dragonflynew and ugal_dragonflynew send every hop on the VC of its
    // phase alone (VC 0 before the global channel, VC 1 from it on; ugal: VC 0, 1, 2),
    // whatever num_vcs says.
    if (ours == "dragonfly") {
      return c.Set("routing.dragonfly_vcs", std::string("booksim"), "routing_function");
    }
    // BookSim2's min_anynet: one shortest path per pair (Dijkstra over the channel
    // latencies), on every VC, whether or not the graph has cycles.
    if (ours == "graph") {
      UKAI_RETURN_IF_ERROR(
          c.Set("routing.source_routes", std::string("shortest"), "routing_function"));
      return c.Set("routing.source_paths", int64_t{1}, "routing_function");
    }
    return Status::Ok();
  }
  return c.Error("routing_function",
                 fmt::format("\"{}\" is not a routing function the BookSim reader maps on {}{} "
                             "(it maps: {})",
                             v, c.Value("topology"),
                             c.Written("routing_function") ? "" : " (BookSim2 needs one)",
                             fmt::join(mapped, ", ")));
}

// BookSim2's channel latencies: with use_noc_latency a torus channel takes 2 cycles, a
// cmesh channel c / n (2 with its c = 4, n = 2); a flatfly channel's length depends on the
// distance it spans (not modelled: refused); fattree channels take 1; dragonflynew's local
// channels 10 and global ones 100 (terminal channels 1).
Status MapBooksimNocLatency(BooksimContext& c) {
  Result<int64_t> v = c.Int("use_noc_latency");
  if (!v.ok()) return v.status();
  const std::string_view ours = Ours(c);
  int64_t cycles = 1;
  if (*v != 0 && ours == "torus") cycles = 2;
  if (*v != 0 && ours == "cmesh") {
    Result<int64_t> conc = c.Int("c");
    Result<int64_t> n = c.Int("n");
    if (!conc.ok() || !n.ok() || *n < 1) return Status::Ok();  // their rows report it
    cycles = std::max<int64_t>(1, *conc / *n);
  }
  if (*v != 0 && ours == "flatfly") {
    return c.Error("use_noc_latency",
                   "1 (BookSim2's default) gives every flatfly channel a length from the "
                   "distance it spans, which ukai does not model; give use_noc_latency = 0 "
                   "(every channel 1 cycle)");
  }
  if (ours == "dragonfly") {
    // dragonfly.cpp defines DRAGON_LATENCY: local channels 10 cycles, global 100, whatever
    // use_noc_latency says.
    UKAI_RETURN_IF_ERROR(c.Set("network.dragonfly_local_cycles", int64_t{10}, "topology"));
    UKAI_RETURN_IF_ERROR(c.Set("network.dragonfly_global_cycles", int64_t{100}, "topology"));
  }
  return c.Set("router.link_cycles", cycles, "use_noc_latency");
}

// BookSim2 numbers the terminals of cmesh and flatfly block by block (xr x yr per router,
// row-major over the whole grid), ukai router by router: a pattern that depends on the node
// number would send elsewhere, so only uniform traffic is accepted there.
Status CheckBooksimTrafficOnTopology(BooksimContext& c) {
  if (!Concentrated(c) || c.Value("traffic") == "uniform") return Status::Ok();
  return c.Error("traffic", fmt::format("\"{}\" on {} is not modelled: BookSim2 numbers its "
                                        "terminals in xr x yr blocks, ukai router by router, "
                                        "so the pattern would differ (the reader maps uniform "
                                        "there)",
                                        c.Value("traffic"), c.Value("topology")));
}

}  // namespace ukai::sim
