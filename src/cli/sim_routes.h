// `ukai sim routes CONFIG.toml [--set key=value ...] [--from NODE] [--format text|csv|json]`:
// the route tables of `source` routing (sim/routing/source_routes.h) — what every NIC writes
// into its packets' headers: for every ordered pair of end nodes each route, as the output
// port at every switch on it ("s1.0:4 s2.0:1 s1.1:1"), and its number of switches.
//
// Exit status: kExitOk; kExitUsage for a config error or a routing other than `source`.
#ifndef UKAI_CLI_SIM_ROUTES_H_
#define UKAI_CLI_SIM_ROUTES_H_

#include <string>
#include <vector>

#include "cli/commands.h"

namespace ukai::cli {

struct SimRoutesOptions {
  std::string config_path;
  std::vector<std::string> sets;  // "key=value", applied in order
  std::string from;               // only the routes of this end node (its name)
  std::string format = "text";    // text, csv or json (JSON Lines)
};

int PrintRoutes(const SimRoutesOptions& options, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_ROUTES_H_
