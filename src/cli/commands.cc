#include "cli/commands.h"

#include "cli/booksim_command.h"
#include "cli/launch_command.h"
#include "cli/link_command.h"
#include "cli/sim_command.h"

namespace ukai::cli {
namespace {

// The top-level commands. A new command is one row here.
constexpr CommandEntry kCommands[] = {
    {"sim", "simulate interconnection networks: run configs, describe the config keys",
     &RegisterSimCommand},
    {"booksim", "run a BookSim2 config (FILE.cfg [key=value ...]) and print BookSim2's summary",
     &RegisterBooksimCommand},
    {"launch", "start N processes of a runtime program on this host", &RegisterLaunchCommand},
    {"link", "link calculator (data rate, efficiency, packet rate) and the 8b/10b code table",
     &RegisterLinkCommand},
};

}  // namespace

std::span<const CommandEntry> Commands() { return kCommands; }

}  // namespace ukai::cli
