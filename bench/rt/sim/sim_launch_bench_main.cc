// ukai_sim_launch_bench: `ukai launch --sim` speed (docs/sim-module.md, "Separate processes"):
// simulated small messages per second of wall time with 8 and 16 PROCESSES on a 4x4 torus
// (communication only), beside the same program launched over shm. Each process sends
// kMessages RSRs of 8 bytes to the next rank (a ring) and waits in the runtime until it got
// as many; the launcher is rt::Launch (as `ukai launch`), the worker is this program.
// Wall time is the whole job's (start to last exit); a job of 0 messages is timed too, and
// the rate is messages / (wall - wall of the empty job): the start-up (fork, exec, runtime
// Init, the rendez-vous) is not counted. The overhead against shm is the ratio of the
// whole jobs' wall times (over shm the messages take about as long as the start-up, so a
// difference of the two would be noise). Target of issue 19: 100 k messages per second.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rt/launch/launcher.h"
#include "rt/sim_machine/sim_machine.h"
#include "ukai/ukai.hpp"

namespace {

namespace rt = ukai::rt;
constexpr int kMessages = 2000;
constexpr char kMachine[] =
    "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[router]\nclock_mhz = 1000\n"
    "[routing]\nalgorithm = \"dor\"\n[sim]\ncpu_scale = 0.0\n";

int Worker(int argc, char** argv) {
  const int messages = std::atoi(argv[2]);
  auto made = rt::Runtime::Init(argc, argv);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  std::atomic<int> got{0};
  auto ctx = r.CreateContext({.name = "ring", .id = 1, .init = [&](rt::Context& c) {
                                auto ep = c.CreateEndpoint({.id = 1});
                                if (!ep.ok()) return ep.status();
                                return (*ep)
                                    ->RegisterHandler("m", rt::HandlerKind::kNonThreaded,
                                                      [&](rt::Rsr&) { ++got; })
                                    .status();
                              }});
  if (!ctx.ok()) return 1;
  auto next = r.WorldStartpoint((r.rank() + 1) % r.size(), 1, 1);
  if (!next.ok() || !r.Barrier().ok()) return 1;
  for (int i = 0; i < messages; ++i) {
    rt::Buffer b;
    b.PutU64(static_cast<uint64_t>(i));
    if (!r.SendRsr(std::move(b), *next, rt::HandlerId::Of("m")).ok()) return 1;
  }
  while (got.load() < messages) r.Progress();  // a wait in the runtime
  if (!r.Barrier().ok()) return 1;
  return r.Finalize().ok() ? 0 : 1;
}

// Wall seconds of one job; frames through the simulated network in *frames.
double Job(const std::string& module, int procs, int messages, uint64_t* frames) {
  rt::LaunchOptions o;
  o.processes = procs;
  o.timeout_s = 600;
  o.command = {"/proc/self/exe", "--worker", std::to_string(messages)};
  std::shared_ptr<rt::SimFabric> machine;
  if (module == "sim") {
    auto m = rt::NewSimFabricFromString(kMachine, "bench.toml", {}, procs);
    if (!m.ok()) return std::fprintf(stderr, "%s\n", m.status().ToString().c_str()), -1;
    machine = *m;
    o.sim = machine;
  } else {
    o.modules = {module};
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto code = rt::Launch(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!code.ok() || *code != 0) {
    std::fprintf(
        stderr, "job over %s with %d processes failed: %s\n", module.c_str(), procs,
        code.ok() ? ("exit " + std::to_string(*code)).c_str() : code.status().ToString().c_str());
    return -1;
  }
  if (machine && frames != nullptr) *frames = machine->Counters()["frames_delivered"];
  return wall;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--worker") return Worker(argc, argv);
  std::printf(
      "ukai_sim_launch_bench: %d RSRs of 8 bytes per process round a ring, 4x4 torus "
      "(dor, cpu_scale 0) under launch --sim, beside launch --modules shm\n",
      kMessages);
  std::printf("%6s %10s %10s %10s %10s %12s %12s %9s\n", "procs", "messages", "sim_s", "sim_0_s",
              "shm_s", "shm_0_s", "sim_msg/s", "sim/shm");
  bool ok = true;
  for (int procs : {8, 16}) {
    uint64_t frames = 0, empty_frames = 0;
    const double sim = Job("sim", procs, kMessages, &frames);
    const double sim0 = Job("sim", procs, 0, &empty_frames);
    const double shm = Job("shm", procs, kMessages, nullptr);
    const double shm0 = Job("shm", procs, 0, nullptr);
    if (sim < 0 || sim0 < 0 || shm < 0 || shm0 < 0) {
      ok = false;
      continue;
    }
    const double rate = double(frames - empty_frames) / std::max(1e-9, sim - sim0);
    const double ratio = sim / std::max(1e-9, shm);  // whole jobs (start-up included)
    std::printf("%6d %10llu %10.3f %10.3f %10.3f %12.3f %12.0f %9.1f\n", procs,
                static_cast<unsigned long long>(frames - empty_frames), sim, sim0, shm, shm0, rate,
                ratio);
  }
  std::printf(
      "sim_msg/s = messages / (sim_s - sim_0_s); sim/shm = sim_s / shm_s (whole jobs); "
      "target: 100000 simulated messages per wall second\n");
  return ok ? 0 : 1;
}
