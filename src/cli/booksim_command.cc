// The CLI11 side of `ukai booksim`: options only; the work is in sim_run.cc.
#include "cli/booksim_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "cli/sim_run.h"
#include "sim/experiment/run.h"

namespace ukai::cli {

void RegisterBooksimCommand(CLI::App* command, CommandContext* context) {
  auto options = std::make_shared<SimRunOptions>();
  options->booksim = true;
  command->add_option("config", options->config_path, "BookSim2 config file")->required();
  command
      ->add_option("overrides", options->booksim_overrides,
                   "BookSim2 key=value overrides (as BookSim2's command line takes them)")
      ->type_name("KEY=VALUE");
  command->add_option("--format", options->format,
                      "output format: booksim (BookSim2's summary lines, the default), table, "
                      "csv or json");
  command->add_option("--out", options->out_path, "write the results to FILE instead of stdout")
      ->type_name("FILE");
  command->callback([options, context] {
    context->exit_code = RunSimPoints(
        *options,
        [](const sim::SimConfig& c, const sim::ProgressFn& p) { return sim::RunPoint(c, p); },
        context->io);
  });
}

}  // namespace ukai::cli
