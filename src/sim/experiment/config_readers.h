// The config readers of `ukai sim`, in one explicit table (config_readers.cc): each turns a
// config file's text into a RawConfig (core/config/raw_config.h), a tree of our dotted keys
// with the file position of every key and value, without knowing any schema. The front
// door (experiment/front_door.h) then chooses the machine model from network.topology and
// checks the RawConfig against that model's schema; `--set key=value` overrides are always
// TOML values of our keys, whatever the file's syntax.
//
// A reader is recognised by content: the first row whose recognises() accepts the text
// reads it; TOML, the last row, accepts anything (its own syntax errors then say what is
// wrong). Today: toml.
//
// Adding a reader (e.g. BookSim2's `key = value;` with `//` comments): its files (a
// recognises() that looks at the text only, and a read() that maps the file's keys onto the
// models' keys, keeping each value's line and column, and refuses what it cannot map with an
// error naming the key and position), and one row in config_readers.cc before TOML.
//
// Thread safety: the table is immutable; free functions.
#ifndef UKAI_SIM_EXPERIMENT_CONFIG_READERS_H_
#define UKAI_SIM_EXPERIMENT_CONFIG_READERS_H_

#include <span>
#include <string>
#include <string_view>

#include "core/config/raw_config.h"
#include "core/status.h"

namespace ukai::sim {

struct ConfigReader {
  std::string_view name;  // "toml"
  std::string_view doc;   // the syntax, one line
  // The output format `ukai sim run` uses when --format is not given ("table").
  std::string_view default_format;
  // True when `text` is written in this reader's syntax (looks at the text only).
  bool (*recognises)(std::string_view text);
  // Parses `text` (at most config::kMaxConfigBytes); `source_name` is the file name used in
  // origins and messages. Errors name the file, line and column.
  Result<config::RawConfig> (*read)(std::string_view text, const std::string& source_name);
};

// Every reader, in the order they are tried.
std::span<const ConfigReader> ConfigReaders();

// The reader of `text`: the first that recognises it (TOML, the last, takes anything).
const ConfigReader& FindConfigReader(std::string_view text);

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_CONFIG_READERS_H_
