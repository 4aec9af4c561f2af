// ScratchPath: a file name in the test temp directory that is unique to this process.
// ctest runs the tests of one binary as separate processes in parallel (`-j`), so fixed
// names like TempDir()/"x.toml" collide between tests; the pid keeps them apart.
#ifndef UKAI_TESTS_SCRATCH_PATH_H_
#define UKAI_TESTS_SCRATCH_PATH_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace ukai::testing_util {

inline std::string ScratchPath(const std::string& name) {
  std::string dir = ::testing::TempDir();
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir + "ukai_" + std::to_string(::getpid()) + "_" + name;
}

}  // namespace ukai::testing_util

#endif  // UKAI_TESTS_SCRATCH_PATH_H_
