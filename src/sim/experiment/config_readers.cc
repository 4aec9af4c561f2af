#include "sim/experiment/config_readers.h"

#include "core/config/toml_reader.h"
#include "sim/experiment/booksim_reader.h"

namespace ukai::sim {
namespace {

bool AnyText(std::string_view) { return true; }

constexpr ConfigReader kReaders[] = {
    {"booksim",
     "BookSim2: key = value; statements with // comments (docs/booksim.md); prints BookSim2's "
     "summary lines",
     "booksim", &LooksLikeBooksim, &ReadBooksimConfig},
    {"toml", "TOML: [table] headers and key = value lines (docs/config.md)", "table", &AnyText,
     &config::ParseToml},
};

}  // namespace

std::span<const ConfigReader> ConfigReaders() { return kReaders; }

const ConfigReader& FindConfigReader(std::string_view text) {
  for (const ConfigReader& r : kReaders) {
    if (r.recognises(text)) return r;
  }
  return kReaders[std::size(kReaders) - 1];
}

}  // namespace ukai::sim
