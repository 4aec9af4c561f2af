#include "cli/sim_tables.h"

#include <fmt/format.h>

#include "sim/experiment/front_door.h"

namespace ukai::cli {

int PrintSimTables(const SimTablesOptions& options, const CliIo& io) {
  auto fail = [&io](const std::string& message, int code) {
    *io.err << "ukai sim tables: " << message << '\n' << std::flush;
    return code;
  };
  if (options.format != "text" && options.format != "json") {
    return fail("--format: expected text or json, got '" + options.format + "'", kExitUsage);
  }
  Result<sim::LoadedConfig> loaded = sim::LoadConfig(options.config_path, options.sets);
  if (!loaded.ok()) return fail(loaded.status().ToString(), kExitUsage);
  const Status st = loaded->experiment->WriteControllerTables(
      {options.format == "json", options.all_links}, io.out);
  *io.out << std::flush;
  if (st.ok()) return kExitOk;
  if (st.code() == StatusCode::kUnsupported) {
    return fail(fmt::format("network.topology = \"{}\" (the {} model): {}", loaded->topology,
                            loaded->model->name, st.message()),
                kExitUsage);
  }
  return fail(st.ToString(), kExitRunFailed);
}

}  // namespace ukai::cli
