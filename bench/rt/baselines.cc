#include "baselines.h"

#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

extern char** environ;

namespace ukai::bench {

Result<std::string> RunCapture(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return Status::IoError("popen failed for: " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0) {
    const std::string tail = out.size() > 600 ? out.substr(out.size() - 600) : out;
    return Status::Unavailable("command failed (status " + std::to_string(rc) + "): " + command +
                               "\n" + tail);
  }
  return out;
}

std::string SelfDirectory() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

double Median(std::vector<double>& samples) {
  if (samples.empty()) return 0;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

std::string OpenMpiSettings(const std::string& btl) { return "--mca pml ob1 --mca btl " + btl; }

std::string MpirunPrefix(const std::string& mca) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun -n 2 "
         "--oversubscribe --bind-to core " +
         mca;
}

Figures RunOpenMpi(const std::string& btl, const std::vector<size_t>& sizes, double seconds,
                   bool thread_multiple, bool fresh_buffers) {
  Figures f;
  const std::string helper = SelfDirectory() + "/ukai_rt_mpi_pingpong";
  if (access(helper.c_str(), X_OK) != 0) {
    f.note = "no " + helper + " (Open MPI not found at build time)";
    return f;
  }
  std::string list;
  for (size_t s : sizes) {
    if (!list.empty()) list += ',';
    list += std::to_string(s);
  }
  char budget[32];
  std::snprintf(budget, sizeof budget, "%.3f", seconds);
  const std::string cmd = MpirunPrefix(OpenMpiSettings(btl)) + " " + helper + " -s " + list +
                          " -t " + budget + (thread_multiple ? " -m 1" : "") +
                          (fresh_buffers ? " -f 1" : "");
  Result<std::string> out = RunCapture(cmd);
  if (!out.ok()) {
    f.note = out.status().message();
    return f;
  }
  std::istringstream in(*out);
  std::string kind;
  while (in >> kind) {
    size_t size = 0;
    double value = 0, count = 0;
    if ((kind == "lat" || kind == "bw") && (in >> size >> value >> count)) {
      (kind == "lat" ? f.latency_us : f.bandwidth_gbs)[size] = value;
    } else {
      std::string rest;
      std::getline(in, rest);
    }
  }
  if (f.latency_us.empty()) f.note = "no figures in the output of: " + cmd;
  return f;
}

namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

// One ucx_perftest run: a server in the background, the client in the foreground (retried
// while the server is not listening yet). Returns the client's CSV line fields.
Result<std::vector<double>> UcxOnce(const std::string& tls, const std::string& args) {
  const int port = FreePort();
  const std::string env = "UCX_TLS=" + tls + " ";
  const std::string server =
      env + "timeout 60 ucx_perftest -p " + std::to_string(port) + " >/dev/null 2>&1";
  pid_t pid = 0;
  const char* argv[] = {"/bin/sh", "-c", server.c_str(), nullptr};
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
    return Status::IoError("cannot start ucx_perftest server");
  }
  Result<std::string> out = Status::Unavailable("not run");
  for (int attempt = 0; attempt < 30; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt == 0 ? 100 : 200));
    out = RunCapture(env + "timeout 60 ucx_perftest 127.0.0.1 -p " + std::to_string(port) +
                     " -f -v " + args);
    if (out.ok()) break;
  }
  int status = 0;
  if (!out.ok()) kill(pid, SIGTERM);
  waitpid(pid, &status, 0);
  if (!out.ok()) return out.status();
  // The last line holds the figures: iterations,p50_lat,avg_lat,overall_lat,avg_bw,...
  std::istringstream lines(*out);
  std::string line, last;
  while (std::getline(lines, line)) {
    line.erase(0, line.find_first_not_of(' '));
    if (!line.empty() && line[0] >= '0' && line[0] <= '9') last = line;
  }
  std::vector<double> fields;
  std::istringstream csv(last);
  std::string cell;
  while (std::getline(csv, cell, ',')) fields.push_back(std::atof(cell.c_str()));
  if (fields.size() < 6) return Status::ParseError("no CSV figures from ucx_perftest " + args);
  return fields;
}

Figures RunUcx(const std::string& tls, const std::vector<size_t>& sizes, bool quick) {
  Figures f;
  if (RunCapture("command -v ucx_perftest").status().code() != StatusCode::kOk) {
    f.note = "ucx_perftest not installed (Debian ucx-utils)";
    return f;
  }
  for (size_t s : sizes) {
    // Iterations sized to ~0.2 s each at UCX speeds.
    const size_t lat_iters =
        std::clamp<size_t>((quick ? 20000000 : 100000000) / (s + 500), 200, quick ? 20000 : 100000);
    const size_t bw_iters = std::clamp<size_t>((quick ? 500000000 : 3000000000) / (s + 500), 200,
                                               quick ? 20000 : 200000);
    const std::string sz = " -s " + std::to_string(s);
    auto lat = UcxOnce(tls, "-t tag_lat" + sz + " -n " + std::to_string(lat_iters));
    auto bw = UcxOnce(tls, "-t ucp_am_bw" + sz + " -n " + std::to_string(bw_iters));
    if (!lat.ok() || !bw.ok()) {
      f.note = (!lat.ok() ? lat.status() : bw.status()).message();
      break;
    }
    f.latency_us[s] = (*lat)[1];  // 50th percentile
    // ucx_perftest's "MB/s" is 2^20 bytes per second.
    f.bandwidth_gbs[s] = (*bw)[5] * 1048576.0 / 1e9;  // overall bandwidth
  }
  return f;
}

}  // namespace ukai::bench
