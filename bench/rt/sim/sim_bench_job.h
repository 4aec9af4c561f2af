// Runtimes of one process on one simulated machine, for the benchmarks of bench/rt/sim/
// (docs/sim-module.md, docs/collectives.md): a machine from config text, one runtime per
// process (the i-th on node i), each with one context. Times are simulated (Runtime::Now);
// with sim.cpu_scale = 0 they are the same on every run.
//
// Ownership: SimBenchJob owns its runtimes (finalized in the destructor) and shares the
// machine. Thread safety: build and destroy it on one thread; the runtimes are thread safe.
#ifndef UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_
#define UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "rt/sim_machine/sim_machine.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::bench {

class SimBenchJob {
 public:
  static constexpr ContextId kContextId = 7;
  // Null (after printing why to stderr) when the machine or a runtime cannot be made.
  static std::unique_ptr<SimBenchJob> Start(const std::string& config, int processes) {
    Result<std::shared_ptr<SimFabric>> m =
        NewSimFabricFromString(config, "bench.toml", {}, processes);
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", m.status().ToString().c_str());
      return nullptr;
    }
    auto job = std::unique_ptr<SimBenchJob>(new SimBenchJob(*m));
    for (int i = 0; i < processes; ++i) {
      RuntimeOptions o;
      o.bootstrap = "single";
      o.modules = {"sim"};
      o.sim_fabric = job->fabric_;
      o.handler_threads = 1;
      Result<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
      Result<Context*> ctx = rt.ok() ? (*rt)->CreateContext({.name = "bench", .id = kContextId})
                                     : Result<Context*>(rt.status());
      if (!ctx.ok()) {
        std::fprintf(stderr, "runtime %d: %s\n", i, ctx.status().ToString().c_str());
        return nullptr;
      }
      job->rts_.push_back(std::move(*rt));
      job->ctxs_.push_back(*ctx);
      job->members_.emplace_back(job->rts_.back()->shared_descriptors(), kContextId, 1);
    }
    return job;
  }
  ~SimBenchJob() {
    for (auto& rt : rts_) (void)rt->Finalize();
  }

  SimFabric& fabric() { return *fabric_; }
  Runtime& rt(int i) { return *rts_[i]; }
  Context& ctx(int i) { return *ctxs_[i]; }
  // A startpoint to each runtime's context (for Group::FromStartpoints).
  const std::vector<Startpoint>& members() const { return members_; }
  int size() const { return static_cast<int>(rts_.size()); }
  // The machine's clock rate (cycles per microsecond).
  double cycles_per_us() const { return fabric_->clock_mhz(); }

 private:
  explicit SimBenchJob(std::shared_ptr<SimFabric> f) : fabric_(std::move(f)) {}
  std::shared_ptr<SimFabric> fabric_;
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<Context*> ctxs_;
  std::vector<Startpoint> members_;
};

}  // namespace ukai::rt::bench

#endif  // UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_
