// Tests of the table, CSV and JSON Lines writers and of the progress line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <sstream>
#include <string>

#include "core/output/writer.h"
#include "core/progress.h"

namespace ukai::output {
namespace {

using ::testing::HasSubstr;

Record Row(const std::string& routing, double latency, int64_t msgs, bool sat) {
  Record r;
  r.Add("routing", routing)
      .Add("k", std::vector<int64_t>{10, 10})
      .Add("avg_latency_cycles", latency)
      .Add("messages_measured", msgs)
      .Add("saturated", sat);
  return r;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(OutputFormatTest, Parse) {
  EXPECT_EQ(*ParseFormat("table"), Format::kTable);
  EXPECT_EQ(*ParseFormat("csv"), Format::kCsv);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  auto bad = ParseFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'xml' (known: table, csv, json, booksim)"));
}

TEST(OutputCsvTest, HeaderAndRows) {
  std::ostringstream out;
  auto w = MakeCsvWriter(&out);
  ASSERT_TRUE(w->Write(Row("dor", 41.25, 4000, false)).ok());
  ASSERT_TRUE(w->Write(Row("du,ato \"x\"", 0.1, 7, true)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "routing,k,avg_latency_cycles,messages_measured,saturated");
  EXPECT_EQ(lines[1], "dor,10x10,41.25,4000,false");
  EXPECT_EQ(lines[2], "\"du,ato \"\"x\"\"\",10x10,0.1,7,true");
}

TEST(OutputCsvTest, DoublesRoundTrip) {
  std::ostringstream out;
  auto w = MakeCsvWriter(&out);
  double v = 0.1 + 0.2;
  ASSERT_TRUE(w->Write(Record().Add("x", v)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(std::stod(lines[1]), v);
}

TEST(OutputCsvTest, RefusesOtherColumns) {
  std::ostringstream out;
  auto w = MakeCsvWriter(&out);
  ASSERT_TRUE(w->Write(Record().Add("a", 1)).ok());
  EXPECT_FALSE(w->Write(Record().Add("b", 1)).ok());
  EXPECT_FALSE(w->Write(Record().Add("a", 1).Add("c", 2)).ok());
}

TEST(OutputJsonTest, OneObjectPerLineInOrder) {
  std::ostringstream out;
  auto w = MakeJsonWriter(&out);
  ASSERT_TRUE(w->Write(Row("dor", 41.25, 4000, false)).ok());
  ASSERT_TRUE(w->Write(Row("duato", 1e6 + 0.5, 3, true)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "{\"routing\":\"dor\",\"k\":[10,10],\"avg_latency_cycles\":41.25,"
            "\"messages_measured\":4000,\"saturated\":false}");
  auto j = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(j["routing"], "duato");
  EXPECT_EQ(j["avg_latency_cycles"].get<double>(), 1e6 + 0.5);
  EXPECT_EQ(j["messages_measured"].get<int64_t>(), 3);
  EXPECT_EQ(j["saturated"].get<bool>(), true);
}

TEST(OutputTableTest, AlignedColumnsWithHeaders) {
  std::ostringstream out;
  auto w = MakeTableWriter(&out, {{"routing", "", 0},
                                  {"avg_latency_cycles", "latency", 0},
                                  {"messages_measured", "msgs", 0},
                                  {"missing", "gone", 0}});
  ASSERT_TRUE(w->Write(Row("dor", 41.25, 4000, false)).ok());
  ASSERT_TRUE(w->Write(Row("duato", 123456.7, 12, true)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "routing  latency    msgs    gone");
  EXPECT_EQ(lines[1], "dor        41.25    4000       -");
  EXPECT_EQ(lines[2], "duato     123457      12       -");
}

TEST(OutputTableTest, MinWidthKeepsLaterRowsAligned) {
  std::ostringstream out;
  auto w = MakeTableWriter(&out, {{"routing", "", 9}, {"messages_measured", "msgs", 0}});
  ASSERT_TRUE(w->Write(Row("dor", 1, 4000, false)).ok());
  ASSERT_TRUE(w->Write(Row("transpose", 1, 12, true)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "routing      msgs");
  EXPECT_EQ(lines[1], "dor          4000");
  EXPECT_EQ(lines[2], "transpose      12");
}

TEST(OutputTableTest, AllFieldsWhenNoColumnsGiven) {
  std::ostringstream out;
  auto w = MakeTableWriter(&out, {});
  ASSERT_TRUE(w->Write(Row("dor", 0.123456789, 1, false)).ok());
  auto lines = Lines(out.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("routing"));
  EXPECT_THAT(lines[0], HasSubstr("saturated"));
  EXPECT_THAT(lines[1], HasSubstr("10x10"));
  EXPECT_THAT(lines[1], HasSubstr("0.12346"));
  EXPECT_THAT(lines[1], HasSubstr("false"));
}

TEST(OutputNoValueTest, NullEmptyCellAndDash) {
  Record r;
  r.Add("latency", kNoValue).Add("messages", 0);
  std::ostringstream json, csv, table;
  ASSERT_TRUE(MakeJsonWriter(&json)->Write(r).ok());
  ASSERT_TRUE(MakeCsvWriter(&csv)->Write(r).ok());
  ASSERT_TRUE(MakeTableWriter(&table, {})->Write(r).ok());
  EXPECT_EQ(json.str(), "{\"latency\":null,\"messages\":0}\n");
  EXPECT_EQ(Lines(csv.str())[1], ",0");
  EXPECT_EQ(Lines(table.str())[1], "      -         0");  // right-aligned like a number
}

TEST(OutputFieldTextTest, Rendering) {
  EXPECT_EQ(FieldText(Field(int64_t{-3}), true), "-3");
  EXPECT_EQ(FieldText(Field(2.5), false), "2.5");
  EXPECT_EQ(FieldText(Field(1.0 / 3), true), "0.33333");
  EXPECT_EQ(FieldText(Field(std::vector<int64_t>{4, 4, 4}), false), "4x4x4");
  EXPECT_EQ(FieldText(Field(true), false), "true");
}

TEST(OutputProgressTest, DisabledWritesNothing) {
  std::ostringstream out;
  {
    ProgressLine p(&out, false);
    p.Update("hello");
    p.Force("again");
    p.Clear();
  }
  EXPECT_EQ(out.str(), "");
}

TEST(OutputProgressTest, DrawsThrottlesAndClears) {
  std::ostringstream out;
  {
    ProgressLine p(&out, true, std::chrono::hours(1));
    p.Update("one");
    p.Update("two");  // throttled
    EXPECT_EQ(out.str(), "\rone\x1b[K");
    p.Force("three");
    EXPECT_EQ(out.str(), "\rone\x1b[K\rthree\x1b[K");
  }  // the destructor clears the line
  EXPECT_EQ(out.str(), "\rone\x1b[K\rthree\x1b[K\r\x1b[K");
}

}  // namespace
}  // namespace ukai::output
