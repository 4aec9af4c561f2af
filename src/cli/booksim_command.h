// `ukai booksim FILE.cfg [key=value ...]`: runs a BookSim2 config as BookSim2's own command
// line does (its overrides appended to the file), printing BookSim2's summary lines by
// default (docs/booksim.md). The work is RunSimPoints (sim_run.h).
#ifndef UKAI_CLI_BOOKSIM_COMMAND_H_
#define UKAI_CLI_BOOKSIM_COMMAND_H_

#include "cli/commands.h"

namespace ukai::cli {

void RegisterBooksimCommand(CLI::App* command, CommandContext* context);

}  // namespace ukai::cli

#endif  // UKAI_CLI_BOOKSIM_COMMAND_H_
