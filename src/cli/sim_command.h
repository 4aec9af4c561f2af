// `ukai sim`: the registrar of the simulator's commands (see commands.h).
//   ukai sim run CONFIG.toml [--set key=value]... [--format table|csv|json] [--out FILE]
//   ukai sim describe [--markdown]
#ifndef UKAI_CLI_SIM_COMMAND_H_
#define UKAI_CLI_SIM_COMMAND_H_

#include "cli/commands.h"

namespace ukai::cli {

void RegisterSimCommand(CLI::App* sim, CommandContext* context);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_COMMAND_H_
