// The CLI11 side of `ukai launch`: options only; the work is in src/rt/launch/launcher.cc.
#include "cli/launch_command.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli/sim_run.h"
#include "rt/launch/launcher.h"
#include "rt/sim_machine/sim_results.h"

namespace ukai::cli {
namespace {

struct SimLaunchOptions {
  std::string machine;            // --sim FILE
  std::vector<std::string> sets;  // --sim-set KEY=VALUE
  std::string out_path;           // --sim-out FILE
  std::string format;             // --format
};

// `ukai launch --sim`: the machine is checked before any process starts (exit 2 for a bad
// config, option or --sim-out file); the results follow the job.
void LaunchOnSimulatedMachine(rt::LaunchOptions options, const SimLaunchOptions& sim,
                              CommandContext* context) {
  auto fail = [context](int code, const std::string& message) {
    *context->io.err << "ukai launch: " << message << "\n";
    context->exit_code = code;
  };
  Result<output::Format> format = output::Format::kTable;
  if (!sim.format.empty()) format = output::ParseFormat(sim.format);
  if (!format.ok()) return fail(kExitUsage, "--format: " + format.status().message());
  std::ofstream out_file;
  if (!sim.out_path.empty()) {
    out_file.open(sim.out_path);
    if (!out_file) {
      return fail(kExitUsage, "--sim-out: cannot open '" + sim.out_path +
                                  "' for writing: " + std::strerror(errno));
    }
  }
  Result<rt::SimMachine> machine = rt::LoadSimMachine(sim.machine, sim.sets, options.processes);
  if (!machine.ok()) {
    return fail(kExitUsage, "--sim " + sim.machine + ": " + machine.status().ToString());
  }
  options.sim = machine->fabric;
  const auto started = std::chrono::steady_clock::now();
  Result<int> code = rt::Launch(options);
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!code.ok()) {
    *context->io.err << code.status().ToString() << "\n";
    context->exit_code =
        code.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitRunFailed;
    return;
  }
  context->exit_code = *code;
  rt::SimRunContext run = rt::CollectSimRun(*machine, options.processes);
  run.network.wall_seconds = wall_seconds;  // the launch's, start to the last exit
  const output::Record record = rt::SimRunRecord(run);
  std::unique_ptr<output::RecordWriter> summary =
      MakeRecordWriter(*format, context->io.out, rt::SimRunTableColumns(run));
  Status written = summary->Write(record);
  if (written.ok() && out_file.is_open()) {
    written = output::MakeJsonWriter(&out_file)->Write(record);
    out_file.flush();
    if (written.ok() && !out_file) written = Status::IoError("write failed");
    if (!written.ok()) written = written.WithContext("--sim-out " + sim.out_path);
  }
  if (!written.ok()) {
    *context->io.err << "ukai launch: " << written.ToString() << "\n";
    if (context->exit_code == 0) context->exit_code = kExitRunFailed;
  }
}

}  // namespace

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
  auto sim = std::make_shared<SimLaunchOptions>();
  launch
      ->add_option("--sim", sim->machine,
                   "run the processes on the simulated machine of this simulator config "
                   "(docs/sim-module.md): the launcher hosts the simulation, every process "
                   "uses the sim module")
      ->type_name("MACHINE.toml");
  launch
      ->add_option("--sim-set", sim->sets, "override a key of the --sim config (as sim run --set)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  launch
      ->add_option("--sim-out", sim->out_path,
                   "with --sim: write the results (program_time_us, finish_time_us, the "
                   "network's fields) to FILE as one JSON object")
      ->type_name("FILE");
  launch->add_option("--format", sim->format,
                     "with --sim: the printed summary as table (default), csv, json or booksim");
  // Everything from PROGRAM on belongs to the program, options included.
  launch->prefix_command();
  launch->footer(
      "PROGRAM [ARGS...] follows the options; every process gets UKAI_BOOTSTRAP=launcher, "
      "UKAI_RANK, UKAI_SIZE, UKAI_LAUNCH_ADDR (and UKAI_MODULES, UKAI_TRACE, UKAI_OTF2). Exit "
      "status: 0 "
      "when all succeed, else the first failing process's code (128 + signal; the others are "
      "stopped unless --keep-going), 124 on "
      "--timeout, 2 usage error (an --otf2 DIR that holds an archive too; with --sim a machine "
      "config that cannot be read or is wrong), 3 when the job cannot start, its OTF2 archive "
      "cannot be written or merged, or the simulation stopped (sim.stall_ms). With --sim every "
      "process also gets UKAI_SIM_FD and UKAI_SIM_RANK and the results are printed at the end.");
  launch->callback([launch, options, sim, context] {
    options->command = launch->remaining();
    if (options->command.empty()) {
      *context->io.err << "ukai launch: no PROGRAM given (usage: ukai launch -n N PROGRAM ARGS)\n";
      context->exit_code = kExitUsage;
      return;
    }
    if (!sim->machine.empty()) return LaunchOnSimulatedMachine(*options, *sim, context);
    if (!sim->sets.empty() || !sim->out_path.empty() || !sim->format.empty()) {
      *context->io.err << "ukai launch: --sim-set, --sim-out and --format need --sim\n";
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
