// Result writers: one record (an ordered list of named fields) per result point, written as
// an aligned text table, CSV (header + rows) or JSON Lines (one object per line). Writers
// stream: each record is written, and the stream flushed, as soon as it is given, so results
// computed before a failure are never lost.
//
// The first record fixes the columns of the table and the CSV header; a later CSV record
// with other field names is refused (kInvalidArgument), a table shows a missing field as
// "-", and JSON objects carry their own names.
//
// Rendering: doubles in CSV use the shortest text that reads back to the same value; in the
// table they are rounded for reading (5 significant digits, no exponent below 1e5). Integer
// lists (a radix per dimension) print as "10x10" in the table and CSV and as a JSON array;
// lists of doubles (per-rank times) as "1.5;2.25" and as a JSON array; JsonText as its text
// and as the JSON value it holds.
// Booleans print as true/false. A field without a value (kNoValue: e.g. a latency when no
// message was measured) is null in JSON, an empty cell in CSV and "-" in the table.
//
// Ownership: a writer does not own the ostream, which must outlive it.
// Thread safety: none; one writer per thread.
#ifndef UKAI_CORE_OUTPUT_WRITER_H_
#define UKAI_CORE_OUTPUT_WRITER_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"

namespace ukai::output {

// No value (output::kNoValue): JSON null, an empty CSV cell, "-" in the table.
using NoValue = std::monostate;
inline constexpr NoValue kNoValue{};

// A nested JSON value written as is (e.g. latency by packet type as an object): parsed
// and embedded by the JSON writer, shown as its text in the table and CSV. The producer
// makes it valid JSON.
struct JsonText {
  std::string text;
};

using Field = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, NoValue,
                           std::vector<double>, JsonText>;

// An ordered list of named fields.
class Record {
 public:
  // Appends a field: any integer becomes int64_t, any floating type double, text
  // std::string; bools, integer lists and kNoValue stay what they are.
  template <typename T>
  Record& Add(std::string name, T value) {
    if constexpr (std::is_same_v<T, bool>) {
      fields_.emplace_back(std::move(name), Field(value));
    } else if constexpr (std::is_integral_v<T>) {
      fields_.emplace_back(std::move(name), Field(static_cast<int64_t>(value)));
    } else if constexpr (std::is_floating_point_v<T>) {
      fields_.emplace_back(std::move(name), Field(static_cast<double>(value)));
    } else if constexpr (std::is_convertible_v<T, std::string>) {
      fields_.emplace_back(std::move(name), Field(std::string(std::move(value))));
    } else {
      fields_.emplace_back(std::move(name), Field(std::move(value)));
    }
    return *this;
  }
  const std::vector<std::pair<std::string, Field>>& fields() const { return fields_; }
  // The field called `name`, or nullptr.
  const Field* Find(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, Field>> fields_;
};

// kBooksim: BookSim2's summary lines (the flit-level model's writer: sim/experiment/
// booksim_summary.h).
enum class Format { kTable, kCsv, kJson, kBooksim };

// "table", "csv", "json", "booksim" -> Format; kInvalidArgument naming the allowed ones otherwise.
Result<Format> ParseFormat(std::string_view name);

// A column of the text table: the record field shown, its header (defaults to the field
// name) and a minimum width. The width is fixed when the first record arrives (the widest of
// header, min_width and that record's text) so rows print as they come; a later, wider
// value pushes its row out of line, so give min_width for columns whose text varies.
struct TableColumn {
  std::string field;
  std::string header;
  size_t min_width = 0;
};

class RecordWriter {
 public:
  virtual ~RecordWriter() = default;
  virtual Status Write(const Record& record) = 0;
};

// Text table: a header line, then one aligned row per record (numbers right-aligned,
// text left-aligned). `columns` selects and names the fields shown; empty shows every field
// under its own name. A field missing from a record shows as "-".
std::unique_ptr<RecordWriter> MakeTableWriter(std::ostream* out, std::vector<TableColumn> columns);
// CSV (RFC 4180 quoting): a header of field names, then one row per record.
std::unique_ptr<RecordWriter> MakeCsvWriter(std::ostream* out);
// JSON Lines: one object per record, fields in record order.
std::unique_ptr<RecordWriter> MakeJsonWriter(std::ostream* out);

// Text of one field as the table (`for_table`) or CSV shows it, without CSV quoting.
std::string FieldText(const Field& f, bool for_table);

}  // namespace ukai::output

#endif  // UKAI_CORE_OUTPUT_WRITER_H_
