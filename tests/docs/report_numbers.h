// ReportNumbers: checks that every number a Markdown file (an experiment's REPORT.md or
// README.md, a doc) quotes from a results CSV is the number in that CSV, at the precision
// the text shows. The citation syntax is documented in experiments/README.md; in short:
//
// - Inline: a Markdown link whose target is a CSV file with a query as its fragment,
//     [4544](results/fig07_transpose_bandwidth_f0.csv#routing=detour-ud&message_bytes=16&bandwidth_mbytes_per_second)
//   The query is `&`-joined items: `key=value` keeps the rows whose column equals the
//   value (numerically when both parse as numbers), `key~text` the rows whose column
//   contains the text, `@max` / `@min` / `@sum` / `@mean` / `@count` aggregate the matching
//   rows (without one exactly one row must match), `@csv=PATH` reads another file, and one
//   bare item is the value: a column name or an arithmetic expression over the row's
//   columns (+ - * / and parentheses). Several named selections combine:
//     [8.7
//     %](x.csv#a:routing=detour-nf&message_bytes=32&bw;b:routing=detour-ud&message_bytes=32&bw;=100*(a/b-1))
// - Tables: an HTML comment before a Markdown table gives the file, the value, one `row:`
//   selection per body row and one `col:` selection per data column (after `label_cols`
//   label columns, default 1); `-` leaves a row or column unchecked. `{key}` in the file
//   name takes the value of the row's or column's `key=` item:
//     <!-- csv-table results/fig07_transpose_bandwidth_f{faults}.csv
//     value: bandwidth_mbytes_per_second
//     row: routing=dor&faults=0
//     col: message_bytes=8
//     -->
//
// The text's number (one per link or cell: `4,544`, `.024`, `-3.5`, with any words or
// units around it) must equal the value printed with as many decimals as the text shows.
// Citations inside fenced code blocks are ignored (they are not rendered). A table with
// numbers that no directive covers is listed in `uncited_tables` unless a
// `<!-- not-from-csv: why -->` comment stands right before it (a table of settings).
//
// Thread safety: none needed (pure functions).
#ifndef UKAI_TESTS_DOCS_REPORT_NUMBERS_H_
#define UKAI_TESTS_DOCS_REPORT_NUMBERS_H_

#include <filesystem>
#include <string>
#include <vector>

namespace ukai::docs {

struct NumberProblem {
  int line = 0;         // 1-based line of the Markdown file
  std::string message;  // what is wrong, with the cited and the computed value
};

struct NumberCheck {
  int inline_citations = 0;  // links checked
  int table_cells = 0;       // table cells checked
  std::vector<NumberProblem> problems;
  // 1-based lines of tables with a digit in a body cell that neither a csv-table directive
  // nor a `<!-- not-from-csv: why -->` comment right before them covers (a REPORT beside
  // results CSVs may have none: its tables of figures must cite them).
  std::vector<int> uncited_tables;
};

// Checks every citation of the Markdown file at `path` (CSV paths are relative to its
// directory).
NumberCheck CheckReportNumbers(const std::filesystem::path& path);

// The same on `text`, as if it were a file in `dir`.
NumberCheck CheckReportNumbersText(const std::string& text, const std::filesystem::path& dir);

}  // namespace ukai::docs

#endif  // UKAI_TESTS_DOCS_REPORT_NUMBERS_H_
