// Every ```cpp block of docs/*.md compiles as written: each is extracted and compiled with
// the project's compiler (-std=c++20 -fsyntax-only, the public headers and src/ on the
// include path). A block with a main() is compiled as a whole program; any other is a
// fragment, compiled inside a function after docs_block_prelude.h (the names its prose
// assumes), its #include lines first. Errors point at the doc's file and line (#line).
// Also: the public headers compiled as C++17 stop with exactly one error, saying C++20 is
// needed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Block {
  std::string file;  // relative to the source tree
  int line = 0;      // of the first code line
  std::string code;
};

std::vector<Block> CppBlocks(const fs::path& doc, const std::string& name) {
  std::ifstream in(doc);
  std::vector<Block> out;
  std::string line;
  bool inside = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!inside && line.rfind("```cpp", 0) == 0) {
      inside = true;
      out.push_back({name, n + 1, ""});
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
    } else if (inside) {
      out.back().code += line + "\n";
    }
  }
  return out;
}

// The translation unit for `b` (see the file comment).
std::string Unit(const Block& b) {
  const std::string where = "#line " + std::to_string(b.line) + " \"" + b.file + "\"\n";
  if (b.code.find("int main(") != std::string::npos) return where + b.code;
  std::string includes, body;
  std::istringstream lines(b.code);
  std::string line;
  int n = b.line;
  for (; std::getline(lines, line); ++n) {
    if (line.rfind("#include", 0) == 0) {
      includes += line + "\n";
      body += "\n";  // keeps the line numbers
    } else {
      body += line + "\n";
    }
  }
  return "#include \"docs_block_prelude.h\"\n" + includes +
         "[[maybe_unused]] static void DocBlock() {\n" + where + body + "}\n";
}

// Runs `command`; its exit status and combined output.
int RunCommand(const std::string& command, std::string* output) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  return ::pclose(p);
}

std::string Compile(const fs::path& unit, const std::string& standard) {
  const std::string src = UKAI_SOURCE_DIR;
  return std::string(UKAI_CXX) + " -std=" + standard + " -fsyntax-only -Wall -I" + src +
         "/include -I" + src + "/src -I" + src + "/tests/docs" + UKAI_CXX_EXTRA_FLAGS + " " +
         unit.string();
}

fs::path ScratchDir() {
  fs::path dir = fs::temp_directory_path() / ("ukai-docs-code-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(DocsCode, EveryCppBlockCompiles) {
  const fs::path docs = fs::path(UKAI_SOURCE_DIR) / "docs";
  const fs::path dir = ScratchDir();
  int compiled = 0;
  for (const auto& entry : fs::directory_iterator(docs)) {
    if (entry.path().extension() != ".md") continue;
    for (const Block& b : CppBlocks(entry.path(), "docs/" + entry.path().filename().string())) {
      const fs::path unit = dir / ("block" + std::to_string(compiled++) + ".cc");
      std::ofstream(unit) << Unit(b);
      std::string out;
      EXPECT_EQ(RunCommand(Compile(unit, "c++20"), &out), 0)
          << b.file << ":" << b.line << " does not compile:\n"
          << out;
    }
  }
  fs::remove_all(dir);
  EXPECT_GE(compiled, 5) << "fewer C++ blocks in docs/ than expected: is the extraction broken?";
}

TEST(DocsCode, Cxx17StopsWithOneClearError) {
  const fs::path dir = ScratchDir();
  const fs::path unit = dir / "cxx17.cc";
  std::ofstream(unit) << "#include <ukai/ukai.hpp>\nint main() { return 0; }\n";
  std::string out;
  EXPECT_NE(RunCommand(Compile(unit, "c++17"), &out), 0);
  fs::remove_all(dir);
  size_t errors = 0;
  for (size_t at = out.find("error"); at != std::string::npos; at = out.find("error", at + 1)) {
    // "error:" lines (gcc prints the #error text once more in its source excerpt).
    if (out.compare(at, 6, "error:") == 0) ++errors;
  }
  EXPECT_EQ(errors, 1u) << out;
  EXPECT_NE(out.find("ukai needs C++20"), std::string::npos) << out;
}

}  // namespace
