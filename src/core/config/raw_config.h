// A config as a reader produced it, before any schema check: a tree of tables and values
// (config::Tree), each with the place it was written. Config readers (TOML:
// config/toml_reader.h; the reader table: sim/experiment/config_readers.h) turn text into a
// RawConfig; the front door (sim/experiment/front_door.h) reads network.topology from it to
// choose the machine model, then CheckRawConfig() checks every entry once against that
// model's schema.
//
// Thread safety: plain values and free functions.
#ifndef UKAI_CORE_CONFIG_RAW_CONFIG_H_
#define UKAI_CORE_CONFIG_RAW_CONFIG_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/config/schema.h"
#include "core/status.h"

namespace ukai::config {

// The largest config text read (a file of more is refused without being read whole).
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;

struct RawConfig {
  std::string source;                        // the file name used in messages
  Tree root = Tree::Of(Tree::Kind::kTable);  // the top-level table
};

// Sets the dotted `key` to `value`, creating the tables on its way and replacing an earlier
// value; `key_origin` is where the key was written. For readers of flat syntaxes (BookSim's
// `k = 8;`). kInvalidArgument when a part of the path already holds a value, not a table.
Status SetRawValue(std::string_view key, Tree value, const Origin& key_origin, RawConfig* raw);

// The value of the dotted `key`, or nullptr (also when a part of the path is not a table).
const Tree* FindRawValue(const RawConfig& raw, std::string_view key);

// The value of `key` (as FindRawValue) checked against `spec` (which must describe `key`):
// nullopt when absent. Errors as CheckRawConfig's.
Result<std::optional<Value>> CheckedRawValue(const RawConfig& raw, const KeySpec& spec);

// Checks every entry of `raw` against `schema`: unknown keys (with a suggestion, or the
// schema's refusal), shapes, types, ranges and enum names. Every problem is listed, one per
// line, in document order (config::ErrorList); each names the key and file:line:column.
Result<ConfigValues> CheckRawConfig(const RawConfig& raw, const Schema& schema);

// Converts a value as written into a checked Value of `spec` (a structured value keeps its
// tree). Used by CheckRawConfig and by `--set` (config/toml_reader.h).
Status ConvertTree(const KeySpec& spec, const Tree& tree, Value* out);

// Reads the file at `path` for a reader. Errors: kIoError when it cannot be read or is not a
// regular file (a directory, a device such as /dev/zero, a pipe), kInvalidArgument when it is
// larger than kMaxConfigBytes.
Result<std::string> ReadConfigText(const std::string& path);

// kInvalidArgument when `text` is larger than kMaxConfigBytes (naming `source_name`).
Status CheckConfigSize(std::string_view text, const std::string& source_name);

}  // namespace ukai::config

#endif  // UKAI_CORE_CONFIG_RAW_CONFIG_H_
