// tools/find_python.sh: the one way the reproductions (`make reproduce*`) find the Python
// that can import matplotlib. Runs the script with PYTHON set to interpreters that can and
// cannot, and checks its answer and its error.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace {

struct ShellRun {
  int status = -1;
  std::string out;  // stdout and stderr together
};

ShellRun Sh(const std::string& cmd) {
  ShellRun r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) r.out += buf;
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

const std::string kScript = std::string(UKAI_SOURCE_DIR) + "/tools/find_python.sh";

TEST(FindPythonTest, APythonWithoutMatplotlibIsRefusedWithThePackageNamed) {
  const ShellRun r = Sh("PYTHON=/bin/false sh " + kScript);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("PYTHON=/bin/false cannot import matplotlib"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("python3-matplotlib"), std::string::npos) << r.out;
}

TEST(FindPythonTest, TheFoundPythonImportsMatplotlibAndIsKeptWhenNamed) {
  const ShellRun found = Sh("env -u PYTHON sh " + kScript);
  if (found.status != 0) {
    GTEST_SKIP() << "no Python with matplotlib here (make deps installs python3-matplotlib): "
                 << found.out;
  }
  std::string python = found.out;
  while (!python.empty() && python.back() == '\n') python.pop_back();
  EXPECT_EQ(Sh(python + " -c 'import matplotlib'").status, 0) << python;
  const ShellRun named = Sh("PYTHON=" + python + " sh " + kScript);
  EXPECT_EQ(named.status, 0) << named.out;
  EXPECT_EQ(named.out, python + "\n");
}

}  // namespace
