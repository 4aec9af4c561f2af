#include "cli/sim_plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace ukai::cli {
namespace {

constexpr char kScriptName[] = "ukai_sim_plot.py";

// Runs argv[0] (searched on PATH) with `argv`; its stdout and stderr go to `output` when
// non-null, else to /dev/null. Returns the exit status, or -1 when it could not start or
// was killed by a signal.
int Spawn(const std::vector<std::string>& argv, std::string* output) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string text;
  std::array<char, 4096> buf;
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buf.data(), buf.size());
    if (n > 0) {
      text.append(buf.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  if (output != nullptr) *output = std::move(text);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::vector<std::string> PythonCandidates(const char* env_python) {
  if (env_python != nullptr && env_python[0] != '\0') return {env_python};
  return {"/usr/bin/python3", "python3"};
}

Result<std::string> FindPythonWithMatplotlib(const std::vector<std::string>& candidates) {
  for (const std::string& python : candidates) {
    if (Spawn({python, "-c", "import matplotlib"}, nullptr) == 0) return python;
  }
  return Status::NotFound(
      fmt::format("needs Python 3 with matplotlib (Debian: apt install python3-matplotlib); "
                  "none of {} can import matplotlib (set UKAI_PYTHON to choose one)",
                  fmt::join(candidates, ", ")));
}

Result<std::string> FindPlotScript() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::NotFound(fmt::format("cannot find the ukai executable: {}", ec.message()));
  const std::filesystem::path script = exe.parent_path() / kScriptName;
  if (!std::filesystem::is_regular_file(script, ec)) {
    return Status::NotFound(
        fmt::format("{} is missing (it is installed beside ukai)", script.string()));
  }
  return script.string();
}

int PlotSim(const SimPlotOptions& options, const CliIo& io) {
  Result<std::string> script = FindPlotScript();
  if (!script.ok()) {
    *io.err << "ukai sim plot: " << script.status().message() << '\n';
    return kExitUsage;
  }
  Result<std::string> python =
      FindPythonWithMatplotlib(PythonCandidates(std::getenv("UKAI_PYTHON")));
  if (!python.ok()) {
    *io.err << "ukai sim plot: " << python.status().message() << '\n';
    return kExitUsage;
  }
  std::vector<std::string> argv = {*python, *script, options.results_path, "-o", options.out_path};
  if (!options.title.empty()) {
    argv.push_back("--title");
    argv.push_back(options.title);
  }
  std::string output;
  const int rc = Spawn(argv, &output);
  *io.err << output;
  if (rc == 0) return kExitOk;
  if (rc < 0) *io.err << "ukai sim plot: " << *python << " " << *script << " did not finish\n";
  return kExitUsage;
}

}  // namespace ukai::cli
