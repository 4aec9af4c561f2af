// Reading a config from TOML text and from `--set key=value` arguments. This is the one
// place that includes toml++. ParseToml() turns text into a RawConfig (config/raw_config.h)
// without a schema, for the front door that chooses the schema from the config itself; the
// Read* functions parse and check against a given Schema in one go.
//
// Every problem is returned as a Status (never an exception) whose message names the key and
// the file:line:column (or the --set argument). All problems of one document are reported
// together, one per line, in document order.
//
// Thread safety: free functions without shared state.
#ifndef UKAI_CORE_CONFIG_TOML_READER_H_
#define UKAI_CORE_CONFIG_TOML_READER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/raw_config.h"
#include "core/config/schema.h"
#include "core/status.h"

namespace ukai::config {

// Parses TOML `text` (at most kMaxConfigBytes) into a RawConfig; `source_name` is the file
// name in messages and origins. Errors: kInvalidArgument when too large, kParseError for
// TOML syntax ("TOML syntax error at FILE:LINE:COLUMN: ...").
Result<RawConfig> ParseToml(std::string_view text, const std::string& source_name);

// Reads and checks the TOML file at `path`. Errors: kIoError when the file cannot be read
// or is not a regular file (a directory, a device such as /dev/zero, a pipe),
// kInvalidArgument when it is larger than kMaxConfigBytes, kParseError for TOML syntax,
// kInvalidArgument for unknown keys and bad values.
Result<ConfigValues> ReadTomlFile(const std::string& path, const Schema& schema);

// Same for TOML `text` (at most kMaxConfigBytes); `source_name` is used as the file name in
// messages.
Result<ConfigValues> ReadTomlString(std::string_view text, const std::string& source_name,
                                    const Schema& schema);

// Applies one `--set key=value` argument (`arg` is "key=value") to `values`, replacing any
// value of the key. The value is TOML (4, 0.5, true, "dor", [0.1, 0.2]); a bare word that
// is not valid TOML is taken as a string (so `--set routing.algorithm=duato` works).
Status ApplySetArgument(std::string_view arg, const Schema& schema, ConfigValues* values);

// Applies `args` ("key=value") in order. A later argument for a key wins: an earlier one
// for the same key is not checked at all (`--set router.vcs=0 --set router.vcs=4` gives 4).
// Every problem of the remaining arguments is reported, one per line (config::ErrorList).
Status ApplySetArguments(const std::vector<std::string>& args, const Schema& schema,
                         ConfigValues* values);

}  // namespace ukai::config

#endif  // UKAI_CORE_CONFIG_TOML_READER_H_
