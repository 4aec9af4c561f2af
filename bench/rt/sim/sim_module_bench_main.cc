// ukai_sim_module_bench: the sim module's speed (docs/sim-module.md): simulated small
// messages per second of wall time with 8 and 16 runtimes on a 4x4 torus (one process,
// communication only), beside the same program over shm (runtimes in one process, the
// same sends). Each runtime sends kMessages RSRs of 8 bytes to the next one (a ring);
// the figure is messages delivered / wall seconds from the first send to the last handler.
// Prints one table; the target is 100 k simulated messages per second.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rt/core/virtual_time.h"
#include "rt/sim_machine/sim_machine.h"
#include "ukai/ukai.hpp"

namespace {

using ukai::rt::Buffer;
using ukai::rt::HandlerId;
using ukai::rt::HandlerKind;
using ukai::rt::Rsr;
using ukai::rt::Runtime;
using ukai::rt::RuntimeOptions;

constexpr int kMessages = 5000;

struct Figure {
  double wall_s = 0;
  double per_second = 0;
  double simulated_us = 0;
};

bool RunRing(const std::string& module, int procs, Figure* out) {
  std::shared_ptr<ukai::rt::SimFabric> machine;
  if (module == "sim") {
    auto m = ukai::rt::NewSimFabricFromString(
        "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n[router]\nclock_mhz = 1000\n"
        "[routing]\nalgorithm = \"dor\"\n[sim]\ncpu_scale = 0.0\n",
        "bench.toml", {}, procs);
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
      return false;
    }
    machine = *m;
  }
  std::vector<std::unique_ptr<Runtime>> rts;
  std::vector<ukai::rt::Endpoint*> eps;
  std::atomic<int64_t> got{0};
  for (int i = 0; i < procs; ++i) {
    RuntimeOptions o;
    o.bootstrap = "single";
    o.modules = {module};
    o.sim_fabric = machine;
    o.handler_threads = 1;
    o.spin_us = 0;
    auto rt = Runtime::Init(o);
    if (!rt.ok()) {
      std::fprintf(stderr, "%s\n", rt.status().ToString().c_str());
      return false;
    }
    rts.push_back(std::move(*rt));
    auto ep = (*rts.back()->CreateContext({}))->CreateEndpoint();
    (void)(*ep)->RegisterHandler("m", HandlerKind::kNonThreaded, [&](Rsr&) { ++got; });
    eps.push_back(*ep);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kMessages; ++k) {
    for (int i = 0; i < procs; ++i) {
      Buffer b;
      b.PutU64(k);
      (void)rts[i]->SendRsr(std::move(b), eps[(i + 1) % procs]->MakeStartpoint(),
                            HandlerId::Of("m"));
    }
  }
  const int64_t total = int64_t{kMessages} * procs;
  // A wait in the runtime, as a program's would be (under sim each round tells the machine
  // that this thread still waits: a sleep between rounds would pace the simulation).
  while (got.load() < total) {
    if (rts[0]->Progress() == 0) std::this_thread::yield();
  }
  out->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out->per_second = double(total) / out->wall_s;
  if (machine) out->simulated_us = double(rts[0]->Now().count()) / 1000.0;
  for (auto& rt : rts) (void)rt->Finalize();
  return true;
}

}  // namespace

int main() {
  std::printf("sim module: %d RSRs of 8 bytes per runtime round a ring, one process\n", kMessages);
  std::printf("%-6s %5s %10s %14s %14s\n", "module", "procs", "wall_s", "messages_per_s",
              "simulated_us");
  for (int procs : {8, 16}) {
    for (const char* module : {"sim", "shm"}) {
      Figure f;
      if (!RunRing(module, procs, &f)) return 1;
      std::printf("%-6s %5d %10.3f %14.0f %14.1f\n", module, procs, f.wall_s, f.per_second,
                  f.simulated_us);
    }
  }
  return 0;
}
