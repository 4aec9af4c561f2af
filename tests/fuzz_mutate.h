// Helpers for replaying fuzz targets under gcc (the *_fuzz_replay_test.cc files): reading a
// corpus, seeded byte mutations (1-4 edits, each a bit flip, an overwrite, an insertion or
// a deletion at a random place) and seeded line mutations of text configs.
#ifndef UKAI_TESTS_FUZZ_MUTATE_H_
#define UKAI_TESTS_FUZZ_MUTATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace ukai::testing {

inline void MutateBytes(std::mt19937_64& rng, std::vector<uint8_t>* bytes) {
  std::vector<uint8_t>& in = *bytes;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !in.empty(); ++e) {
    const size_t at = rng() % in.size();
    switch (rng() % 4) {
      case 0:
        in[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        in[at] = static_cast<uint8_t>(rng());
        break;
      case 2:
        in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng()));
        break;
      default:
        in.erase(in.begin() + static_cast<std::ptrdiff_t>(at));
        break;
    }
  }
}

// The files of each folder `root`/dir whose names end in `ext` ("" = every file), each
// folder's files in path order, as their bytes.
inline std::vector<std::string> ReadCorpus(const std::string& root,
                                           std::initializer_list<const char*> dirs,
                                           std::string_view ext) {
  std::vector<std::string> out;
  for (const char* dir : dirs) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(root) / dir)) {
      if (ext.empty() || e.path().extension() == ext) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  return out;
}

inline std::vector<std::vector<uint8_t>> ReadCorpusBytes(const std::string& root, const char* dir) {
  std::vector<std::vector<uint8_t>> out;
  for (const std::string& s : ReadCorpus(root, {dir}, "")) out.emplace_back(s.begin(), s.end());
  return out;
}

inline std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// 1-4 edits of a text config's lines: a bit flipped, a line dropped, duplicated or swapped,
// or an override line `set_prefix` + key + "=" + value appended (keys and values picked).
inline std::string MutateLines(std::mt19937_64& rng, const std::string& text,
                               const std::string& set_prefix, const std::vector<std::string>& keys,
                               const std::vector<std::string>& values) {
  std::vector<std::string> lines = SplitLines(text);
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !lines.empty(); ++e) {
    const size_t at = rng() % lines.size();
    switch (rng() % 5) {
      case 0:
        if (!lines[at].empty())
          lines[at][rng() % lines[at].size()] ^= static_cast<char>(1 << (rng() % 7));
        break;
      case 1:
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 2:
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]);
        break;
      case 3:
        std::swap(lines[at], lines[rng() % lines.size()]);
        break;
      default:
        lines.push_back(set_prefix + keys[rng() % keys.size()] + "=" +
                        values[rng() % values.size()]);
        break;
    }
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace ukai::testing

#endif  // UKAI_TESTS_FUZZ_MUTATE_H_
