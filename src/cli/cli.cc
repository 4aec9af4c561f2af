// RunCli: the CLI11 application built from the command table (commands.cc).
#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

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
  if (argc < 2) {
    *io.err << app.help() << std::flush;
    return kExitUsage;
  }
  // An unknown command word would otherwise be reported as "A subcommand is required".
  const std::string_view first = argv[1];
  if (first[0] != '-') {
    std::string known;
    bool found = false;
    for (const CommandEntry& entry : Commands()) {
      found = found || entry.name == first;
      known += known.empty() ? "" : ", ";
      known += entry.name;
    }
    if (!found) {
      *io.err << "ukai: unknown command '" << first << "' (known: " << known << ")\n"
              << "Run with --help for more information.\n"
              << std::flush;
      return kExitUsage;
    }
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
