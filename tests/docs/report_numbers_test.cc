// Every number a REPORT, README or doc quotes from a committed results CSV is the number in
// that CSV (docs/report_numbers.h: the citation syntax); and the checker itself finds wrong
// numbers, bad selections and missing files.
#include "docs/report_numbers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_path.h"

namespace ukai::docs {
namespace {

namespace fs = std::filesystem;

class ReportNumbersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::ScratchPath("report_numbers");
    fs::create_directories(dir_ / "results");
    Write("results/a.csv",
          "routing,message_bytes,bw,clock_mhz,sets\n"
          "dor,8,3125.4,79,\"x=\"\"1\"\" y\"\n"
          "dor,16,3148.2,79,z\n"
          "detour-ud,8,4327.6,48,z\n"
          "detour-ud,16,4543.51,48,z\n");
    Write("results/b_f4.csv", "routing,message_bytes,bw,saturated\ndetour-ud,16,4351.0,true\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  NumberCheck Check(const std::string& md) { return CheckReportNumbersText(md, dir_); }
  static std::string Problems(const NumberCheck& c) {
    std::string s;
    for (const NumberProblem& p : c.problems) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
  }
  fs::path dir_;
};

TEST_F(ReportNumbersTest, RightNumbersPass) {
  const NumberCheck c = Check(
      "Detour-UD gives [4544](results/a.csv#routing=detour-ud&message_bytes=16&bw) MB/s,\n"
      "[4543.5 MB/s](results/a.csv#routing=detour-ud&message_bytes=16&bw) at one decimal,\n"
      "per MHz [94.7](results/a.csv#routing=detour-ud&message_bytes=16&bw/clock_mhz), best\n"
      "[4,544](results/a.csv#routing=detour-ud&@max&bw), ahead by\n"
      "[44.3 %](results/a.csv#u:routing=detour-ud&message_bytes=16&bw;"
      "d:routing=dor&message_bytes=16&bw;=100*(u/d-1)) over DM-Order; the other file:\n"
      "[4351](results/a.csv#@csv=results/b_f4.csv&message_bytes=16&bw), "
      "[2 rows](results/a.csv#routing=dor&@count&bw), "
      "[3125](results/a.csv#sets~\"1\"&bw), a plain [link](results/a.csv).\n"
      "```\n[1](results/a.csv#routing=dor&bw) in a code block is not rendered\n```\n");
  EXPECT_TRUE(c.problems.empty()) << Problems(c);
  EXPECT_EQ(c.inline_citations, 8);
}

TEST_F(ReportNumbersTest, AWrongNumberFailsWithBothValues) {
  const NumberCheck c = Check(
      "line one\n"
      "Detour-UD gives [4509](results/a.csv#routing=detour-ud&message_bytes=16&bw) MB/s.\n"
      "Rounded the wrong way: [4543](results/a.csv#routing=detour-ud&message_bytes=16&bw).\n"
      "A share: [.031](results/a.csv#routing=dor&message_bytes=8&bw/100000).\n");
  ASSERT_EQ(c.problems.size(), 2u) << Problems(c);
  EXPECT_EQ(c.problems[0].line, 2);
  EXPECT_NE(c.problems[0].message.find("cites 4509, the CSV gives 4544"), std::string::npos)
      << c.problems[0].message;
  EXPECT_EQ(c.problems[1].line, 3);
  EXPECT_NE(c.problems[1].message.find("cites 4543, the CSV gives 4544"), std::string::npos);
}

TEST_F(ReportNumbersTest, BadSelectionsAreProblems) {
  const NumberCheck c = Check(
      "[1](results/a.csv#routing=dor&bw)\n"                       // 2 rows match
      "[1](results/a.csv#routing=duato&bw)\n"                     // none
      "[1](results/a.csv#routing=dor&message_bytes=8&nope)\n"     // no such column
      "[1](results/none.csv#routing=dor&message_bytes=8&bw)\n"    // no such file
      "[1 or 2](results/a.csv#routing=dor&message_bytes=8&bw)\n"  // two numbers
      "[1](results/a.csv#routing=dor&message_bytes=8)\n");        // no value
  ASSERT_EQ(c.problems.size(), 6u) << Problems(c);
  EXPECT_NE(c.problems[0].message.find("2 rows"), std::string::npos);
  EXPECT_NE(c.problems[1].message.find("0 rows"), std::string::npos);
  EXPECT_NE(c.problems[2].message.find("no column 'nope'"), std::string::npos);
  EXPECT_NE(c.problems[3].message.find("cannot read"), std::string::npos);
  EXPECT_NE(c.problems[4].message.find("2 numbers"), std::string::npos);
  EXPECT_NE(c.problems[5].message.find("no value"), std::string::npos);
}

TEST_F(ReportNumbersTest, ACellWithoutANumberIsComparedAsText) {
  NumberCheck c = Check("[true](results/b_f4.csv#message_bytes=16&saturated)\n");
  EXPECT_TRUE(c.problems.empty()) << Problems(c);
  c = Check(
      "[false](results/b_f4.csv#message_bytes=16&saturated)\n"
      "[1](results/b_f4.csv#s:message_bytes=16&saturated;=s+1)\n");
  ASSERT_EQ(c.problems.size(), 2u) << Problems(c);
  EXPECT_NE(c.problems[0].message.find("cites 'false', the CSV gives 'true'"), std::string::npos);
  EXPECT_NE(c.problems[1].message.find("is the text 'true', no number"), std::string::npos);
}

TEST_F(ReportNumbersTest, TablesAreCheckedCellByCell) {
  const std::string directive =
      "<!-- csv-table results/a.csv\n"
      "value: bw\n"
      "row: routing=dor\n"
      "row: -\n"
      "row: routing=detour-ud\n"
      "col: message_bytes=8\n"
      "col: message_bytes=16\n"
      "col: message_bytes=16&=bw/clock_mhz\n"
      "-->\n\n"
      "| | 8 | 16 | per MHz |\n"
      "|---|---|---|---|\n";
  NumberCheck c = Check(directive +
                        "| DM-Order | 3125 | 3148 | 39.9 |\n"
                        "| (not from the CSV) | 1 | 2 | 3 |\n"
                        "| Detour-UD | 4328 | 4544 | 94.66 |\n\nafter\n");
  EXPECT_TRUE(c.problems.empty()) << Problems(c);
  EXPECT_EQ(c.table_cells, 6);
  c = Check(directive +
            "| DM-Order | 3125 | 3148 | 39.9 |\n"
            "| (not from the CSV) | 1 | 2 | 3 |\n"
            "| Detour-UD | 4328 | 4509 | 94.66 |\n");
  ASSERT_EQ(c.problems.size(), 1u) << Problems(c);
  EXPECT_EQ(c.problems[0].line, 15);
  EXPECT_NE(c.problems[0].message.find("cites 4509"), std::string::npos);
  c = Check(directive + "| DM-Order | 3125 | 3148 | 39.9 |\n");
  ASSERT_EQ(c.problems.size(), 1u) << Problems(c);
  EXPECT_NE(c.problems[0].message.find("3 row: lines but 1 table rows"), std::string::npos);
}

TEST_F(ReportNumbersTest, TablesOfNumbersWithoutADirectiveAreListed) {
  const NumberCheck c = Check(
      "| | 8 |\n|---|---|\n| DM-Order | 3125 |\n\n"                                   // line 1
      "<!-- not-from-csv: settings -->\n| key | value |\n|---|---|\n| vcs | 4 |\n\n"  // 5
      "| name | meaning |\n|---|---|\n| dor | dimension order |\n\n"                  // 10
      "<!-- csv-table results/a.csv\nvalue: bw\nrow: routing=dor\ncol: message_bytes=8\n"
      "-->\n| | 8 |\n|---|---|\n| DM-Order | 3125 |\n");
  EXPECT_TRUE(c.problems.empty()) << Problems(c);
  EXPECT_EQ(c.table_cells, 1);
  ASSERT_EQ(c.uncited_tables.size(), 1u);
  EXPECT_EQ(c.uncited_tables[0], 1);
}

TEST_F(ReportNumbersTest, FileNamePlaceholdersComeFromTheRowOrColumn) {
  const NumberCheck c = Check(
      "<!-- csv-table results/b_f{faults}.csv\n"
      "value: bw\n"
      "row: routing=detour-ud&faults=4\n"
      "col: message_bytes=16\n"
      "-->\n"
      "| | 16 |\n|---|---|\n| Detour-UD, 4 faults | 4351 |\n");
  EXPECT_TRUE(c.problems.empty()) << Problems(c);
  EXPECT_EQ(c.table_cells, 1);
}

// The repository's own documents. A REPORT beside committed results CSVs must cite them.
TEST(ReportNumbersRepoTest, EveryCitedNumberIsTheOneInItsCsv) {
  const fs::path root = UKAI_SOURCE_DIR;
  int files = 0;
  for (const fs::path& top : {root / "experiments", root / "docs"}) {
    for (const auto& e : fs::recursive_directory_iterator(top)) {
      if (e.path().extension() != ".md") continue;
      ++files;
      const NumberCheck c = CheckReportNumbers(e.path());
      for (const NumberProblem& p : c.problems) {
        ADD_FAILURE() << fs::relative(e.path(), root).string() << ":" << p.line << ": "
                      << p.message;
      }
      if (e.path().filename() != "REPORT.md") continue;
      bool has_csv = false;
      for (const auto& f : fs::recursive_directory_iterator(e.path().parent_path())) {
        has_csv = has_csv || f.path().extension() == ".csv";
      }
      if (has_csv) {
        EXPECT_GT(c.inline_citations + c.table_cells, 0)
            << fs::relative(e.path(), root).string()
            << " sits beside results CSVs but cites none of their numbers";
        for (int line : c.uncited_tables) {
          ADD_FAILURE() << fs::relative(e.path(), root).string() << ":" << line
                        << ": a table of numbers without a csv-table directive (or a "
                           "<!-- not-from-csv: why --> comment before it)";
        }
      }
    }
  }
  EXPECT_GT(files, 5);
}

}  // namespace
}  // namespace ukai::docs
