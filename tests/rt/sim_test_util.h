// Simulated machines for the runtime's tests of the sim module (docs/sim-module.md).
#ifndef UKAI_TESTS_RT_SIM_TEST_UTIL_H_
#define UKAI_TESTS_RT_SIM_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rt/sim_machine/sim_machine.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::testing {

// The machine of config `text`; null (and a test failure) on error.
inline std::shared_ptr<SimFabric> SimFabricOf(const std::string& text, int processes = 0) {
  Result<std::shared_ptr<SimFabric>> f = NewSimFabricFromString(text, "test.toml", {}, processes);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : nullptr;
}

// A 4x4 torus (dimension-order routing, 16-byte flits, 1 GHz), communication only
// (sim.cpu_scale = 0), with `extra` config lines appended (inside the [sim] table).
inline std::shared_ptr<SimFabric> SimTestFabric(const std::string& extra = "", int processes = 0) {
  return SimFabricOf(
      "[network]\ntopology = \"torus\"\nk = 4\nn = 2\n"
      "[router]\nflit_bytes = 16\nclock_mhz = 1000\n"
      "[routing]\nalgorithm = \"dor\"\n"
      "[sim]\ncpu_scale = 0.0\n" +
          extra,
      processes);
}

// The simulated machine (SimTestFabric) of the runtimes a fixture starts with one inproc
// fabric: the suites parameterised over the modules pass every runtime the same inproc
// fabric, so it names their machine too (kept while runtimes use it).
inline std::shared_ptr<SimFabric> SimFabricFor(const std::shared_ptr<InprocFabric>& key) {
  static std::mutex mu;
  static std::map<const InprocFabric*, std::weak_ptr<SimFabric>> machines;
  std::lock_guard<std::mutex> lock(mu);
  std::erase_if(machines, [](const auto& e) { return e.second.expired(); });
  std::shared_ptr<SimFabric> f = machines[key.get()].lock();
  if (!f) {
    f = SimTestFabric();
    machines[key.get()] = f;
  }
  return f;
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_SIM_TEST_UTIL_H_
