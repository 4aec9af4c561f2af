// Runs this very test binary under `mpirun -n ranks` with a gtest filter selecting worker
// tests (they run only when UKAI_MPI_ITEST_WORKER is set); the log is kept when it fails.
#ifndef UKAI_TESTS_RT_MPI_RUN_H_
#define UKAI_TESTS_RT_MPI_RUN_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace ukai::rt::testing {

// `env` ("NAME=VALUE", optional) is set for and forwarded to every rank.
inline void RunUnderMpirun(int ranks, const std::string& filter, const std::string& env = "") {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  // Per-process log name: runs from several build trees may overlap.
  const std::string log = "/tmp/ukai_mpi_itest_" + std::to_string(getpid()) + ".log";
  const std::string forward = env.empty() ? "" : " -x " + env.substr(0, env.find('='));
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UKAI_MPI_ITEST_WORKER=1 " + env +
      " timeout 120 mpirun -n " + std::to_string(ranks) +
      " --oversubscribe -x UKAI_MPI_ITEST_WORKER" + forward + " " + std::string(exe) +
      " --gtest_filter=" + filter + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << "see " << log << ": " << cmd;
  if (rc == 0) std::remove(log.c_str());
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_MPI_RUN_H_
