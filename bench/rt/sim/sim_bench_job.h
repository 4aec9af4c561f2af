// Runtimes of one process on one simulated machine, for the benchmarks of bench/rt/sim/
// (docs/sim-module.md, docs/collectives.md): a machine from config text, one runtime per
// process (the i-th on node i), each with one context. Times are simulated (Runtime::Now);
// with sim.cpu_scale = 0 they are the same on every run.
//
// Ownership: SimBenchJob owns its runtimes (finalized in the destructor) and shares the
// machine. Thread safety: build and destroy it on one thread; the runtimes are thread safe.
#ifndef UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_
#define UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// One thread per runtime of a SimBenchJob, alive from the first runtime call to the end,
// as the main threads of an SPMD program's processes are, so that the simulated times of
// each Run() are the same on every run (with cpu_scale = 0). A thread that starts a step
// late in wall time must not find its runtime's clock moved on by what the others sent it
// meanwhile: so between steps each thread waits in the runtime (Progress) until the
// machine is quiet (SimFabric::Quiet: nothing in flight), then every thread makes a
// runtime call and waits outside the runtime (holding its runtime at its clock: the
// machine waits for it) until all do; only then does the step start. Threads made afresh
// for each step, or released in wall-time order, gave times that differed by up to 15%.
// Thread safety: Run from one thread (not a member's).
class MemberThreads {
 public:
  explicit MemberThreads(SimBenchJob& job) : job_(job) {
    for (int r = 0; r < job.size(); ++r) threads_.emplace_back([this, r] { Loop(r); });
  }
  ~MemberThreads() {
    Command(kStop, nullptr);
    for (auto& t : threads_) t.join();
  }
  // Runs fn(rank) on every member's thread; returns when all returned.
  void Run(const std::function<void(int)>& fn) {
    while (!job_.fabric().Quiet()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    Command(kHold, nullptr);
    Command(kStep, &fn);
  }

 private:
  enum Phase { kHold, kStep, kStop };
  void Command(Phase p, const std::function<void(int)>* fn) {
    std::unique_lock<std::mutex> lock(mu_);
    phase_ = p;
    fn_ = fn;
    done_ = 0;
    ++generation_;
    cv_.notify_all();
    if (p == kStop) return;
    cv_.wait(lock, [&] { return done_ == static_cast<int>(threads_.size()); });
  }
  void Loop(int r) {
    Runtime& rt = job_.rt(r);
    (void)rt.Progress();  // a thread of the simulation from now on
    uint64_t seen = 0;
    for (;;) {
      // The next command, waiting in the runtime (the machine delivers what is in flight).
      while (generation_.load() == seen) {
        if (rt.Progress() == 0) std::this_thread::yield();
      }
      std::unique_lock<std::mutex> lock(mu_);
      seen = generation_.load();
      if (phase_ == kStop) return;
      if (phase_ == kHold) {
        lock.unlock();
        (void)rt.Now();  // a call: it holds its runtime at its clock from here
        lock.lock();
        if (++done_ == static_cast<int>(threads_.size())) cv_.notify_all();
        // Outside the runtime (holding) until the step starts.
        cv_.wait(lock, [&] { return generation_.load() != seen; });
        seen = generation_.load();
      }
      const std::function<void(int)>* fn = fn_;
      lock.unlock();
      if (fn != nullptr) (*fn)(r);
      lock.lock();
      if (++done_ == static_cast<int>(threads_.size())) cv_.notify_all();
    }
  }

  SimBenchJob& job_;
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void(int)>* fn_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  Phase phase_ = kStep;
  int done_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace ukai::rt::bench

#endif  // UKAI_BENCH_RT_SIM_SIM_BENCH_JOB_H_
