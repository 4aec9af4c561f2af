#include "cli/sim_check.h"

#include <string>

#include "sim/experiment/front_door.h"

namespace ukai::cli {

int CheckSim(const SimCheckOptions& options, const CliIo& io) {
  auto fail = [&io](const Status& st) {
    *io.err << "ukai sim check: " << st.ToString() << '\n' << std::flush;
    return kExitUsage;
  };
  Result<sim::LoadedConfig> loaded = sim::LoadConfig(options.config_path, options.sets);
  if (!loaded.ok()) return fail(loaded.status());
  Result<bool> proved = loaded->experiment->CheckDeadlockFreedom(io.out);
  *io.out << std::flush;
  if (!proved.ok()) return fail(proved.status());
  return *proved ? kExitOk : kExitRunFailed;
}

}  // namespace ukai::cli
