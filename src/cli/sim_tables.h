// `ukai sim tables CONFIG [--set key=value ...] [--format text|json] [--all-links]`: runs a
// config and prints, after every event of the run, the tables its machine model's controller
// keeps: for the full-mesh model (network.topology = "fullmesh") the communication
// management table and the link management table (sim/fullmesh/table_dump.h). The config goes
// through the front door (sim/experiment/front_door.h) and the chosen model's
// Experiment::WriteControllerTables writes them; a model without such tables is an error.
//
// Exit status: kExitOk; kExitUsage for a config error, a bad --format or a model without
// controller tables; kExitRunFailed when the run fails (a wrong data check).
#ifndef UKAI_CLI_SIM_TABLES_H_
#define UKAI_CLI_SIM_TABLES_H_

#include <string>
#include <vector>

#include "cli/commands.h"

namespace ukai::cli {

struct SimTablesOptions {
  std::string config_path;
  std::vector<std::string> sets;  // "key=value", applied in order
  std::string format = "text";    // text or json (JSON Lines)
  bool all_links = false;         // idle links too
};

int PrintSimTables(const SimTablesOptions& options, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_TABLES_H_
