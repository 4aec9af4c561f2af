// `ukai launch -n N [--modules a,b] [--trace] [--timeout S] PROGRAM [ARGS...]`: starts N
// processes of PROGRAM on this host with the runtime's "launcher" bootstrap (descriptor
// tables exchanged at start-up; src/rt/launch/launcher.h) and exits with the job's code:
// 0 when every process succeeded, else the first failing process's code (128 + signal
// when it was killed); 2 for a usage error.
#ifndef UKAI_CLI_LAUNCH_COMMAND_H_
#define UKAI_CLI_LAUNCH_COMMAND_H_

#include "cli/commands.h"

namespace ukai::cli {

void RegisterLaunchCommand(CLI::App* launch, CommandContext* context);

}  // namespace ukai::cli

#endif  // UKAI_CLI_LAUNCH_COMMAND_H_
