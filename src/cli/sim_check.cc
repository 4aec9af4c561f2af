#include "cli/sim_check.h"

#include <fmt/format.h>

#include <set>
#include <tuple>

#include "sim/experiment/config_schema.h"
#include "sim/routing/cdg_check.h"

namespace ukai::cli {

int CheckSim(const SimCheckOptions& options, const CliIo& io) {
  Result<std::vector<sim::SimConfig>> points =
      sim::LoadSimConfigs(options.config_path, options.sets);
  if (!points.ok()) {
    *io.err << "ukai sim check: " << points.status().ToString() << '\n' << std::flush;
    return kExitUsage;
  }
  // What the check depends on: the routing, its VCs and root, and the faults' seed.
  std::set<std::tuple<std::string, int, int, uint64_t>> done;
  int code = kExitOk;
  for (size_t i = 0; i < points->size(); ++i) {
    const sim::SimConfig& c = (*points)[i];
    const auto key = std::make_tuple(c.routing.algorithm, c.router.vcs, c.routing.root,
                                     c.faults.any() ? c.seed : 0);
    if (!done.insert(key).second) continue;
    Result<sim::CdgReport> rep = sim::CheckDeadlockFreedom(c);
    if (!rep.ok()) {
      *io.err << "ukai sim check: " << rep.status().ToString() << '\n' << std::flush;
      return kExitUsage;
    }
    *io.out << fmt::format("point {}: routing {}, router.vcs {}, seed {}: {}\n", i,
                           c.routing.algorithm, c.router.vcs, c.seed, rep->text);
    if (!rep->ok) code = kExitRunFailed;
  }
  *io.out << std::flush;
  return code;
}

}  // namespace ukai::cli
