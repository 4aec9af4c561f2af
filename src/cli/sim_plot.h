// `ukai sim plot RESULTS -o FILE.png`: draws the results of `ukai sim run` (CSV or JSON
// Lines) with matplotlib, by running ukai_sim_plot.py (installed beside the `ukai`
// executable; the build copies it there too) with a Python 3 that has matplotlib.
//
// Which Python: $UKAI_PYTHON when set (and only it), else /usr/bin/python3 (Debian's, where
// python3-matplotlib installs), else `python3` on PATH; each is tried with
// `-c "import matplotlib"` and the first that succeeds is used.
//
// Thread safety: spawns and waits for child processes; no shared state.
#ifndef UKAI_CLI_SIM_PLOT_H_
#define UKAI_CLI_SIM_PLOT_H_

#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/status.h"

namespace ukai::cli {

struct SimPlotOptions {
  std::string results_path;  // CSV or JSON Lines written by `ukai sim run`
  std::string out_path;      // the PNG to write
  std::string title;         // "" = the results file's name
};

// The Python interpreters to try, in order (see the file comment); `env_python` is the
// value of $UKAI_PYTHON or nullptr.
std::vector<std::string> PythonCandidates(const char* env_python);

// The first of `candidates` that can `import matplotlib`; kNotFound naming every one tried.
Result<std::string> FindPythonWithMatplotlib(const std::vector<std::string>& candidates);

// ukai_sim_plot.py beside the running executable; kNotFound naming the path looked at.
Result<std::string> FindPlotScript();

// Runs the plot; the script's diagnostics go to io.err. Exit status: kExitOk, kExitUsage
// (bad results file, no Python with matplotlib, script missing).
int PlotSim(const SimPlotOptions& options, const CliIo& io);

}  // namespace ukai::cli

#endif  // UKAI_CLI_SIM_PLOT_H_
