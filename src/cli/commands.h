// The `ukai` command line: the explicit table of top-level commands and what a command
// needs to run. Adding a command (e.g. `ukai launch`) is one row in commands.cc plus its
// registrar: a function that adds its options and sub-commands to the CLI11 App it is given
// and sets a callback storing the exit status in the CommandContext.
//
// Exit statuses of every command: 0 success; 2 usage or config error (message on stderr
// naming the option or config key and its position); 3 a failure while running (e.g. a
// simulated deadlock), after writing whatever results were complete.
//
// Thread safety: the table is immutable; a CommandContext belongs to one invocation.
#ifndef UKAI_CLI_COMMANDS_H_
#define UKAI_CLI_COMMANDS_H_

#include <ostream>
#include <span>
#include <string_view>

namespace CLI {
class App;
}  // namespace CLI

namespace ukai::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRunFailed = 3;

// Where a command writes; not owned.
struct CliIo {
  std::ostream* out;     // results
  std::ostream* err;     // diagnostics and the progress line
  bool err_is_terminal;  // draw a progress line on err
};

struct CommandContext {
  CliIo io;
  int exit_code = kExitOk;  // set by the command's callback
};

// Adds a command's options and callbacks to `command` (already named and described).
using RegisterFn = void (*)(CLI::App* command, CommandContext* context);

struct CommandEntry {
  std::string_view name;
  std::string_view description;
  RegisterFn register_fn;
};

// Every top-level command, in the order `ukai --help` lists them.
std::span<const CommandEntry> Commands();

// Parses `argv` and runs the chosen command; returns the exit status.
int RunCli(int argc, const char* const* argv, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_COMMANDS_H_
