// The modules the conformance suite runs over (one line each; RT-B adds shm and mpi).
#ifndef UKAI_TESTS_RT_CONFORMANCE_MODULES_H_
#define UKAI_TESTS_RT_CONFORMANCE_MODULES_H_

namespace ukai::rt::testing {

struct ConformanceModule {
  const char* name;
  bool multi_runtime_in_process;  // several Runtime objects of one process can use it
  bool multi_process;             // peers in other processes (failure tests fork peers)
};

inline constexpr ConformanceModule kConformanceModules[] = {
    {"inproc", true, false},
    {"tcp", true, true},
    {"shm", true, true},
    {"sim", true, false},  // runtimes on one simulated machine (docs/sim-module.md)
};

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_CONFORMANCE_MODULES_H_
