// Runs the `ukai` command line in-process for tests: exit status, stdout and stderr.
#ifndef UKAI_TESTS_CLI_CLI_RUN_H_
#define UKAI_TESTS_CLI_CLI_RUN_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace ukai::cli {

struct CliRun {
  int code;
  std::string out, err;
};

// `args` excludes the program name.
inline CliRun Cli(std::vector<const char*> args) {
  args.insert(args.begin(), "ukai");
  std::ostringstream out, err;
  int code = RunCli(static_cast<int>(args.size()), args.data(), CliIo{&out, &err, false});
  return {code, out.str(), err.str()};
}

}  // namespace ukai::cli

#endif  // UKAI_TESTS_CLI_CLI_RUN_H_
