#include "sim/routing/source_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "sim/routing/registry.h"
#include "sim/routing/source_routing.h"
#include "sim/topology/factory.h"

namespace ukai::sim {

Result<CdgReport> CheckSourceRoutes(const SimConfig& config) {
  Result<std::unique_ptr<Topology>> made = MakeTopology(config.network);
  if (!made.ok()) return made.status();
  const Topology& t = **made;
  UKAI_RETURN_IF_ERROR(SourceSupports(t, config));
  const std::unique_ptr<RoutingFunction> routing = SourceCreate(t, config);
  const auto& source = static_cast<const SourceRouting&>(*routing);
  const SourceRouteTable& table = source.table();
  const int ports = t.NumNetworkPorts();
  const int vcs = config.router.vcs;
  auto channel = [&](const RouteHop& h, int v) {
    return (static_cast<int64_t>(h.node) * ports + h.port) * vcs + v;
  };
  const int64_t n = static_cast<int64_t>(t.NumNodes()) * ports * vcs;
  std::vector<std::vector<int64_t>> next(static_cast<size_t>(n));
  std::unordered_set<int64_t> edges;
  std::vector<uint8_t> used(static_cast<size_t>(n), 0);
  int64_t routes = 0;
  for (int s = 0; s < table.terminals(); ++s) {
    for (int d = 0; d < table.terminals(); ++d) {
      if (s == d) continue;
      const uint32_t mask = source.PairVcs(s, d);
      for (int k = 0; k < table.Paths(s, d); ++k) {
        ++routes;
        std::span<const RouteHop> path = table.Path(s, d, k);
        for (size_t i = 0; i < path.size(); ++i) {
          for (uint32_t a = mask; a != 0; a &= a - 1) {
            const int64_t from = channel(path[i], __builtin_ctz(a));
            used[from] = 1;
            if (i + 1 == path.size()) continue;
            for (uint32_t b = mask; b != 0; b &= b - 1) {
              const int64_t to = channel(path[i + 1], __builtin_ctz(b));
              if (edges.insert(from * n + to).second) next[from].push_back(to);
            }
          }
        }
      }
    }
  }
  CdgReport report;
  report.channels = std::count(used.begin(), used.end(), uint8_t{1});
  report.dependencies = report.direct = static_cast<int64_t>(edges.size());
  const std::string what = fmt::format(
      "source routes ({}, root {}, {} route(s) per pair{}): {} routes over {} virtual channels, "
      "{} dependencies",
      table.mode() == SourceRouteMode::kUpDown ? "up*/down*" : "shortest paths",
      t.NodeName(table.root()), table.max_paths(), source.in_order() ? ", one VC per pair" : "",
      routes, report.channels, report.dependencies);
  // Iterative DFS for a cycle (colours: 0 new, 1 on the stack, 2 done).
  std::vector<uint8_t> colour(static_cast<size_t>(n), 0);
  std::vector<int64_t> parent(static_cast<size_t>(n), -1);
  std::vector<std::pair<int64_t, size_t>> stack;
  for (int64_t root = 0; root < n; ++root) {
    if (colour[root] != 0 || next[root].empty()) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty()) {
      auto& [v, i] = stack.back();
      if (i == next[v].size()) {
        colour[v] = 2;
        stack.pop_back();
        continue;
      }
      const int64_t w = next[v][i++];
      if (colour[w] == 0) {
        colour[w] = 1;
        parent[w] = v;
        stack.push_back({w, 0});
      } else if (colour[w] == 1) {  // a cycle w -> ... -> v -> w
        std::vector<int64_t> cycle{v};
        for (int64_t x = v; x != w; x = parent[x]) cycle.push_back(parent[x]);
        std::reverse(cycle.begin(), cycle.end());
        std::string text = what + "; a cycle of " + std::to_string(cycle.size()) + " channels:";
        for (int64_t c : cycle) {
          const int64_t node = c / vcs / ports, port = c / vcs % ports, vc = c % vcs;
          text += fmt::format("\n  {} {} vc {}", t.NodeName(static_cast<int>(node)),
                              t.PortName(static_cast<int>(port)), vc);
        }
        text += "\nnot deadlock-free (routing.source_routes = \"updown\" is, on any graph)";
        report.text = text;
        report.ok = false;
        return report;
      }
    }
  }
  report.ok = true;
  report.text = what +
                "; every pair of end nodes has a route and the graph is acyclic: "
                "deadlock-free";
  return report;
}

}  // namespace ukai::sim
