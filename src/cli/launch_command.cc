// The CLI11 side of `ukai launch`: options only; the work is in src/rt/launch/launcher.cc.
#include "cli/launch_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "rt/launch/launcher.h"

namespace ukai::cli {

void RegisterLaunchCommand(CLI::App* launch, CommandContext* context) {
  auto options = std::make_shared<rt::LaunchOptions>();
  launch->add_option("-n,--processes", options->processes, "number of processes to start")
      ->required()
      ->check(CLI::Range(1, 1024));
  launch
      ->add_option("--modules", options->modules,
                   "communication modules for every process, e.g. shm,tcp (UKAI_MODULES)")
      ->delimiter(',')
      ->allow_extra_args(false);  // one value per --modules: PROGRAM is not a module
  launch->add_flag("--trace", options->trace, "trace the launch and the runtime's module choice");
  launch->add_flag("--keep-going", options->keep_going,
                   "a failing process does not stop the others (they get the peer event and "
                   "go on); report who died and exit non-zero at the end");
  launch
      ->add_option("--otf2", options->otf2,
                   "record the job's communication into the OTF2 archive DIR/traces.otf2 "
                   "(docs/otf2-recording.md); DIR must hold no archive yet")
      ->type_name("DIR");
  launch->add_option("--timeout", options->timeout_s, "kill the job after S seconds (exit 124)")
      ->type_name("S")
      ->check(CLI::NonNegativeNumber);
  // Everything from PROGRAM on belongs to the program, options included.
  launch->prefix_command();
  launch->footer(
      "PROGRAM [ARGS...] follows the options; every process gets UKAI_BOOTSTRAP=launcher, "
      "UKAI_RANK, UKAI_SIZE, UKAI_LAUNCH_ADDR (and UKAI_MODULES, UKAI_TRACE, UKAI_OTF2). Exit "
      "status: 0 "
      "when all succeed, else the first failing process's code (128 + signal; the others are "
      "stopped unless --keep-going), 124 on "
      "--timeout, 2 usage error (an --otf2 DIR that holds an archive too), 3 when the job "
      "cannot start or its OTF2 archive cannot be written or merged.");
  launch->callback([launch, options, context] {
    options->command = launch->remaining();
    if (options->command.empty()) {
      *context->io.err << "ukai launch: no PROGRAM given (usage: ukai launch -n N PROGRAM ARGS)\n";
      context->exit_code = kExitUsage;
      return;
    }
    Result<int> code = rt::Launch(*options);
    if (!code.ok()) {
      *context->io.err << code.status().ToString() << "\n";
      context->exit_code =
          code.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitRunFailed;
      return;
    }
    context->exit_code = *code;
  });
}

}  // namespace ukai::cli
