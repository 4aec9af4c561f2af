// The BookSim2 config reader (a row of the config-reader table, config_readers.h): BookSim2's
// `key = value;` statements with `//` and `/* */` comments, `{a, b}` lists and bare or quoted
// words, turned into our keys for the flit-level model with router.model = "booksim" and
// measure.mode = "booksim" (docs/booksim.md).
//
// Every key of BookSim2's booksim_config.cpp is a row of one table (booksim_reader.cc,
// BooksimKeys()): mapped onto our keys (possibly with others: injection_rate needs
// packet_size and injection_rate_uses_flits), accepted only at BookSim2's default value
// (a key whose other values ukai does not model: the error says why), or refused (a
// feature ukai does not have: the error says why and what we have). A key that is not in
// the table is refused as not a BookSim2 key. The keys a file does not set take BookSim2's
// defaults, not ours (k = 8, num_vcs = 16, packet_size = 1, ...).
//
// Thread safety: free functions and an immutable table.
#ifndef UKAI_SIM_EXPERIMENT_BOOKSIM_READER_H_
#define UKAI_SIM_EXPERIMENT_BOOKSIM_READER_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/raw_config.h"
#include "core/status.h"

namespace ukai::sim {

// One `key = value;` statement as written (value without quotes; a list keeps its braces).
struct BooksimStatement {
  std::string key;
  std::string value;
  config::Origin origin;  // where the key was written
};

// What the reader does with a BookSim2 key.
enum class BooksimAction {
  kMapped,       // onto our keys (the row's `ours` says which)
  kDefaultOnly,  // BookSim2's default value is accepted, any other refused (`why`)
  kRefused,      // refused whatever the value (`why`)
};

class BooksimContext;  // booksim_keys.h

struct BooksimKey {
  std::string_view name;           // as in booksim_config.cpp
  std::string_view default_value;  // BookSim2's default, as text
  BooksimAction action;
  std::string_view ours;  // kMapped: our keys and how; else why other values are refused
  // kMapped: sets our keys from the key's value (written, else the default).
  Status (*map)(BooksimContext& context) = nullptr;
};

// Every key of BookSim2's booksim_config.cpp, in its order.
std::span<const BooksimKey> BooksimKeys();

// True when `text` is BookSim2 syntax: at least one `key = value;` statement, every
// statement ends with `;`, and no TOML table header.
bool LooksLikeBooksim(std::string_view text);

// The statements of `text` in order; kParseError naming file:line:column.
Result<std::vector<BooksimStatement>> ParseBooksimStatements(std::string_view text,
                                                             const std::string& source_name);

// The reader: text -> our keys (see above). Errors name the BookSim2 key and its place.
Result<config::RawConfig> ReadBooksimConfig(std::string_view text, const std::string& source_name);

// BookSim2's command-line overrides ("key=value", as `booksim FILE key=value` takes them)
// appended to `text` as statements; kInvalidArgument for an argument without '='.
Result<std::string> AppendBooksimOverrides(std::string_view text,
                                           const std::vector<std::string>& overrides);

// The reference of docs/booksim.md: every key, what it becomes or why it is refused
// (Markdown table).
std::string DescribeBooksimKeysMarkdown();

}  // namespace ukai::sim

#endif  // UKAI_SIM_EXPERIMENT_BOOKSIM_READER_H_
