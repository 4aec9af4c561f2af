// The CLI11 side of `ukai sim`: options only; the work is in sim_run.cc.
#include "cli/sim_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "cli/sim_check.h"
#include "cli/sim_plot.h"
#include "cli/sim_routes.h"
#include "cli/sim_run.h"
#include "cli/sim_tables.h"
#include "sim/experiment/run.h"

namespace ukai::cli {

void RegisterSimCommand(CLI::App* sim, CommandContext* context) {
  sim->require_subcommand(1);

  CLI::App* run = sim->add_subcommand("run", "run every point of a config and print the results");
  auto options = std::make_shared<SimRunOptions>();
  run->add_option("config", options->config_path, "config file (keys: ukai sim describe)")
      ->required();
  run->add_option("--set", options->sets,
                  "override a config key, e.g. --set router.vcs=4 or "
                  "--set traffic.rate=[0.1,0.2] (value in TOML; repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  run->add_option("--format", options->format,
                  "output format: table, csv or json (JSON Lines); default: the config "
                  "reader's (table for TOML)");
  run->add_option("--out", options->out_path, "write the results to FILE instead of stdout")
      ->type_name("FILE");
  run->add_option("--threads", options->threads,
                  "threads evaluating partitions of the network, as --set run.threads=N "
                  "(0: one per core; under mpirun, per rank)")
      ->type_name("N")
      ->check(CLI::Range(0, 4096));
  run->callback([options, context] {
    context->exit_code = RunSimPoints(
        *options,
        [](const sim::SimConfig& c, const sim::ProgressFn& p) { return sim::RunPoint(c, p); },
        context->io);
  });

  CLI::App* check =
      sim->add_subcommand("check",
                          "prove the routing's escape/recovery sub-function deadlock-free (channel "
                          "dependency graph acyclic and connected) or print a cycle / dead end");
  auto check_options = std::make_shared<SimCheckOptions>();
  check->add_option("config", check_options->config_path, "config file")->required();
  check->add_option("--set", check_options->sets, "override a config key (as for run)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  check->callback(
      [check_options, context] { context->exit_code = CheckSim(*check_options, context->io); });

  CLI::App* routes = sim->add_subcommand(
      "routes", "print the route tables of source routing (what each NIC writes into headers)");
  auto routes_options = std::make_shared<SimRoutesOptions>();
  routes->add_option("config", routes_options->config_path, "TOML config file")->required();
  routes->add_option("--set", routes_options->sets, "override a config key (as for run)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  routes->add_option("--from", routes_options->from, "only the routes of this end node (name)")
      ->type_name("NODE");
  routes->add_option("--format", routes_options->format, "text, csv or json (JSON Lines)")
      ->capture_default_str();
  routes->callback([routes_options, context] {
    context->exit_code = PrintRoutes(*routes_options, context->io);
  });

  // `ukai sim tables`: the controller's tables after every event (sim_tables.h).
  CLI::App* tables = sim->add_subcommand(
      "tables",
      "run a config and print, after every event, its controller's tables (full mesh: the "
      "communication and link management tables)");
  auto t = std::make_shared<SimTablesOptions>();
  tables->add_option("config", t->config_path, "config file (network.topology = \"fullmesh\")")
      ->required();
  tables->add_option("--set", t->sets, "override a config key (as for run)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  tables->add_option("--format", t->format, "text or json (JSON Lines, one object per event)")
      ->capture_default_str();
  tables->add_flag("--all-links", t->all_links,
                   "list every link of the link management table, idle ones too");
  tables->callback([t, context] { context->exit_code = PrintSimTables(*t, context->io); });

  CLI::App* describe =
      sim->add_subcommand("describe",
                          "print every machine model's config keys (type, unit, default, range, "
                          "doc) and result fields (unit, meaning)");
  auto markdown = std::make_shared<bool>(false);
  describe->add_flag("--markdown", *markdown, "print Markdown tables (as in docs/config.md)");
  describe->callback(
      [markdown, context] { context->exit_code = DescribeSim(*markdown, context->io); });

  // `ukai sim plot`: latency and accepted load against offered load (or full-mesh time
  // against size) as a PNG, drawn by matplotlib (sim_plot.h).
  CLI::App* plot = sim->add_subcommand(
      "plot", "draw the results of `ukai sim run` (CSV or JSON) as a PNG with matplotlib");
  auto p = std::make_shared<SimPlotOptions>();
  plot->add_option("results", p->results_path, "results file (--format csv or json)")->required();
  plot->add_option("-o,--out", p->out_path, "PNG file to write")->required()->type_name("FILE");
  plot->add_option("--title", p->title, "plot title (default: the results file's name)");
  plot->callback([p, context] { context->exit_code = PlotSim(*p, context->io); });

  // `ukai sim gen-pcap`: a valid synthetic capture for the gateway model (docs/gateway.md).
  CLI::App* gen = sim->add_subcommand(
      "gen-pcap", "write a synthetic Ethernet capture addressed to the compute nodes' MACs");
  auto g = std::make_shared<GenPcapOptions>();
  gen->add_option("out", g->out, "pcap file to write")->required();
  gen->add_option("--nodes", g->nodes, "destination MACs 02:00:00:00:HH:LL of nodes 0..N-1")
      ->capture_default_str();
  gen->add_option("--frames", g->frames, "number of frames")->capture_default_str();
  gen->add_option("--bytes", g->bytes, "frame size without FCS (22..9018)")->capture_default_str();
  gen->add_option("--rate", g->rate, "frames per cycle (Poisson arrivals)")->capture_default_str();
  gen->add_option("--cycles-per-second", g->cycles_per_second, "timestamp scale")
      ->capture_default_str();
  gen->add_flag("--fcs", g->fcs, "append each frame's FCS");
  gen->add_option("--bad-fcs", g->bad_fcs, "share of frames with a wrong FCS (needs --fcs)")
      ->capture_default_str();
  gen->add_option("--seed", g->seed, "random seed")->capture_default_str();
  gen->callback([g, context] { context->exit_code = GenPcap(*g, context->io); });
}

}  // namespace ukai::cli
