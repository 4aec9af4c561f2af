#include "cli/sim_routes.h"

#include <fmt/format.h>

#include <memory>

#include "core/output/writer.h"
#include "sim/experiment/config_schema.h"
#include "sim/experiment/front_door.h"
#include "sim/experiment/sss_keys.h"
#include "sim/routing/source_routing.h"
#include "sim/topology/factory.h"

namespace ukai::cli {
namespace {

// GCC 12 reports a false maybe-uninitialized in std::variant's move inside
// vector::emplace_back when it inlines Record::Add into a small function like this one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
output::Record RouteRecord(const std::string& source, const std::string& destination, int64_t route,
                           int64_t switches, const std::string& ports) {
  output::Record rec;
  rec.Add("source", source)
      .Add("destination", destination)
      .Add("route", route)
      .Add("switches", switches)
      .Add("ports", ports);
  return rec;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace

int PrintRoutes(const SimRoutesOptions& options, const CliIo& io) {
  auto fail = [&io](const std::string& message) {
    *io.err << "ukai sim routes: " << message << '\n' << std::flush;
    return kExitUsage;
  };
  if (options.format != "text" && options.format != "csv" && options.format != "json") {
    return fail("--format: expected text, csv or json, got '" + options.format + "'");
  }
  Result<std::vector<sim::SimConfig>> points =
      sim::LoadSimConfigs(options.config_path, options.sets);
  if (!points.ok()) return fail(points.status().ToString());
  const sim::SimConfig& c = points->front();
  if (c.routing.algorithm != "source") {
    return fail("routing.algorithm: route tables are printed for 'source' routing, got '" +
                c.routing.algorithm + "'");
  }
  Result<std::unique_ptr<sim::Topology>> topology = sim::MakeTopology(c.network);
  if (!topology.ok()) return fail(topology.status().ToString());
  const sim::Topology& t = **topology;
  if (Status st = sim::SourceSupports(t, c); !st.ok()) return fail(st.ToString());
  const std::unique_ptr<sim::RoutingFunction> routing = sim::SourceCreate(t, c);
  const sim::SourceRouteTable& table = static_cast<const sim::SourceRouting&>(*routing).table();
  int from = -1;
  if (!options.from.empty()) {
    for (int n = 0; n < table.terminals(); ++n) {
      if (t.NodeName(n) == options.from) from = n;
    }
    if (from < 0) return fail("--from: '" + options.from + "' is not an end node");
  }
  std::ostream& out = *io.out;
  std::unique_ptr<output::RecordWriter> writer;
  if (options.format == "csv") writer = output::MakeCsvWriter(&out);
  if (options.format == "json") writer = output::MakeJsonWriter(&out);
  if (writer == nullptr) {
    out << fmt::format(
        "# routing.source_routes = {}{}, root {}; {}; {} route(s) per pair at most, {} in all\n"
        "# source destination route switches: switch:output-port ...\n",
        sim::SourceRouteModeName(table.mode()),
        c.routing.source_routes == sim::SourceRouteMode::kAuto ? " (auto)" : "",
        t.NodeName(table.root()), t.Describe(), table.max_paths(), table.routes());
  }
  for (int s = 0; s < table.terminals(); ++s) {
    if (from >= 0 && s != from) continue;
    for (int d = 0; d < table.terminals(); ++d) {
      for (int k = 0; s != d && k < table.Paths(s, d); ++k) {
        std::string ports;
        int switches = 0;
        for (const sim::RouteHop& h : table.Path(s, d, k)) {
          if (!t.Forwards(h.node)) continue;  // the source's own link
          ports += fmt::format("{}{}:{}", ports.empty() ? "" : " ", t.NodeName(h.node), h.port);
          ++switches;
        }
        if (writer == nullptr) {
          out << fmt::format("{} {} {} {} {}\n", t.NodeName(s), t.NodeName(d), k, switches, ports);
          continue;
        }
        Status st = writer->Write(RouteRecord(t.NodeName(s), t.NodeName(d), k, switches, ports));
        if (!st.ok()) return fail(st.ToString());
      }
    }
  }
  out << std::flush;
  return kExitOk;
}

}  // namespace ukai::cli
