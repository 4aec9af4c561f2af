// RunCli: the CLI11 application built from the command table (commands.cc).
#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace ukai::cli {

int RunCli(int argc, const char* const* argv, const CliIo& io) {
  CLI::App app("ukai: interconnection-network simulator and communication runtime", "ukai");
  app.require_subcommand(1);
  app.set_version_flag("--version", "ukai 0.1.0");
  CommandContext context{io};
  for (const CommandEntry& entry : Commands()) {
    CLI::App* command = app.add_subcommand(std::string(entry.name), std::string(entry.description));
    entry.register_fn(command, &context);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; everything else is a usage error.
    return app.exit(e, *io.out, *io.err) == 0 ? kExitOk : kExitUsage;
  }
  return context.exit_code;
}

}  // namespace ukai::cli
