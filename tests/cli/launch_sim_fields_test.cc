// The result fields of `ukai launch --sim` (rt/sim_machine/sim_results.h) are declared once:
// docs/cli.md holds their reference as DescribeFieldsMarkdown prints it, and the record
// (of a machine on which no process ran) has them in declaration order, then the network's.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rt/sim_machine/sim_results.h"
#include "scratch_path.h"
#include "sim/experiment/flit_fields.h"

namespace ukai::rt {
namespace {

using ukai::testing_util::ScratchPath;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LaunchSimFields, ReferenceInCliDocIsTheDeclaration) {
  const std::vector<output::FieldSpec> fields = SimRunFields();
  const std::string doc = ReadFile(std::string(UKAI_SOURCE_DIR) + "/docs/cli.md");
  EXPECT_NE(doc.find(output::DescribeFieldsMarkdown(fields)), std::string::npos)
      << "docs/cli.md (`ukai launch`, --sim) must hold the reference of "
         "rt/sim_machine/sim_results.cc's fields verbatim:\n"
      << output::DescribeFieldsMarkdown(fields);
}

TEST(LaunchSimFields, RecordFollowsTheDeclarationThenTheNetworkFields) {
  const std::string machine = ScratchPath("fields.toml");
  std::ofstream(machine) << "[network]\ntopology = \"mesh\"\nk = 4\nn = 2\n";
  Result<SimMachine> m = LoadSimMachine(machine, {}, 2);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const SimRunContext run = CollectSimRun(*m, 2);
  const output::Record rec = SimRunRecord(run);
  const std::vector<output::FieldSpec> fields = SimRunFields();
  ASSERT_GT(rec.fields().size(), fields.size());
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(rec.fields()[i].first, fields[i].name);
  EXPECT_NE(rec.Find("avg_hops"), nullptr);
  EXPECT_NE(rec.Find("topology"), nullptr);
  EXPECT_EQ(rec.Find("point"), nullptr) << "one machine, not a sweep point";
  EXPECT_EQ(std::get<int64_t>(*rec.Find("processes_missing")), 2);
}

}  // namespace
}  // namespace ukai::rt
