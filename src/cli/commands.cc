#include "cli/commands.h"

#include "cli/sim_command.h"

namespace ukai::cli {
namespace {

// The top-level commands. A new command is one row here.
constexpr CommandEntry kCommands[] = {
    {"sim", "simulate interconnection networks: run configs, describe the config keys",
     &RegisterSimCommand},
};

}  // namespace

std::span<const CommandEntry> Commands() { return kCommands; }

}  // namespace ukai::cli
