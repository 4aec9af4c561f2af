// Runs a built program (the `ukai` binary of the build, otf2-print, ...) as a child process for
// integration tests: its exit status, stdout and stderr (captured in scratch files, so the
// program never sees a terminal). Used by tests/cli/*_itest.cc; the binary's path comes from
// the UKAI_BINARY compile definition (tests/cli/CMakeLists.txt).
//
// Thread safety: none (the scratch files are per process and reused by every call).
#ifndef UKAI_TESTS_CLI_RUN_BINARY_H_
#define UKAI_TESTS_CLI_RUN_BINARY_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scratch_path.h"

namespace ukai::testing_util {

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `s` quoted for /bin/sh.
inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  q += '\'';
  return q;
}

// Runs `program` with `args` (no shell interpretation of either), stdin from /dev/null.
inline Outcome RunBinary(const std::string& program, const std::vector<std::string>& args) {
  const std::string out = ScratchPath("itest.out"), err = ScratchPath("itest.err");
  std::string cmd = Quote(program);
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += Quote(a);
  }
  cmd += " >";
  cmd += Quote(out);
  cmd += " 2>";
  cmd += Quote(err);
  cmd += " </dev/null";
  int status = std::system(cmd.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = ReadFile(out);
  o.err = ReadFile(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return o;
}

#ifdef UKAI_BINARY
// Runs the build's `ukai` binary.
inline Outcome Ukai(const std::vector<std::string>& args) { return RunBinary(UKAI_BINARY, args); }
#endif

}  // namespace ukai::testing_util

#endif  // UKAI_TESTS_CLI_RUN_BINARY_H_
