// The `network.topology = "fullmesh"` branch of `ukai sim run` and `ukai sim describe`: the
// full-mesh model (sim/fullmesh) has its own keys, workload and result fields, so a config
// that names it is read and run here; every other config goes on to the k-ary n-cube path
// unchanged (its messages included).
#ifndef UKAI_CLI_FULLMESH_COMMAND_H_
#define UKAI_CLI_FULLMESH_COMMAND_H_

#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/sim_run.h"
#include "core/output/writer.h"

namespace ukai::cli {

// Runs the config when it asks for the full mesh (or sets full-mesh keys) and returns the
// exit status: kExitUsage for config errors, kExitRunFailed when a data check fails. Returns
// nullopt when the config is not the full mesh's.
std::optional<int> MaybeRunFullMesh(const SimRunOptions& options, output::Format format,
                                    const CliIo& io);

// The full-mesh keys for `ukai sim describe` (text, or a Markdown table).
std::string DescribeFullMesh(bool markdown);

}  // namespace ukai::cli

#endif  // UKAI_CLI_FULLMESH_COMMAND_H_
