// Shared by the simulator's config fuzz targets: the override lines a fuzz input carries.
#ifndef UKAI_FUZZ_SIM_FUZZ_LINES_H_
#define UKAI_FUZZ_SIM_FUZZ_LINES_H_

#include <string>
#include <string_view>
#include <vector>

namespace ukai::fuzz {

// The lines of `text` that start with `prefix` ("#set ", "//set "), without it, in order.
inline std::vector<std::string> PrefixedLines(std::string_view text, std::string_view prefix) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, prefix.size()) == prefix) out.emplace_back(line.substr(prefix.size()));
    at = end + 1;
  }
  return out;
}

}  // namespace ukai::fuzz

#endif  // UKAI_FUZZ_SIM_FUZZ_LINES_H_
