// The `ukai` executable: see cli/commands.h for the commands and exit statuses.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "core/progress.h"

int main(int argc, char** argv) {
  ukai::cli::CliIo io{&std::cout, &std::cerr, ukai::ProgressLine::IsTerminal(STDERR_FILENO)};
  return ukai::cli::RunCli(argc, argv, io);
}
