#include "cli/fullmesh_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "core/config/toml_reader.h"
#include "sim/experiment/config_schema.h"
#include "sim/fullmesh/fullmesh_config.h"
#include "sim/fullmesh/fullmesh_run.h"

namespace ukai::cli {
namespace {

Result<config::ConfigValues> Read(const SimRunOptions& options, const config::Schema& schema) {
  Result<config::ConfigValues> values = config::ReadTomlFile(options.config_path, schema);
  if (!values.ok()) return values.status();
  for (const std::string& arg : options.sets) {
    UKAI_RETURN_IF_ERROR(config::ApplySetArgument(arg, schema, &*values));
  }
  return values;
}

}  // namespace

std::optional<int> MaybeRunFullMesh(const SimRunOptions& options, output::Format format,
                                    const CliIo& io) {
  auto fail = [&io](int code, const std::string& message) {
    *io.err << "ukai sim run: " << message << '\n' << std::flush;
    return code;
  };
  Result<config::ConfigValues> values = Read(options, sim::fullmesh::CombinedSchema());
  if (!values.ok()) {
    // Claim the errors only when the simulator's own schema rejects "fullmesh" itself.
    Result<config::ConfigValues> plain = Read(options, sim::SimConfigSchema());
    if (plain.ok() ||
        plain.status().message().find("network.topology: 'fullmesh'") == std::string::npos) {
      return std::nullopt;
    }
    return fail(kExitUsage, values.status().ToString());
  }
  bool any_key = sim::fullmesh::IsFullMesh(*values);
  for (const auto& [key, value] : values->values()) {
    any_key |= sim::fullmesh::IsFullMeshKey(key);
  }
  if (!any_key) return std::nullopt;
  Result<sim::fullmesh::FullMeshRun> run = sim::fullmesh::MakeFullMeshRun(*values);
  if (!run.ok()) return fail(kExitUsage, run.status().ToString());

  std::ofstream file;
  Result<std::ostream*> opened = OpenRunOutput(options.out_path, io, &file);
  if (!opened.ok()) return fail(kExitUsage, opened.status().message());
  std::ostream* out = *opened;
  std::unique_ptr<output::RecordWriter> writer =
      format == output::Format::kTable
          ? output::MakeTableWriter(out, sim::fullmesh::FullMeshTableColumns())
      : format == output::Format::kCsv ? output::MakeCsvWriter(out)
                                       : output::MakeJsonWriter(out);
  Status st = sim::fullmesh::RunFullMesh(*run, writer.get());
  if (!st.ok()) return fail(kExitRunFailed, st.ToString());
  return kExitOk;
}

std::string DescribeFullMesh(bool markdown) {
  const config::Schema schema = sim::fullmesh::FullMeshSchema();
  if (markdown) {
    return "\nFull-mesh keys (network.topology = \"fullmesh\"; docs/fullmesh.md):\n\n" +
           config::DescribeMarkdown(schema);
  }
  return "\nFull-mesh keys (network.topology = \"fullmesh\"; the k-ary n-cube keys above are "
         "then not used, except seed):\n" +
         config::DescribeText(schema);
}

}  // namespace ukai::cli
