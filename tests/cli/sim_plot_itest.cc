// The drawing of `ukai sim plot` (src/cli/plot/ukai_sim_plot.py) as the reproductions use it:
// its functions keep overlapping series visible, mark saturated points, never lose zeros on a
// log axis, never join categories, draw references as given; and every reproduction's
// plotting script imports them (no drawing code of its own) and draws its figures from the
// committed results. Needs the Python tools/find_python.sh names (python3-matplotlib).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scratch_path.h"

namespace {

using ukai::testing_util::ScratchPath;

const std::string kSource = UKAI_SOURCE_DIR;

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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsPng(const std::string& path) {
  return ReadFile(path).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8);
}

class SimPlotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ShellRun found = Sh("sh " + kSource + "/tools/find_python.sh");
    ASSERT_EQ(found.status, 0) << found.out;
    python_ = found.out.substr(0, found.out.find('\n'));
    dir_ = ScratchPath("plot_itest");
    ASSERT_EQ(Sh("rm -rf " + dir_ + " && mkdir -p " + dir_).status, 0);
  }
  void TearDown() override { Sh("rm -rf " + dir_); }

  std::string python_, dir_;
};

// Each assertion of the script names what failed; it prints "ok" at the end.
constexpr char kFunctionsCheck[] = R"PY(
import sys
sys.path.insert(0, sys.argv[1])
import ukai_sim_plot as usp
plt = usp.pyplot()

fig, ax = plt.subplots()
a, b = usp.line_plot(ax, [usp.Series("a", [3, 1, 2], [3, 1, 2]),
                          usp.Series("b", [1, 2, 3], [1, 2, 3], [False, True, False])])
assert a.get_marker() != b.get_marker(), "identical series share a marker"
assert a.get_linewidth() > b.get_linewidth(), "the earlier series is not drawn wider"
assert a.get_zorder() < b.get_zorder(), "the earlier series is not beneath"
assert list(a.get_xdata()) == [1, 2, 3], "points not sorted by x"
marks = [l for l in ax.get_lines() if l.get_marker() == "X" and len(l.get_xdata())]
assert [list(m.get_xdata()) for m in marks] == [[2]], "saturated mark misplaced"
assert "saturated" in [l.get_label() for l in ax.get_lines()], "no saturated legend entry"

fig, ax = plt.subplots()
usp.line_plot(ax, [usp.Series("lost", [1, 2, 3], [0, 2, 1000])], ylog=True)
assert ax.get_yscale() == "symlog", "a zero on a log axis: " + ax.get_yscale()
fig, ax = plt.subplots()
usp.line_plot(ax, [usp.Series("t", [1, 10], [2, 2000])], xlog=True, ylog=True)
assert ax.get_xscale() == "log" and ax.get_yscale() == "log", "positive data not log-log"

fig, ax = plt.subplots()
usp.category_plot(ax, ["none", "learned"], [usp.Series("g", [0, 1], [5, 7]),
                                            usp.Series("m", [0, 1], [6, 8])], annotate="{:.0f}")
assert all(l.get_linestyle() == "None" for l in ax.get_lines()), "categories joined by lines"
assert [t.get_text() for t in ax.get_xticklabels()] == ["none", "learned"], "category labels"
assert sorted(t.get_text() for t in ax.texts) == ["5", "6", "7", "8"], "values not written"
usp.reference_line(ax, [1, 2, 4], [2 / k for k in [1, 2, 4]], "2/K")
assert list(ax.get_lines()[-1].get_ydata()) == [2.0, 1.0, 0.5], "reference not as given"

fig, ax = plt.subplots()
usp.bar_plot(ax, ["p", "q"], [usp.Series("lost", [0, 1], [0, 3]),
                              usp.Series("again", [0, 1], [1, 4])])
assert sorted(t.get_text() for t in ax.texts) == ["0", "1", "3", "4"], "bar values"
usp.save(fig, sys.argv[2])
print("ok")
)PY";

TEST_F(SimPlotTest, DrawingFunctionsKeepEveryPointAndSeriesVisible) {
  const std::string script = dir_ + "/check.py", png = dir_ + "/bars.png";
  std::ofstream(script) << kFunctionsCheck;
  const ShellRun r = Sh(python_ + " " + script + " " + kSource + "/src/cli/plot " + png);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "ok\n");
  EXPECT_TRUE(IsPng(png));
}

TEST_F(SimPlotTest, ReproductionsDrawWithTheSharedFunctions) {
  for (const char* script :
       {"detour-ud/plot.py", "fullmesh/plot.py", "gateway/run.py", "sss/plot.py"}) {
    const std::string text = ReadFile(kSource + "/experiments/" + script);
    EXPECT_NE(text.find("import ukai_sim_plot as usp"), std::string::npos) << script;
    EXPECT_EQ(text.find("matplotlib.pyplot"), std::string::npos)
        << script << " has drawing code of its own";
  }
  const std::string ex = kSource + "/experiments/";
  // detour-ud: Figs 7 and 8 from their committed CSVs (plot.py writes beside them).
  ShellRun r =
      Sh("cp " + ex + "detour-ud/results/fig07_*.csv " + ex + "detour-ud/results/fig08_*.csv " +
         dir_ + " && " + python_ + " " + ex + "detour-ud/plot.py " + dir_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(IsPng(dir_ + "/fig07_transpose_bandwidth.png"));
  EXPECT_TRUE(IsPng(dir_ + "/fig08_transpose_latency.png"));
  // fullmesh: Fig. 16 and the K sweep.
  const std::string mesh = dir_ + "/mesh";
  r = Sh("mkdir -p " + mesh + " && cp " + ex + "fullmesh/results/fig16_*.csv " + ex +
         "fullmesh/results/ksweep_*.csv " + mesh + " && " + python_ + " " + ex +
         "fullmesh/plot.py " + mesh + " " + mesh);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(IsPng(mesh + "/fig16.png"));
  EXPECT_TRUE(IsPng(mesh + "/ksweep.png"));
  // gateway: every PNG from the committed results.csv, nothing run.
  const std::string gateway = dir_ + "/gateway";
  r = Sh("mkdir -p " + gateway + " && " + python_ + " " + ex + "gateway/run.py --plot-only " +
         "--ukai /nonexistent --out " + gateway);
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* png : {"policies_lost.png", "policies_latency.png", "load_spread.png",
                          "cpu_baseline.png", "runtime_management.png"}) {
    EXPECT_TRUE(IsPng(gateway + "/" + png)) << png;
  }
  // sss: every PNG from the committed CSVs.
  const std::string sss = dir_ + "/sss";
  r = Sh("mkdir -p " + sss + " && cp " + ex + "sss/results/*.csv " + ex + "sss/results/*.jsonl " +
         sss + " && " + python_ + " " + ex + "sss/plot.py " + sss);
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* png :
       {"upper_bandwidth.png", "completion.png", "cut_through.png", "link_efficiency.png"}) {
    EXPECT_TRUE(IsPng(sss + "/" + png)) << png;
  }
}

}  // namespace
