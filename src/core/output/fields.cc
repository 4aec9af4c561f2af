#include "core/output/fields.h"

#include <fmt/format.h>

namespace ukai::output {
namespace {

// A Markdown cell: a '|' would end it.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::vector<TableColumn> TableColumnsOf(std::span<const FieldSpec> fields) {
  std::vector<TableColumn> out;
  for (const FieldSpec& f : fields) {
    if (!f.column.empty()) {
      out.push_back({std::string(f.name), std::string(f.column), f.column_width});
    }
  }
  return out;
}

std::string DescribeFieldsMarkdown(std::span<const FieldSpec> fields) {
  std::string out =
      "| field | unit | table | meaning |\n"
      "|---|---|---|---|\n";
  for (const FieldSpec& f : fields) {
    std::string meaning = Cell(f.meaning);
    if (!f.when.empty()) meaning += fmt::format("; only {}", Cell(f.when));
    out += fmt::format("| `{}` | {} | {} | {} |\n", f.name, Cell(f.unit),
                       f.column.empty() ? std::string() : fmt::format("`{}`", Cell(f.column)),
                       meaning);
  }
  return out;
}

std::string DescribeFieldsText(std::span<const FieldSpec> fields) {
  std::string out;
  for (const FieldSpec& f : fields) {
    out += fmt::format("{}\n", f.name);
    if (!f.unit.empty()) out += fmt::format("    unit:    {}\n", f.unit);
    if (!f.column.empty()) out += fmt::format("    table:   {}\n", f.column);
    if (!f.when.empty()) out += fmt::format("    only:    {}\n", f.when);
    out += fmt::format("    {}\n\n", f.meaning);
  }
  return out;
}

}  // namespace ukai::output
