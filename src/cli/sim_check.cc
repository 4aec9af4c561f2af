#include "cli/sim_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <string>

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
  // What the check depends on: the network, the routing with its options, VCs and root,
  // the switching (atomic VCs) and the faults' seed.
  std::set<std::string> done;
  int code = kExitOk;
  for (size_t i = 0; i < points->size(); ++i) {
    const sim::SimConfig& c = (*points)[i];
    const std::string key =
        fmt::format("{} {} {} {} {} {} {} {} {} {}", static_cast<int>(c.network.topology),
                    fmt::join(c.network.k, ","), c.routing.algorithm, c.router.vcs, c.routing.root,
                    c.faults.any() ? c.seed : 0, static_cast<int>(c.routing.dor_tie),
                    static_cast<int>(c.routing.dor_dateline),
                    static_cast<int>(c.routing.duato_atomic), static_cast<int>(c.router.switching));
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
