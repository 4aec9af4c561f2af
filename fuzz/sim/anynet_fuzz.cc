// libFuzzer target: BookSim2 anynet network files (sim/topology/anynet.h), then the graph
// topology built from what parses (sim/topology/graph.h) and, when that works, its source
// route tables. Must never crash, hang or throw; every error says what and where.
// Replayed by tests/sim/anynet_fuzz_replay_test.cc under gcc, ASan and UBSan.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/routing/source_routes.h"
#include "sim/topology/anynet.h"
#include "sim/topology/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ukai::Result<ukai::sim::GraphSpec> spec = ukai::sim::ParseAnynet(text, "fuzz.anynet");
  if (!spec.ok()) {
    if (spec.status().message().find("fuzz.anynet") == std::string::npos) std::abort();
    return 0;
  }
  if (spec->terminals.size() + spec->switches.size() > 512) return 0;  // keep runs short
  ukai::Result<std::unique_ptr<ukai::sim::GraphTopology>> graph =
      ukai::sim::GraphTopology::Create(*spec);
  if (!graph.ok()) {
    if (graph.status().message().empty()) std::abort();
    return 0;
  }
  const ukai::sim::GraphTopology& g = **graph;
  for (int v = 0; v < g.NumNodes(); ++v) {  // channels pair up
    for (int p = 0; p < g.Degree(v); ++p) {
      const ukai::sim::PortRef far = g.Neighbor(v, p);
      if (!far.valid() || g.Neighbor(far.node, far.port).node != v) std::abort();
    }
  }
  ukai::Result<std::unique_ptr<ukai::sim::SourceRouteTable>> table =
      ukai::sim::SourceRouteTable::Build(g, ukai::sim::SourceRouteMode::kAuto, -1, 2);
  if (!table.ok() && table.status().code() == ukai::StatusCode::kInternal) std::abort();
  return 0;
}
